/* Adapt vkd3d-proton's struct-returning D3D12 methods to libdirectml.so's calls
 * (aggregate_returns.c says why). */
#ifndef DMLCONF_AGGREGATE_RETURNS_H
#define DMLCONF_AGGREGATE_RETURNS_H
#include <stddef.h>

/* One object of each type whose vtable holds such methods; 0 on success, else -1 and err. */
int adapt_aggregate_returns(ID3D12Device *device, ID3D12Resource *resource, ID3D12Heap *heap,
                            ID3D12DescriptorHeap *descriptor_heap, ID3D12CommandQueue *queue,
                            char *err, size_t errlen);
#endif
