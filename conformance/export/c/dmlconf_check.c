/* dmlconf_check: judge one output buffer of an exported case from the command line.
 *
 *   dmlconf_check CASE_DIR OUTPUT.bin [--fill N]
 *   dmlconf_check FILE.expect OUTPUT.bin [--fill N]
 *   dmlconf_check relation-K.expect LEFT.bin RIGHT.bin
 *
 * CASE_DIR: a single-call case's folder (its call.OutputTensor.expect is judged); name the
 * .expect file itself for the other outputs and for relations. OUTPUT.bin: the bytes of the
 * bound output buffer after the dispatch (TotalTensorSizeInBytes of them). --fill N: the byte
 * the buffer was filled with before the dispatch (default: the file's first fill), to report
 * padding bytes written (legal, information only).
 *
 * Prints the verdict and its message; the exit status is the verdict: 0 PASS,
 * 1 QUALITY_WARNING, 2 FAIL, 3 ERROR (a problem with the files or the arguments).
 *
 * Build: cc -std=c99 -O2 -o dmlconf_check dmlconf_check.c dmlconf_vectors.c
 */
#include "dmlconf_vectors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ends_with(const char *text, const char *end)
{
    size_t n = strlen(text), m = strlen(end);
    return n >= m && strcmp(text + n - m, end) == 0;
}

int main(int argc, char **argv)
{
    char error[512], path[4096];
    const char *files[2] = {NULL, NULL};
    int nfiles = 0, fill = -2, i;
    dmlconf_expectation *e;
    dmlconf_verdict v;
    void *buffers[2] = {NULL, NULL};
    size_t sizes[2] = {0, 0};
    for (i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--fill") == 0 && i + 1 < argc)
            fill = (int)strtol(argv[++i], NULL, 0) & 0xff;
        else if (nfiles < 2)
            files[nfiles++] = argv[i];
        else
            nfiles = 3;
    }
    if (argc < 3 || nfiles < 1 || nfiles > 2) {
        fprintf(stderr, "usage: dmlconf_check CASE_DIR|FILE.expect OUTPUT.bin [--fill N]\n"
                        "       dmlconf_check relation-K.expect LEFT.bin RIGHT.bin\n");
        return DMLCONF_ERROR;
    }
    if ((size_t)snprintf(path, sizeof path, ends_with(argv[1], ".expect") ? "%s"
                         : "%s/call.OutputTensor.expect", argv[1]) >= sizeof path) {
        fprintf(stderr, "dmlconf_check: %s: the path is too long\n", argv[1]);
        return DMLCONF_ERROR;
    }
    e = dmlconf_load(path, error, sizeof error);
    if (!e) {
        fprintf(stderr, "dmlconf_check: %s\n", error);
        return DMLCONF_ERROR;
    }
    if (nfiles != (dmlconf_is_relation(e) ? 2 : 1)) {
        fprintf(stderr, "dmlconf_check: %s %s\n", path,
                dmlconf_is_relation(e) ? "is a relation: give LEFT.bin and RIGHT.bin"
                                       : "is an output's: give one OUTPUT.bin");
        dmlconf_free(e);
        return DMLCONF_ERROR;
    }
    for (i = 0; i < nfiles; ++i) {
        buffers[i] = dmlconf_read_file(files[i], &sizes[i], error, sizeof error);
        if (!buffers[i]) {
            fprintf(stderr, "dmlconf_check: %s\n", error);
            free(buffers[0]);
            dmlconf_free(e);
            return DMLCONF_ERROR;
        }
    }
    if (dmlconf_is_relation(e))
        dmlconf_judge_relation(e, buffers[0], sizes[0], buffers[1], sizes[1], &v);
    else
        dmlconf_judge(e, buffers[0], sizes[0], fill == -2 ? dmlconf_fill(e, 0) : fill, &v);
    printf("%s: %s\n", dmlconf_status_name(v.status), v.message);
    if (v.padding_written)
        printf("note: %llu padding %s written inside TotalTensorSizeInBytes (legal: "
               "DirectML may overwrite an output's padding)\n",
               (unsigned long long)v.padding_written, v.padding_written == 1 ? "byte" : "bytes");
    free(buffers[0]);
    free(buffers[1]);
    dmlconf_free(e);
    return (int)v.status;
}
