/* fuzz_harness.c: the persistent runner of the checker's fuzz (fuzz.py, `python -m
 * conformance.export.c.fuzz`). Not part of an export.
 *
 * It is compiled with the checker's own sources, the checker's main renamed (-Dmain=
 * dmlconf_check_main), under AddressSanitizer and UndefinedBehaviorSanitizer, and runs that
 * command line once per line of a manifest, in one process, so that thousands of inputs are
 * judged per second instead of one process each:
 *
 *   fuzz_harness MANIFEST STATUS SECONDS
 *
 * MANIFEST: one run per line, its arguments (after the program's name) separated by tabs.
 * STATUS: the harness writes each run's exit status there, one character ('0' + status),
 * flushed before the next run starts: a run that crashes the process is the one after the last
 * status written. SECONDS: an alarm per run; a run that takes longer ends the process with
 * SIGALRM (a slow input, reported apart from crashes). The checker's standard output is thrown
 * away; its standard error (and the sanitizers' reports) is left where it was.
 */
#undef main
#define _POSIX_C_SOURCE 200112L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ARGS 16

int dmlconf_check_main(int argc, char **argv);

int main(int argc, char **argv)
{
    static char line[1 << 16];
    static char program[] = "dmlconf_check";
    char *args[MAX_ARGS + 1];
    FILE *manifest, *status;
    unsigned seconds;
    if (argc != 4) {
        fprintf(stderr, "usage: fuzz_harness MANIFEST STATUS SECONDS\n");
        return 2;
    }
    seconds = (unsigned)strtoul(argv[3], NULL, 10);
    manifest = fopen(argv[1], "r");
    status = fopen(argv[2], "w");
    if (!manifest || !status || !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "fuzz_harness: cannot open %s, %s or /dev/null\n", argv[1], argv[2]);
        return 2;
    }
    while (fgets(line, sizeof line, manifest)) {
        int n = 0, rc;
        char *p = line, *tab;
        line[strcspn(line, "\n")] = 0;
        args[n++] = program;
        while (n < MAX_ARGS) {
            args[n++] = p;
            tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = 0;
            p = tab + 1;
        }
        args[n] = NULL;
        alarm(seconds);
        rc = dmlconf_check_main(n, args);
        alarm(0);
        fputc(rc >= 0 && rc <= 9 ? '0' + rc : 'x', status);
        fflush(status);
    }
    fclose(manifest);
    fclose(status);
    return 0;
}
