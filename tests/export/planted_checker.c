/* planted_checker.c: a deliberately broken checker, for tests/export/test_export_checker_fuzz.py
 * (the fuzz of conformance/export/c must find its bugs, or it is a no-op). It takes
 * dmlconf_check's command line (FILE.expect BUFFER...) and reads the first tensor of the .expect
 * file, with two planted bugs:
 *
 *   - the extent arithmetic of dmlconf_vectors.c before issue 24's fix, unchecked: Sizes and
 *     strides whose (sum of (size - 1) * stride + 1) * element size wraps past 2^64 pass the
 *     check against TotalTensorSizeInBytes, and the second element of each dimension is then
 *     read far outside the buffer (AddressSanitizer);
 *   - a signed int overflow on a name length whose low 31 bits are all ones
 *     (UndefinedBehaviorSanitizer).
 *
 * It frees what it allocates and returns from main, as the fuzz's in-process runs need.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long length;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (length = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0
        && (data = (unsigned char *)malloc((size_t)length + 1)) != NULL)
        *size = fread(data, 1, (size_t)length, f);
    fclose(f);
    return data;
}

static uint64_t le(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    unsigned i;
    for (i = 0; i < bytes; ++i)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static unsigned element_size(uint64_t data_type)
{
    static const unsigned sizes[] = {0, 4, 2, 4, 2, 1, 4, 2, 1, 8, 8, 8};
    return data_type < 12 ? sizes[data_type] : 0;
}

int main(int argc, char **argv)
{
    size_t n = 0, m = 0;
    unsigned char *e, *b;
    int status = 3;
    if (argc < 3)
        return 3;
    e = slurp(argv[1], &n);
    b = slurp(argv[2], &m);
    if (e && b && n >= 16 && memcmp(e, "DMLCEXP2", 8) == 0) {
        uint64_t name = le(e + 12, 4);
        int shown = (int)(name & 0x7fffffffu);
        int width = shown + 1; /* planted: overflows where shown is INT_MAX */
        if (width > 0 && name <= n - 16 && n - 16 - name >= 16) {
            const unsigned char *t = e + 16 + name;
            uint64_t dims = le(t + 4, 4), total = le(t + 8, 8), last = 0, d;
            unsigned size = element_size(le(t, 4));
            if (size && dims >= 1 && dims <= 8 && n - 16 - name >= 16 + 8 * dims) {
                for (d = 0; d < dims; ++d) /* planted: unchecked, as before the fix */
                    last += (le(t + 16 + 4 * d, 4) - 1) * le(t + 16 + 4 * (dims + d), 4);
                if ((last + 1) * size <= total && total <= m) {
                    status = 0;
                    for (d = 0; d < dims; ++d)
                        if (le(t + 16 + 4 * d, 4) > 1)
                            status |= b[le(t + 16 + 4 * (dims + d), 4) * size] == 0xee;
                }
            }
        }
    }
    free(e);
    free(b);
    return status;
}
