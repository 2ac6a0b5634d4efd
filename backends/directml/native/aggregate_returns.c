/* D3D12 methods that return a struct, as libdirectml.so calls them.
 *
 * vkd3d-proton 2.14.1's native build uses the System V convention, as libdirectml.so (built for
 * WSL) does, with one exception: a COM method that returns a struct (ID3D12Resource::GetDesc,
 * ID3D12Device::GetAdapterLuid, ...) is implemented the Microsoft way, with the result written
 * through a pointer passed after `this` and that pointer returned
 * (D3D12_RESOURCE_DESC *GetDesc(ID3D12Resource *This, D3D12_RESOURCE_DESC *ret)). A Linux C++
 * caller such as libdirectml.so returns small structs in registers (up to 16 bytes: rax, rdx)
 * and passes a hidden result pointer BEFORE `this` for larger ones. Called unadapted, the first
 * such call (GetAdapterLuid, in DMLCreateDevice) writes the LUID over the device's vtable
 * pointer, and DirectML crashes on its next device call.
 *
 * So each of these vtable slots is replaced by an adapter that looks at its caller: a call from
 * libdirectml.so is converted to vkd3d-proton's form; any other caller (vkd3d-proton itself, this
 * shim) passes straight through. Every other method is called directly, unchanged. */
#define _GNU_SOURCE
#define COBJMACROS
#define WIDL_C_INLINE_WRAPPERS
#include <vkd3d_windows.h>
#include <vkd3d_d3d12.h>

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aggregate_returns.h"

typedef struct { uint64_t lo, hi; } two_words;   /* a 16-byte INTEGER-class result: rax, rdx */
typedef uint64_t u64;
typedef void *(*pfn)();

static uintptr_t directml_lo, directml_hi;       /* libdirectml.so's mapped range */

static int from_directml(void *return_address)
{
    uintptr_t r = (uintptr_t)return_address;
    return r >= directml_lo && r < directml_hi;
}
#define CALLER __builtin_return_address(0)
#define ADAPTER static __attribute__((noinline))

/* The original functions, one per adapted slot */
enum { LUID_, HEAP_PROPS, ALLOC, ALLOC1, ALLOC2, ALLOC3, RES_DESC, RES_DESC1, HEAP_DESC, DH_DESC, DH_CPU, DH_GPU,
       QUEUE_DESC, SLOTS };
static pfn orig[SLOTS];

/* 8 bytes, in rax: LUID, D3D12_CPU_DESCRIPTOR_HANDLE, D3D12_GPU_DESCRIPTOR_HANDLE */
#define EIGHT_BYTES(name, slot) \
    ADAPTER u64 name(void *self, void *ret) \
    { \
        u64 v; \
        if (from_directml(CALLER)) { orig[slot](self, &v); return v; } \
        return (u64)orig[slot](self, ret); \
    }
EIGHT_BYTES(adapt_GetAdapterLuid, LUID_)
EIGHT_BYTES(adapt_GetCPUDescriptorHandleForHeapStart, DH_CPU)
EIGHT_BYTES(adapt_GetGPUDescriptorHandleForHeapStart, DH_GPU)

/* 16 bytes, in rax:rdx: D3D12_DESCRIPTOR_HEAP_DESC, D3D12_COMMAND_QUEUE_DESC */
#define SIXTEEN_BYTES(name, slot) \
    ADAPTER two_words name(void *self, void *ret) \
    { \
        two_words v; \
        if (from_directml(CALLER)) { orig[slot](self, &v); return v; } \
        v.lo = (u64)orig[slot](self, ret); v.hi = 0; return v; \
    }
SIXTEEN_BYTES(adapt_DescriptorHeap_GetDesc, DH_DESC)
SIXTEEN_BYTES(adapt_CommandQueue_GetDesc, QUEUE_DESC)

/* More than 16 bytes, through memory: the caller's hidden pointer comes before `this`.
 * D3D12_RESOURCE_DESC, D3D12_RESOURCE_DESC1, D3D12_HEAP_DESC; D3D12_HEAP_PROPERTIES (20 bytes). */
#define IN_MEMORY(name, slot) \
    ADAPTER void *name(void *a, void *b) \
    { \
        if (from_directml(CALLER)) { orig[slot](b, a); return a; } \
        return orig[slot](a, b); \
    }
IN_MEMORY(adapt_Resource_GetDesc, RES_DESC)
IN_MEMORY(adapt_Resource_GetDesc1, RES_DESC1)
IN_MEMORY(adapt_Heap_GetDesc, HEAP_DESC)

ADAPTER void *adapt_GetCustomHeapProperties(void *a, void *b, u64 node_mask, u64 heap_type)
{
    if (from_directml(CALLER)) { orig[HEAP_PROPS](b, a, node_mask, heap_type); return a; }
    return orig[HEAP_PROPS](a, b, node_mask, heap_type);
}

/* D3D12_RESOURCE_ALLOCATION_INFO (16 bytes, rax:rdx) after arguments: the Microsoft form has the
 * result pointer as its second argument, so the others move one place. */
ADAPTER two_words adapt_GetResourceAllocationInfo(void *self, u64 a, u64 b, u64 c)
{
    two_words v;
    if (from_directml(CALLER)) { orig[ALLOC](self, &v, a, b, c); return v; }
    v.lo = (u64)orig[ALLOC](self, (void *)a, b, c); v.hi = 0; return v;
}
#define ALLOCATION_INFO1(name, slot) \
    ADAPTER two_words name(void *self, u64 a, u64 b, u64 c, u64 d, u64 e) \
    { \
        two_words v; \
        if (from_directml(CALLER)) { orig[slot](self, &v, a, b, c, d); return v; } \
        v.lo = (u64)orig[slot](self, (void *)a, b, c, d, e); v.hi = 0; return v; \
    }
ALLOCATION_INFO1(adapt_GetResourceAllocationInfo1, ALLOC1)
ALLOCATION_INFO1(adapt_GetResourceAllocationInfo2, ALLOC2)
/* Seven arguments from libdirectml.so (the last on the stack), eight in the Microsoft form. */
ADAPTER two_words adapt_GetResourceAllocationInfo3(void *self, u64 a, u64 b, u64 c, u64 d, u64 e, u64 f, u64 g)
{
    two_words v;
    if (from_directml(CALLER)) { orig[ALLOC3](self, &v, a, b, c, d, e, f); return v; }
    v.lo = (u64)orig[ALLOC3](self, (void *)a, b, c, d, e, f, g); v.hi = 0; return v;
}

static int find_directml(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size; (void)data;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libdirectml.so"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
            if (!directml_lo || lo < directml_lo) directml_lo = lo;
            if (hi > directml_hi) directml_hi = hi;
        }
    }
    return 1;
}

/* Replace vtable slot `offset` (bytes) of the table `vtbl` by `adapter`, keeping the original. */
static int patch(const void *vtbl, size_t offset, int slot, void *adapter, char *err, size_t errlen)
{
    void **entry = (void **)((char *)vtbl + offset);
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)entry & ~(uintptr_t)(page - 1);
    if (*entry == adapter)
        return 0;
    if (mprotect((void *)start, page, PROT_READ | PROT_WRITE)) {
        snprintf(err, errlen, "mprotect of a vkd3d-proton vtable failed");
        return -1;
    }
    orig[slot] = (pfn)*entry;
    *entry = adapter;
    mprotect((void *)start, page, PROT_READ);
    return 0;
}

int adapt_aggregate_returns(ID3D12Device *device, ID3D12Resource *resource, ID3D12Heap *heap,
                            ID3D12DescriptorHeap *descriptor_heap, ID3D12CommandQueue *queue,
                            char *err, size_t errlen)
{
    const void *dv = *(void **)device, *rv = *(void **)resource, *hv = *(void **)heap;
    const void *dhv = *(void **)descriptor_heap, *qv = *(void **)queue;
    dl_iterate_phdr(find_directml, NULL);
    if (!directml_hi) {
        snprintf(err, errlen, "libdirectml.so is not loaded: cannot tell its calls apart");
        return -1;
    }
#define PATCH(table, type, member, slot, fn) \
    if (patch(table, offsetof(type, member), slot, (void *)fn, err, errlen)) return -1
    PATCH(dv, ID3D12Device12Vtbl, GetAdapterLuid, LUID_, adapt_GetAdapterLuid);
    PATCH(dv, ID3D12Device12Vtbl, GetCustomHeapProperties, HEAP_PROPS, adapt_GetCustomHeapProperties);
    PATCH(dv, ID3D12Device12Vtbl, GetResourceAllocationInfo, ALLOC, adapt_GetResourceAllocationInfo);
    PATCH(dv, ID3D12Device12Vtbl, GetResourceAllocationInfo1, ALLOC1, adapt_GetResourceAllocationInfo1);
    PATCH(dv, ID3D12Device12Vtbl, GetResourceAllocationInfo2, ALLOC2, adapt_GetResourceAllocationInfo2);
    PATCH(dv, ID3D12Device12Vtbl, GetResourceAllocationInfo3, ALLOC3, adapt_GetResourceAllocationInfo3);
    PATCH(rv, ID3D12Resource2Vtbl, GetDesc, RES_DESC, adapt_Resource_GetDesc);
    PATCH(rv, ID3D12Resource2Vtbl, GetDesc1, RES_DESC1, adapt_Resource_GetDesc1);
    PATCH(hv, ID3D12Heap1Vtbl, GetDesc, HEAP_DESC, adapt_Heap_GetDesc);
    PATCH(dhv, ID3D12DescriptorHeapVtbl, GetDesc, DH_DESC, adapt_DescriptorHeap_GetDesc);
    PATCH(dhv, ID3D12DescriptorHeapVtbl, GetCPUDescriptorHandleForHeapStart, DH_CPU, adapt_GetCPUDescriptorHandleForHeapStart);
    PATCH(dhv, ID3D12DescriptorHeapVtbl, GetGPUDescriptorHandleForHeapStart, DH_GPU, adapt_GetGPUDescriptorHandleForHeapStart);
    PATCH(qv, ID3D12CommandQueueVtbl, GetDesc, QUEUE_DESC, adapt_CommandQueue_GetDesc);
#undef PATCH
    return 0;
}
