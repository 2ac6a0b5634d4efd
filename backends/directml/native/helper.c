/* dmlshim-helper.exe: the shim (dmlshim.c) as a long-lived Windows process, for the Windows
 * DirectML.dll under Wine. Built with mingw-w64 (`dmlconf directml setup`), started once per
 * worker by backends/directml/helper.py, and fed calls through its standard input and output.
 *
 * The protocol (all numbers little-endian; helper.py packs and reads it): a request is
 *     uint32 magic DMLSHIM_REQUEST, uint32 command, uint64 size, then size bytes;
 * the answer is
 *     uint32 magic DMLSHIM_ANSWER, int32 rc, uint64 size, then size bytes.
 * Commands:
 *   ABI     ()                      rc = DMLSHIM_ABI_VERSION
 *   OPEN    ()                      rc = dmlshim_open; dmlshim_status
 *   LEVEL   uint32 n, uint32[n]     rc = HRESULT; uint32 highest
 *   TYPE    uint32 data type        rc = HRESULT; int32 supported
 *   RUN     the call (below)        rc = dmlshim_run; dmlshim_status, then after a successful
 *                                   execution every buffer (input, output) as it came back
 *   CLOSE   ()                      rc = 0 (dmlshim_close)
 * The call: uint32 mode, operator_type, block_size, order, interpolation_mode, dimension_count,
 * execution_flags, graph, rounding_direction, antialiased, and three presence flags (scales,
 * input_pixel_offsets, output_pixel_offsets); per tensor (input, output): uint32 data_type,
 * flags, dimension_count, guaranteed_base_offset_alignment, has_strides, uint64
 * total_tensor_size_in_bytes, uint32 sizes[dimension_count], uint32 strides[dimension_count]
 * when has_strides; then float scales[dimension_count] and the offsets, each when present;
 * then for DMLSHIM_MODE_EXECUTE the input's and the output's bytes.
 *
 * Standard output carries the protocol only: the C runtime's stdout is pointed at stderr before
 * anything else runs, so that nothing DirectML, vkd3d-proton or Wine prints can break a frame.
 * The helper exits when its standard input ends (the backend's process is gone). */
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "dmlshim.h"

int dmlshim_abi_version(void);
int dmlshim_open(dmlshim_status *st);
void dmlshim_close(void);
int32_t dmlshim_max_feature_level(const uint32_t *levels, uint32_t count, uint32_t *highest);
int32_t dmlshim_data_type_supported(uint32_t data_type, int32_t *supported);
int dmlshim_run(const dmlshim_call *c, void *const *host, uint32_t mode, dmlshim_status *st);

static HANDLE in, out;

static int read_all(void *p, uint64_t size)
{
    unsigned char *b = p;
    while (size) {
        DWORD chunk = size > (1u << 30) ? (1u << 30) : (DWORD)size, got = 0;
        if (!ReadFile(in, b, chunk, &got, NULL) || !got)
            return -1;
        b += got;
        size -= got;
    }
    return 0;
}

static int write_all(const void *p, uint64_t size)
{
    const unsigned char *b = p;
    while (size) {
        DWORD chunk = size > (1u << 30) ? (1u << 30) : (DWORD)size, put = 0;
        if (!WriteFile(out, b, chunk, &put, NULL) || !put)
            return -1;
        b += put;
        size -= put;
    }
    return 0;
}

static int answer(int32_t rc, const void *a, uint64_t a_size, const void *b, uint64_t b_size,
                  const void *c, uint64_t c_size)
{
    struct { uint32_t magic; int32_t rc; uint64_t size; } head = {DMLSHIM_ANSWER, rc, a_size + b_size + c_size};
    return write_all(&head, sizeof head) || write_all(a, a_size) || write_all(b, b_size) || write_all(c, c_size);
}

/* A cursor over a request's bytes: every read is bounds-checked. */
struct cursor { unsigned char *p; uint64_t left; int bad; };

static void *take(struct cursor *k, uint64_t size)
{
    void *p = k->p;
    if (k->bad || size > k->left) {
        k->bad = 1;
        return NULL;
    }
    k->p += size;
    k->left -= size;
    return p;
}

static uint32_t u32(struct cursor *k)
{
    uint32_t v = 0;
    void *p = take(k, 4);
    if (p)
        memcpy(&v, p, 4);
    return v;
}

static void tensor(struct cursor *k, dmlshim_tensor *t)
{
    void *total;
    uint32_t has_strides;
    t->data_type = u32(k);
    t->flags = u32(k);
    t->dimension_count = u32(k);
    t->guaranteed_base_offset_alignment = u32(k);
    has_strides = u32(k);
    if ((total = take(k, 8)))
        memcpy(&t->total_tensor_size_in_bytes, total, 8);
    t->sizes = take(k, (uint64_t)t->dimension_count * 4);
    t->strides = has_strides ? take(k, (uint64_t)t->dimension_count * 4) : NULL;
}

/* RUN: the call from its bytes (pointers into them), dmlshim_run, the answer. */
static int run(unsigned char *body, uint64_t size)
{
    struct cursor k = {body, size, 0};
    dmlshim_call c;
    dmlshim_status st;
    uint32_t mode, present[3];
    const float **floats[3] = {&c.scales, &c.input_pixel_offsets, &c.output_pixel_offsets};
    void *host[2] = {NULL, NULL};
    int rc;

    memset(&c, 0, sizeof c);
    memset(&st, 0, sizeof st);
    st.guard_tensor = -1;
    mode = u32(&k);
    c.operator_type = u32(&k);
    c.block_size = u32(&k);
    c.order = u32(&k);
    c.interpolation_mode = u32(&k);
    c.dimension_count = u32(&k);
    c.execution_flags = u32(&k);
    c.graph = u32(&k);
    c.rounding_direction = u32(&k);
    c.antialiased = u32(&k);
    for (int i = 0; i < 3; ++i)
        present[i] = u32(&k);
    tensor(&k, &c.input);
    tensor(&k, &c.output);
    for (int i = 0; i < 3; ++i)
        *floats[i] = present[i] ? take(&k, (uint64_t)c.dimension_count * 4) : NULL;
    if (mode == DMLSHIM_MODE_EXECUTE) {
        host[0] = take(&k, c.input.total_tensor_size_in_bytes);
        host[1] = take(&k, c.output.total_tensor_size_in_bytes);
    }
    if (k.bad || k.left) {
        st.stage = DMLSHIM_STAGE_NONE;
        snprintf(st.message, sizeof st.message, "dmlshim-helper: a RUN request of %llu bytes does not hold "
                 "the call it describes", (unsigned long long)size);
        return answer(DMLSHIM_BAD_CALL, &st, sizeof st, NULL, 0, NULL, 0);
    }
    rc = dmlshim_run(&c, host, mode, &st);
    if (rc == DMLSHIM_OK && mode == DMLSHIM_MODE_EXECUTE)
        return answer(rc, &st, sizeof st, host[0], c.input.total_tensor_size_in_bytes,
                      host[1], c.output.total_tensor_size_in_bytes);
    return answer(rc, &st, sizeof st, NULL, 0, NULL, 0);
}

int main(void)
{
    in = GetStdHandle(STD_INPUT_HANDLE);
    /* a handle of our own: _dup2 below closes the one behind the C runtime's stdout */
    if (!DuplicateHandle(GetCurrentProcess(), GetStdHandle(STD_OUTPUT_HANDLE), GetCurrentProcess(), &out, 0,
                         FALSE, DUPLICATE_SAME_ACCESS)) {
        fprintf(stderr, "dmlshim-helper: cannot duplicate the standard output (%lu)\n", GetLastError());
        return 2;
    }
    /* from here on, printf and Windows' standard output go to stderr: stdout is the protocol's */
    SetStdHandle(STD_OUTPUT_HANDLE, GetStdHandle(STD_ERROR_HANDLE));
    _dup2(_fileno(stderr), _fileno(stdout));
    for (;;) {
        struct { uint32_t magic; uint32_t command; uint64_t size; } head;
        unsigned char *body = NULL;
        int failed = 0;
        if (read_all(&head, sizeof head))
            return 0;                                  /* the backend is gone */
        if (head.magic != DMLSHIM_REQUEST) {
            fprintf(stderr, "dmlshim-helper: a request without the protocol's magic (0x%08x)\n", head.magic);
            return 2;
        }
        if (head.size && (!(body = malloc(head.size)) || read_all(body, head.size))) {
            fprintf(stderr, "dmlshim-helper: cannot read a request of %llu bytes\n", (unsigned long long)head.size);
            return 2;
        }
        switch (head.command) {
        case DMLSHIM_CMD_ABI:
            failed = answer(dmlshim_abi_version(), NULL, 0, NULL, 0, NULL, 0);
            break;
        case DMLSHIM_CMD_OPEN: {
            dmlshim_status st;
            int rc = dmlshim_open(&st);
            failed = answer(rc, &st, sizeof st, NULL, 0, NULL, 0);
            break;
        }
        case DMLSHIM_CMD_LEVEL: {
            uint32_t count = 0, highest = 0;
            int32_t hr = (int32_t)0x80070057;          /* E_INVALIDARG: a malformed request */
            if (head.size >= 4) {
                memcpy(&count, body, 4);
                if (head.size == 4 + (uint64_t)count * 4)
                    hr = dmlshim_max_feature_level((const uint32_t *)(body + 4), count, &highest);
            }
            failed = answer(hr, &highest, 4, NULL, 0, NULL, 0);
            break;
        }
        case DMLSHIM_CMD_TYPE: {
            uint32_t data_type = 0;
            int32_t supported = 0, hr = (int32_t)0x80070057;
            if (head.size == 4) {
                memcpy(&data_type, body, 4);
                hr = dmlshim_data_type_supported(data_type, &supported);
            }
            failed = answer(hr, &supported, 4, NULL, 0, NULL, 0);
            break;
        }
        case DMLSHIM_CMD_RUN:
            failed = run(body, head.size);
            break;
        case DMLSHIM_CMD_CLOSE:
            dmlshim_close();
            failed = answer(0, NULL, 0, NULL, 0, NULL, 0);
            break;
        default:
            fprintf(stderr, "dmlshim-helper: unknown command %u\n", head.command);
            return 2;
        }
        free(body);
        if (failed)
            return 0;                                  /* the backend stopped reading */
    }
}
