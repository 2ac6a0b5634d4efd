/* dump the LLVM IR of a DXIL/DXBC container with dxil-spirv's C API */
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include "dxil_spirv_c.h"
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "rb"); if (!f) return 1;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    void *d = malloc(n); fread(d, 1, n, f); fclose(f);
    dxil_spv_parsed_blob blob;
    if (dxil_spv_parse_dxil_blob(d, n, &blob) != DXIL_SPV_SUCCESS) { fprintf(stderr, "parse failed\n"); return 2; }
    dxil_spv_parsed_blob_dump_llvm_ir(blob);
    dxil_spv_parsed_blob_free(blob);
    return 0;
}
