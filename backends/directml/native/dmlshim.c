/* The directml backend's native shim: real DirectML on a D3D12 device from vkd3d-proton (D3D12
 * on Vulkan), on Mesa's lavapipe (Vulkan on the CPU) or another Vulkan driver. Two builds of one
 * source: libdmlshim.so (Linux's libdirectml.so, loaded through ctypes) and, compiled with
 * mingw-w64 (_WIN32) into dmlshim-helper.exe with helper.c, the Windows DirectML.dll under Wine.
 *
 * dmlshim_open   creates the D3D12 device, queue, command list and fence, and the DirectML device
 *                (DMLCreateDevice1, IDMLDevice1 for the graph path).
 * dmlshim_*level CheckFeatureSupport: the highest feature level, the data types the device takes.
 * dmlshim_run    one operator call (dmlshim.h): CreateOperator, CompileOperator (or CompileGraph
 *                of a one-node graph) with the call's DML_EXECUTION_FLAGS, the operator
 *                initializer, buffers that hold exactly the bound bytes between guard regions,
 *                one dispatch, and every buffer read back. E_INVALIDARG (or
 *                DXGI_ERROR_UNSUPPORTED) from creation or compilation is a rejection; anything
 *                else is a failure with its HRESULT, the stage and the D3D12 layer's log lines.
 *
 * D3D12 is called through vkd3d-proton's own headers on Linux (System V calls; aggregate returns
 * through an explicit pointer, WIDL_C_INLINE_WRAPPERS), mingw-w64's d3d12.h on Windows; DirectML
 * through dml_api.h. Single-threaded. */
#define COBJMACROS
#ifdef _WIN32
#include <windows.h>
#include <initguid.h>
/* d3d12.h's wrappers are `static FORCEINLINE`, and mingw-w64's FORCEINLINE is `extern` in C */
#undef FORCEINLINE
#define FORCEINLINE inline __attribute__((always_inline))
#define WIDL_C_INLINE_WRAPPERS
#include <d3d12.h>
#else
#define WIDL_C_INLINE_WRAPPERS
#define INITGUID
#include <vkd3d_windows.h>
#include <vkd3d_d3d12.h>
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dml_api.h"
#include "dmlshim.h"

#ifdef _WIN32
#define EXPORT                 /* linked into dmlshim-helper.exe */
#else
#include "aggregate_returns.h"
#define EXPORT __attribute__((visibility("default")))
/* D3D12CreateDevice from libd3d12.so (the forwarder, symbol version VER_1) */
HRESULT D3D12CreateDevice(IUnknown *adapter, D3D_FEATURE_LEVEL level, REFIID iid, void **device);
#endif
#define E_INVALIDARG_ ((int32_t)0x80070057)
#define DXGI_ERROR_UNSUPPORTED_ ((int32_t)0x887A0004)
#define GUARD_BYTE 0xA5
#define GUARD_AFTER 256u
#define PLACEMENT 256u           /* D3D12 buffer placement; the binding offset is a multiple */

static ID3D12Device *dev;
static ID3D12CommandQueue *queue;
static ID3D12CommandAllocator *alloc;
static ID3D12GraphicsCommandList *list;
static ID3D12Fence *fence;
static UINT64 fence_value;
static IDMLDevice *dml;               /* an IDMLDevice1 */
static IDMLCommandRecorder *recorder;
static int broken;                    /* the device was removed: every later call fails */
static ID3D12DescriptorHeap *shared_heap;  /* kept between calls: creating one costs vkd3d-proton ~0.5 s */
static UINT heap_size;

/* The operator compiled by the last call, reused when the next call is the same
 * (create_operator compiles, execute then runs what it compiled). */
static unsigned char *cached_key;
static size_t cached_key_size;
static IDMLCompiledOperator *cached_op;

static long log_offset;
static void release_cached(void);               /* how much of $VKD3D_LOG_FILE has been reported */

static double now(void);
/* DMLSHIM_TIMING=1: the time each step of a call takes, on stderr */
static void mark(const char *what)
{
    static double last;
    static int timing = -1;
    double t;
    if (timing < 0)
        timing = getenv("DMLSHIM_TIMING") != NULL;
    if (!timing)
        return;
    t = now();
    fprintf(stderr, "[dmlshim] %-28s %8.3f ms\n", what, last ? (t - last) * 1e3 : 0.0);
    last = t;
}

static double now(void)
{
#ifdef _WIN32
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (double)count.QuadPart / (double)frequency.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
#endif
}

static void say(dmlshim_status *st, const char *fmt, ...)
{
    size_t used = strlen(st->message);
    va_list ap;
    if (used + 1 >= sizeof st->message)
        return;
    va_start(ap, fmt);
    vsnprintf(st->message + used, sizeof st->message - used, fmt, ap);
    va_end(ap);
}

/* Append the D3D12 layer's log lines written since the last call (errors and warnings). */
static void append_log(dmlshim_status *st)
{
    const char *path = getenv("VKD3D_LOG_FILE");
    FILE *f;
    char line[512];
    int kept = 0;
    if (!path || !(f = fopen(path, "r")))
        return;
    if (fseek(f, log_offset, SEEK_SET) == 0) {
        while (fgets(line, sizeof line, f)) {
            if (kept++ == 0)
                say(st, "%s[vkd3d-proton log] ", st->message[0] ? " | " : "");
            line[strcspn(line, "\n")] = ' ';
            say(st, "%s", line);
        }
        log_offset = ftell(f);
    }
    fclose(f);
}

static void skip_log(void)
{
    const char *path = getenv("VKD3D_LOG_FILE");
    FILE *f;
    if (path && (f = fopen(path, "r"))) {
        fseek(f, 0, SEEK_END);
        log_offset = ftell(f);
        fclose(f);
    }
}

static int fail(dmlshim_status *st, uint32_t stage, HRESULT hr, const char *what)
{
    st->stage = stage;
    st->hr = hr;
    say(st, "%s failed (HRESULT 0x%08x)", what, (unsigned)hr);
    if (dev) {
        HRESULT removed = ID3D12Device_GetDeviceRemovedReason(dev);
        if (FAILED(removed)) {
            st->removed_reason = removed;
            broken = 1;
            say(st, "; the D3D12 device was removed (0x%08x)", (unsigned)removed);
            append_log(st);
            return DMLSHIM_DEVICE_REMOVED;
        }
    }
    append_log(st);
    return DMLSHIM_FAILED;
}

/* -- resources -------------------------------------------------------------------------------- */
static HRESULT make_buffer(D3D12_HEAP_TYPE type, UINT64 size, D3D12_RESOURCE_FLAGS flags,
                           D3D12_RESOURCE_STATES state, ID3D12Resource **out)
{
    D3D12_HEAP_PROPERTIES hp = {0};
    D3D12_RESOURCE_DESC rd = {0};
    hp.Type = type;
    rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    rd.Width = size ? size : 4;
    rd.Height = 1;
    rd.DepthOrArraySize = 1;
    rd.MipLevels = 1;
    rd.Format = DXGI_FORMAT_UNKNOWN;
    rd.SampleDesc.Count = 1;
    rd.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    rd.Flags = flags;
    return ID3D12Device_CreateCommittedResource(dev, &hp, D3D12_HEAP_FLAG_NONE, &rd, state, NULL,
                                                &IID_ID3D12Resource, (void **)out);
}

EXPORT int dmlshim_abi_version(void) { return DMLSHIM_ABI_VERSION; }

EXPORT int dmlshim_open(dmlshim_status *st)
{
    D3D12_COMMAND_QUEUE_DESC qd = {D3D12_COMMAND_LIST_TYPE_DIRECT, 0, D3D12_COMMAND_QUEUE_FLAG_NONE, 0};
    HRESULT hr;
    memset(st, 0, sizeof *st);
    st->guard_tensor = -1;
    if (dml)
        return DMLSHIM_OK;
    if (FAILED(hr = D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&dev)))
        return dev = NULL, fail(st, DMLSHIM_STAGE_DEVICE, hr, "D3D12CreateDevice (vkd3d-proton)");
    if (FAILED(hr = ID3D12Device_CreateCommandQueue(dev, &qd, &IID_ID3D12CommandQueue, (void **)&queue)))
        return fail(st, DMLSHIM_STAGE_DEVICE, hr, "ID3D12Device::CreateCommandQueue");
    if (FAILED(hr = ID3D12Device_CreateCommandAllocator(dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
                                                        &IID_ID3D12CommandAllocator, (void **)&alloc)))
        return fail(st, DMLSHIM_STAGE_DEVICE, hr, "ID3D12Device::CreateCommandAllocator");
    if (FAILED(hr = ID3D12Device_CreateCommandList(dev, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, NULL,
                                                   &IID_ID3D12GraphicsCommandList, (void **)&list)))
        return fail(st, DMLSHIM_STAGE_DEVICE, hr, "ID3D12Device::CreateCommandList");
    ID3D12GraphicsCommandList_Close(list);
    if (FAILED(hr = ID3D12Device_CreateFence(dev, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **)&fence)))
        return fail(st, DMLSHIM_STAGE_DEVICE, hr, "ID3D12Device::CreateFence");
#ifndef _WIN32
    {   /* one object of each type whose struct-returning methods libdirectml.so may call */
        ID3D12Resource *resource = NULL;
        ID3D12Heap *heap = NULL;
        ID3D12DescriptorHeap *descriptors = NULL;
        D3D12_HEAP_DESC hd = {0};
        D3D12_DESCRIPTOR_HEAP_DESC dd = {D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, 1, D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0};
        char err[256] = "";
        hd.SizeInBytes = 65536;
        hd.Properties.Type = D3D12_HEAP_TYPE_DEFAULT;
        hd.Flags = D3D12_HEAP_FLAG_ALLOW_ONLY_BUFFERS;
        if (FAILED(hr = make_buffer(D3D12_HEAP_TYPE_DEFAULT, 256, D3D12_RESOURCE_FLAG_NONE, D3D12_RESOURCE_STATE_COMMON, &resource))
            || FAILED(hr = ID3D12Device_CreateHeap(dev, &hd, &IID_ID3D12Heap, (void **)&heap))
            || FAILED(hr = ID3D12Device_CreateDescriptorHeap(dev, &dd, &IID_ID3D12DescriptorHeap, (void **)&descriptors)))
            return fail(st, DMLSHIM_STAGE_DEVICE, hr, "creating the sample objects");
        if (adapt_aggregate_returns(dev, resource, heap, descriptors, queue, err, sizeof err)) {
            st->stage = DMLSHIM_STAGE_DEVICE;
            say(st, "adapting vkd3d-proton's struct-returning methods failed: %s", err);
            return DMLSHIM_FAILED;
        }
        ID3D12Resource_Release(resource);
        ID3D12Heap_Release(heap);
        ID3D12DescriptorHeap_Release(descriptors);
    }
#endif
    if (FAILED(hr = DMLCreateDevice1(dev, 0 /* DML_CREATE_DEVICE_FLAG_NONE */, 0x1000 /* 1_0 */,
                                     &IID_IDMLDevice1, (void **)&dml))) {
        dml = NULL;
        return fail(st, DMLSHIM_STAGE_DEVICE, hr, "DMLCreateDevice1");
    }
    if (FAILED(hr = dml->v->CreateCommandRecorder(dml, &IID_IDMLCommandRecorder, (void **)&recorder)))
        return fail(st, DMLSHIM_STAGE_DEVICE, hr, "IDMLDevice::CreateCommandRecorder");
    return DMLSHIM_OK;
}

/* Release everything dmlshim_open made (after a device removal: the next open starts afresh). */
EXPORT void dmlshim_close(void)
{
    release_cached();
    if (shared_heap) ID3D12DescriptorHeap_Release(shared_heap);
    if (recorder) recorder->v->Release(recorder);
    if (dml) dml->v->Release(dml);
    if (fence) ID3D12Fence_Release(fence);
    if (list) ID3D12GraphicsCommandList_Release(list);
    if (alloc) ID3D12CommandAllocator_Release(alloc);
    if (queue) ID3D12CommandQueue_Release(queue);
    if (dev) ID3D12Device_Release(dev);
    shared_heap = NULL;
    heap_size = 0;
    recorder = NULL;
    dml = NULL;
    fence = NULL;
    list = NULL;
    alloc = NULL;
    queue = NULL;
    dev = NULL;
    fence_value = 0;
    broken = 0;
}

/* The highest of the requested feature levels DirectML supports on this device. */
EXPORT int32_t dmlshim_max_feature_level(const uint32_t *levels, uint32_t count, uint32_t *highest)
{
    DML_FEATURE_QUERY_FEATURE_LEVELS q = {count, levels};
    DML_FEATURE_DATA_FEATURE_LEVELS d = {0};
    HRESULT hr;
    if (!dml)
        return (int32_t)0x8000FFFF;  /* E_UNEXPECTED: not opened */
    hr = dml->v->CheckFeatureSupport(dml, DML_FEATURE_FEATURE_LEVELS, sizeof q, &q, sizeof d, &d);
    *highest = d.MaxSupportedFeatureLevel;
    return hr;
}

/* Whether the device takes tensors of a DML_TENSOR_DATA_TYPE. */
EXPORT int32_t dmlshim_data_type_supported(uint32_t data_type, int32_t *supported)
{
    DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT q = {data_type};
    DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT d = {0};
    HRESULT hr;
    if (!dml)
        return (int32_t)0x8000FFFF;
    hr = dml->v->CheckFeatureSupport(dml, DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT, sizeof q, &q, sizeof d, &d);
    *supported = d.IsSupported;
    return hr;
}

/* -- the operator desc ------------------------------------------------------------------------ */
struct built {
    DML_BUFFER_TENSOR_DESC buffer[2];
    DML_TENSOR_DESC tensor[2];
    union { DML_DEPTH_SPACE_DESC ds; DML_DEPTH_SPACE1_DESC ds1; DML_RESAMPLE_DESC rs; DML_RESAMPLE1_DESC rs1;
            DML_RESAMPLE2_DESC rs2; DML_RESAMPLE3_DESC rs3; } op;
    DML_OPERATOR_DESC desc;
};

static int build_desc(const dmlshim_call *c, struct built *b, dmlshim_status *st)
{
    const dmlshim_tensor *t[2] = {&c->input, &c->output};
    for (int i = 0; i < 2; ++i) {
        b->buffer[i] = (DML_BUFFER_TENSOR_DESC){t[i]->data_type, t[i]->flags, t[i]->dimension_count, t[i]->sizes,
                                                t[i]->strides, t[i]->total_tensor_size_in_bytes,
                                                t[i]->guaranteed_base_offset_alignment};
        b->tensor[i] = (DML_TENSOR_DESC){DML_TENSOR_TYPE_BUFFER, &b->buffer[i]};
    }
    switch (c->operator_type) {
    case DML_OPERATOR_DEPTH_TO_SPACE: case DML_OPERATOR_SPACE_TO_DEPTH:
        b->op.ds = (DML_DEPTH_SPACE_DESC){&b->tensor[0], &b->tensor[1], c->block_size};
        break;
    case DML_OPERATOR_DEPTH_TO_SPACE1: case DML_OPERATOR_SPACE_TO_DEPTH1:
        b->op.ds1 = (DML_DEPTH_SPACE1_DESC){&b->tensor[0], &b->tensor[1], c->block_size, c->order};
        break;
    case DML_OPERATOR_RESAMPLE:
        b->op.rs = (DML_RESAMPLE_DESC){&b->tensor[0], &b->tensor[1], c->interpolation_mode, c->dimension_count, c->scales};
        break;
    case DML_OPERATOR_RESAMPLE1:
        b->op.rs1 = (DML_RESAMPLE1_DESC){&b->tensor[0], &b->tensor[1], c->interpolation_mode, c->dimension_count,
                                         c->scales, c->input_pixel_offsets, c->output_pixel_offsets};
        break;
    case DML_OPERATOR_RESAMPLE2:
        b->op.rs2 = (DML_RESAMPLE2_DESC){&b->tensor[0], &b->tensor[1], c->interpolation_mode, c->rounding_direction,
                                         c->dimension_count, c->scales, c->input_pixel_offsets, c->output_pixel_offsets};
        break;
    case DML_OPERATOR_RESAMPLE3:
        b->op.rs3 = (DML_RESAMPLE3_DESC){&b->tensor[0], &b->tensor[1], c->interpolation_mode, c->rounding_direction,
                                         c->dimension_count, c->scales, c->input_pixel_offsets, c->output_pixel_offsets,
                                         (int32_t)c->antialiased};
        break;
    default:
        st->stage = DMLSHIM_STAGE_CREATE_OPERATOR;
        say(st, "operator type %u is not one the shim describes", c->operator_type);
        return DMLSHIM_BAD_CALL;
    }
    b->desc = (DML_OPERATOR_DESC){c->operator_type, &b->op};
    return DMLSHIM_OK;
}

/* Every number of the call, for the reuse of the last compiled operator. */
static size_t call_key(const dmlshim_call *c, unsigned char *out)
{
    size_t n = 0;
#define PUT(p, size) do { if (out) memcpy(out + n, (p), (size)); n += (size); } while (0)
    PUT(&c->operator_type, 6 * sizeof(uint32_t));
    PUT(&c->graph, 3 * sizeof c->graph);  /* graph, rounding_direction, antialiased */
    if (c->scales) PUT(c->scales, c->dimension_count * sizeof(float));
    if (c->input_pixel_offsets) PUT(c->input_pixel_offsets, c->dimension_count * sizeof(float));
    if (c->output_pixel_offsets) PUT(c->output_pixel_offsets, c->dimension_count * sizeof(float));
    for (int i = 0; i < 2; ++i) {
        const dmlshim_tensor *t = i ? &c->output : &c->input;
        uint32_t has_strides = t->strides != NULL;
        PUT(t, 4 * sizeof(uint32_t));
        PUT(&t->total_tensor_size_in_bytes, sizeof t->total_tensor_size_in_bytes);
        PUT(&has_strides, sizeof has_strides);
        if (t->sizes) PUT(t->sizes, t->dimension_count * sizeof(uint32_t));
        if (t->strides) PUT(t->strides, t->dimension_count * sizeof(uint32_t));
    }
#undef PUT
    return n;
}

static void release_cached(void)
{
    if (cached_op)
        cached_op->v->Release(cached_op);
    cached_op = NULL;
    free(cached_key);
    cached_key = NULL;
    cached_key_size = 0;
}

static int rejected_or_failed(dmlshim_status *st, uint32_t stage, HRESULT hr, const char *what)
{
    if (hr == E_INVALIDARG_ || hr == DXGI_ERROR_UNSUPPORTED_) {
        st->stage = stage;
        st->hr = hr;
        say(st, "%s returned %s", what, hr == E_INVALIDARG_ ? "E_INVALIDARG" : "DXGI_ERROR_UNSUPPORTED");
        append_log(st);
        return stage == DMLSHIM_STAGE_CREATE_OPERATOR ? DMLSHIM_REJECTED_CREATE : DMLSHIM_REJECTED_COMPILE;
    }
    return fail(st, stage, hr, what);
}

static int compile(const dmlshim_call *c, IDMLCompiledOperator **out, dmlshim_status *st)
{
    struct built b;
    IDMLOperator *op = NULL;
    HRESULT hr;
    int rc;
    size_t key_size = call_key(c, NULL);
    unsigned char *key = malloc(key_size ? key_size : 1);
    double t0 = now();
    call_key(c, key);
    if (cached_op && key_size == cached_key_size && !memcmp(key, cached_key, key_size)) {
        free(key);
        *out = cached_op;
        return DMLSHIM_OK;
    }
    release_cached();
    if ((rc = build_desc(c, &b, st)) != DMLSHIM_OK) {
        free(key);
        return rc;
    }
    hr = dml->v->CreateOperator(dml, &b.desc, &IID_IDMLOperator, (void **)&op);
    if (FAILED(hr)) {
        free(key);
        return rejected_or_failed(st, DMLSHIM_STAGE_CREATE_OPERATOR, hr, "IDMLDevice::CreateOperator");
    }
    if (c->graph) {
        DML_OPERATOR_GRAPH_NODE_DESC node = {op, "op"};
        DML_GRAPH_NODE_DESC nodes[1] = {{DML_GRAPH_NODE_TYPE_OPERATOR, &node}};
        DML_INPUT_GRAPH_EDGE_DESC in = {0, 0, 0, "InputTensor"};
        DML_OUTPUT_GRAPH_EDGE_DESC outp = {0, 0, 0, "OutputTensor"};
        DML_GRAPH_EDGE_DESC ins[1] = {{DML_GRAPH_EDGE_TYPE_INPUT, &in}}, outs[1] = {{DML_GRAPH_EDGE_TYPE_OUTPUT, &outp}};
        DML_GRAPH_DESC g = {1, 1, 1, nodes, 1, ins, 1, outs, 0, NULL};
        hr = dml->v->CompileGraph(dml, &g, c->execution_flags, &IID_IDMLCompiledOperator, (void **)out);
    } else {
        hr = dml->v->CompileOperator(dml, op, c->execution_flags, &IID_IDMLCompiledOperator, (void **)out);
    }
    op->v->Release(op);
    if (FAILED(hr)) {
        free(key);
        return rejected_or_failed(st, DMLSHIM_STAGE_COMPILE, hr,
                                  c->graph ? "IDMLDevice1::CompileGraph" : "IDMLDevice::CompileOperator");
    }
    cached_op = *out;
    cached_key = key;
    cached_key_size = key_size;
    st->seconds_compile = now() - t0;
    return DMLSHIM_OK;
}

static void transition(ID3D12Resource *r, D3D12_RESOURCE_STATES before, D3D12_RESOURCE_STATES after)
{
    D3D12_RESOURCE_BARRIER b = {0};
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    b.Transition.pResource = r;
    b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    b.Transition.StateBefore = before;
    b.Transition.StateAfter = after;
    ID3D12GraphicsCommandList_ResourceBarrier(list, 1, &b);
}

static void uav_barrier(void)
{
    D3D12_RESOURCE_BARRIER b = {0};
    b.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    ID3D12GraphicsCommandList_ResourceBarrier(list, 1, &b);
}

static UINT64 round_up(UINT64 v, UINT64 a) { return (v + a - 1) / a * a; }

/* The binding starts this far into its D3D12 buffer: a guard region before it, aligned as
 * DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT (16) and the desc's GuaranteedBaseOffsetAlignment. */
static UINT64 guard_before(const dmlshim_tensor *t)
{
    UINT64 a = t->guaranteed_base_offset_alignment;
    return (a > PLACEMENT && a <= (1u << 16) && !(a & (a - 1))) ? a : PLACEMENT;
}

EXPORT int dmlshim_run(const dmlshim_call *c, void *const *host, uint32_t mode, dmlshim_status *st)
{
    const dmlshim_tensor *t[2] = {&c->input, &c->output};
    IDMLCompiledOperator *op = NULL;
    IDMLOperatorInitializer *init = NULL;
    IDMLBindingTable *table = NULL;
    ID3D12DescriptorHeap *heap = NULL;
    ID3D12Resource *buf[2] = {NULL, NULL}, *upload = NULL, *readback = NULL, *temp = NULL, *persist = NULL;
    UINT64 before[2], width[2], staged[2], staging = 0;
    DML_BINDING_PROPERTIES ip, ep;
    HRESULT hr;
    int rc = DMLSHIM_OK, recording = 0;
    double t0;

    memset(st, 0, sizeof *st);
    st->guard_tensor = -1;
    if (broken || !dml)
        return st->stage = DMLSHIM_STAGE_DEVICE, say(st, "the DirectML device is %s", broken ? "lost (removed earlier)" : "not open"),
               DMLSHIM_DEVICE_REMOVED;
    skip_log();
    if ((rc = compile(c, &op, st)) != DMLSHIM_OK || mode == DMLSHIM_MODE_COMPILE)
        return rc;
    t0 = now();

#define CHECK(stage, expr, what) do { if (FAILED(hr = (expr))) { rc = fail(st, stage, hr, what); goto done; } } while (0)
    CHECK(DMLSHIM_STAGE_INITIALIZER, dml->v->CreateOperatorInitializer(dml, 1, &op, &IID_IDMLOperatorInitializer, (void **)&init),
          "IDMLDevice::CreateOperatorInitializer");
    mark("start");
    DML_BINDING_PROPERTIES_OF(init, &ip);
    mark("initializer");
    DML_BINDING_PROPERTIES_OF(op, &ep);

    /* D3D12 buffers: one per tensor (guard, the bound bytes, guard), temporary, persistent */
    for (int i = 0; i < 2; ++i) {
        before[i] = guard_before(t[i]);
        width[i] = before[i] + round_up(t[i]->total_tensor_size_in_bytes, 4) + GUARD_AFTER;
        staged[i] = staging;
        staging += round_up(width[i], PLACEMENT);
        CHECK(DMLSHIM_STAGE_RESOURCES, make_buffer(D3D12_HEAP_TYPE_DEFAULT, width[i], D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                                                   D3D12_RESOURCE_STATE_COPY_DEST, &buf[i]), "creating a tensor buffer");
    }
    CHECK(DMLSHIM_STAGE_RESOURCES, make_buffer(D3D12_HEAP_TYPE_UPLOAD, staging, D3D12_RESOURCE_FLAG_NONE,
                                               D3D12_RESOURCE_STATE_GENERIC_READ, &upload), "creating the upload buffer");
    CHECK(DMLSHIM_STAGE_RESOURCES, make_buffer(D3D12_HEAP_TYPE_READBACK, staging, D3D12_RESOURCE_FLAG_NONE,
                                               D3D12_RESOURCE_STATE_COPY_DEST, &readback), "creating the readback buffer");
    {
        UINT64 temp_size = ip.TemporaryResourceSize > ep.TemporaryResourceSize ? ip.TemporaryResourceSize : ep.TemporaryResourceSize;
        if (temp_size)
            CHECK(DMLSHIM_STAGE_RESOURCES, make_buffer(D3D12_HEAP_TYPE_DEFAULT, temp_size, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS,
                                                       D3D12_RESOURCE_STATE_UNORDERED_ACCESS, &temp), "creating the temporary resource");
        if (ep.PersistentResourceSize)
            CHECK(DMLSHIM_STAGE_RESOURCES, make_buffer(D3D12_HEAP_TYPE_DEFAULT, ep.PersistentResourceSize,
                                                       D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_UNORDERED_ACCESS,
                                                       &persist), "creating the persistent resource");
    }
    mark("resources");
    {   /* the host bytes between guard bytes, into the upload buffer */
        unsigned char *p;
        D3D12_RANGE none = {0, 0};
        CHECK(DMLSHIM_STAGE_RESOURCES, ID3D12Resource_Map(upload, 0, &none, (void **)&p), "mapping the upload buffer");
        for (int i = 0; i < 2; ++i) {
            memset(p + staged[i], GUARD_BYTE, width[i]);
            memcpy(p + staged[i] + before[i], host[i], t[i]->total_tensor_size_in_bytes);
        }
        ID3D12Resource_Unmap(upload, 0, NULL);
    }

    /* descriptors: the initializer's range, then the operator's (both recorded in one list) */
    {
        UINT n_init = ip.RequiredDescriptorCount, n_exec = ep.RequiredDescriptorCount, inc;
        D3D12_DESCRIPTOR_HEAP_DESC hd = {D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, n_init + n_exec ? n_init + n_exec : 1,
                                         D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0};
        D3D12_CPU_DESCRIPTOR_HANDLE cpu;
        D3D12_GPU_DESCRIPTOR_HANDLE gpu;
        DML_BINDING_TABLE_DESC td;
        DML_BUFFER_BINDING temp_b = {temp, 0, temp ? ip.TemporaryResourceSize : 0};
        DML_BUFFER_BINDING persist_b = {persist, 0, ep.PersistentResourceSize};
        DML_BINDING_DESC temp_d = {DML_BINDING_TYPE_BUFFER, &temp_b}, persist_d = {DML_BINDING_TYPE_BUFFER, &persist_b};
        DML_BUFFER_BINDING io_b[2];
        DML_BINDING_DESC io_d[2];

        if (hd.NumDescriptors > heap_size) {
            if (shared_heap)
                ID3D12DescriptorHeap_Release(shared_heap);
            shared_heap = NULL;
            heap_size = 0;
            hd.NumDescriptors = hd.NumDescriptors < 1024 ? 1024 : hd.NumDescriptors;
            CHECK(DMLSHIM_STAGE_BINDING, ID3D12Device_CreateDescriptorHeap(dev, &hd, &IID_ID3D12DescriptorHeap, (void **)&shared_heap),
                  "creating the descriptor heap");
            heap_size = hd.NumDescriptors;
        }
        heap = shared_heap;
        mark("descriptor heap");
        cpu = ID3D12DescriptorHeap_GetCPUDescriptorHandleForHeapStart(heap);
        gpu = ID3D12DescriptorHeap_GetGPUDescriptorHandleForHeapStart(heap);
        inc = ID3D12Device_GetDescriptorHandleIncrementSize(dev, D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);

        CHECK(DMLSHIM_STAGE_RECORD, ID3D12CommandAllocator_Reset(alloc), "ID3D12CommandAllocator::Reset");
        CHECK(DMLSHIM_STAGE_RECORD, ID3D12GraphicsCommandList_Reset(list, alloc, NULL), "ID3D12GraphicsCommandList::Reset");
        recording = 1;
        mark("list reset");
        for (int i = 0; i < 2; ++i) {
            ID3D12GraphicsCommandList_CopyBufferRegion(list, buf[i], 0, upload, staged[i], width[i]);
            transition(buf[i], D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
        }
        ID3D12GraphicsCommandList_SetDescriptorHeaps(list, 1, &heap);

        td = (DML_BINDING_TABLE_DESC){(IDMLDispatchable *)init, cpu.ptr, gpu.ptr, n_init};
        CHECK(DMLSHIM_STAGE_BINDING, dml->v->CreateBindingTable(dml, &td, &IID_IDMLBindingTable, (void **)&table),
              "IDMLDevice::CreateBindingTable (initializer)");
        if (ip.TemporaryResourceSize)
            table->v->BindTemporaryResource(table, &temp_d);
        if (ep.PersistentResourceSize)
            table->v->BindOutputs(table, 1, &persist_d);
        mark("init table");
        recorder->v->RecordDispatch(recorder, list, (IDMLDispatchable *)init, table);
        uav_barrier();
        mark("init recorded");

        td = (DML_BINDING_TABLE_DESC){(IDMLDispatchable *)op, cpu.ptr + (SIZE_T)n_init * inc, gpu.ptr + (UINT64)n_init * inc, n_exec};
        CHECK(DMLSHIM_STAGE_BINDING, table->v->Reset(table, &td), "IDMLBindingTable::Reset (operator)");
        for (int i = 0; i < 2; ++i) {
            io_b[i] = (DML_BUFFER_BINDING){buf[i], before[i], t[i]->total_tensor_size_in_bytes};
            io_d[i] = (DML_BINDING_DESC){DML_BINDING_TYPE_BUFFER, &io_b[i]};
        }
        table->v->BindInputs(table, 1, &io_d[0]);
        table->v->BindOutputs(table, 1, &io_d[1]);
        if (ep.TemporaryResourceSize) {
            temp_b.SizeInBytes = ep.TemporaryResourceSize;
            table->v->BindTemporaryResource(table, &temp_d);
        }
        if (ep.PersistentResourceSize)
            table->v->BindPersistentResource(table, &persist_d);
        mark("op table");
        recorder->v->RecordDispatch(recorder, list, (IDMLDispatchable *)op, table);
        uav_barrier();
        mark("op recorded");
        for (int i = 0; i < 2; ++i) {
            transition(buf[i], D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
            ID3D12GraphicsCommandList_CopyBufferRegion(list, readback, staged[i], buf[i], 0, width[i]);
        }
        recording = 0;
        CHECK(DMLSHIM_STAGE_RECORD, ID3D12GraphicsCommandList_Close(list), "ID3D12GraphicsCommandList::Close");
    }
    mark("recorded");
    {
        ID3D12CommandList *lists[1] = {(ID3D12CommandList *)list};
        ID3D12CommandQueue_ExecuteCommandLists(queue, 1, lists);
        CHECK(DMLSHIM_STAGE_EXECUTE, ID3D12CommandQueue_Signal(queue, fence, ++fence_value), "ID3D12CommandQueue::Signal");
        CHECK(DMLSHIM_STAGE_EXECUTE, ID3D12Fence_SetEventOnCompletion(fence, fence_value, NULL), "waiting for the dispatch");
        if (FAILED(hr = ID3D12Device_GetDeviceRemovedReason(dev))) {
            rc = fail(st, DMLSHIM_STAGE_EXECUTE, hr, "the dispatch");
            goto done;
        }
    }
    mark("executed");
    {   /* every buffer back; guard bytes checked */
        unsigned char *p;
        D3D12_RANGE all = {0, (SIZE_T)staging};
        CHECK(DMLSHIM_STAGE_READBACK, ID3D12Resource_Map(readback, 0, &all, (void **)&p), "mapping the readback buffer");
        for (int i = 0; i < 2; ++i) {
            const unsigned char *b = p + staged[i];
            UINT64 total = t[i]->total_tensor_size_in_bytes;
            for (UINT64 k = 0; k < width[i]; ++k) {
                if (k >= before[i] && k < before[i] + total)
                    continue;
                if (b[k] != GUARD_BYTE) {
                    if (!st->guard_bytes_changed++) {
                        st->guard_tensor = i;
                        st->guard_offset = (int32_t)((int64_t)k - (int64_t)before[i]);
                    }
                }
            }
            memcpy(host[i], b + before[i], total);
        }
        ID3D12Resource_Unmap(readback, 0, NULL);
    }
    mark("read back");
    st->seconds_execute = now() - t0;
#undef CHECK
done:
    if (recording)
        ID3D12GraphicsCommandList_Close(list);
    if (table) table->v->Release(table);
    if (init) init->v->Release(init);
    for (int i = 0; i < 2; ++i)
        if (buf[i]) ID3D12Resource_Release(buf[i]);
    if (upload) ID3D12Resource_Release(upload);
    if (readback) ID3D12Resource_Release(readback);
    if (temp) ID3D12Resource_Release(temp);
    if (persist) ID3D12Resource_Release(persist);
    return rc;
}
