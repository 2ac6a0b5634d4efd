/* The DirectML declarations the shim uses, for libdirectml.so built for Linux (WSL) and for the
 * Windows DirectML.dll (mingw-w64, _WIN32): COM objects are C structs whose first member points
 * at a table of functions (System V calls on Linux, the Microsoft x64 convention on Windows).
 * Names, member order and values follow DirectML.h (DML_TARGET_VERSION 0x6400; the project's
 * docs/spec-notes.md §1 copies the enum values and the DML_BUFFER_TENSOR_DESC layout). */
#ifndef DMLCONF_DML_API_H
#define DMLCONF_DML_API_H

#include <stdint.h>

typedef int32_t DML_HRESULT;
typedef struct DML_GUID { uint32_t d1; uint16_t d2, d3; uint8_t d4[8]; } DML_GUID;

typedef struct DML_BUFFER_TENSOR_DESC {
    uint32_t DataType;            /* DML_TENSOR_DATA_TYPE */
    uint32_t Flags;               /* DML_TENSOR_FLAGS */
    uint32_t DimensionCount;
    const uint32_t *Sizes;
    const uint32_t *Strides;      /* NULL: packed */
    uint64_t TotalTensorSizeInBytes;
    uint32_t GuaranteedBaseOffsetAlignment;
} DML_BUFFER_TENSOR_DESC;

enum { DML_TENSOR_TYPE_BUFFER = 1 };
typedef struct DML_TENSOR_DESC { uint32_t Type; const void *Desc; } DML_TENSOR_DESC;

/* DML_OPERATOR_TYPE values (spec-notes §1) */
enum {
    DML_OPERATOR_SPACE_TO_DEPTH = 68, DML_OPERATOR_DEPTH_TO_SPACE = 69, DML_OPERATOR_RESAMPLE = 96,
    DML_OPERATOR_DEPTH_TO_SPACE1 = 113, DML_OPERATOR_SPACE_TO_DEPTH1 = 114,
    DML_OPERATOR_RESAMPLE1 = 116, DML_OPERATOR_RESAMPLE2 = 161, DML_OPERATOR_RESAMPLE3 = 175,
};
typedef struct DML_OPERATOR_DESC { uint32_t Type; const void *Desc; } DML_OPERATOR_DESC;

/* DML_DEPTH_TO_SPACE_OPERATOR_DESC and DML_SPACE_TO_DEPTH_OPERATOR_DESC */
typedef struct { const DML_TENSOR_DESC *InputTensor, *OutputTensor; uint32_t BlockSize; } DML_DEPTH_SPACE_DESC;
/* DML_DEPTH_TO_SPACE1_OPERATOR_DESC and DML_SPACE_TO_DEPTH1_OPERATOR_DESC */
typedef struct { const DML_TENSOR_DESC *InputTensor, *OutputTensor; uint32_t BlockSize; uint32_t Order; } DML_DEPTH_SPACE1_DESC;
/* DML_RESAMPLE_OPERATOR_DESC */
typedef struct { const DML_TENSOR_DESC *InputTensor, *OutputTensor; uint32_t InterpolationMode;
                 uint32_t ScaleCount; const float *Scales; } DML_RESAMPLE_DESC;
/* DML_RESAMPLE1_OPERATOR_DESC */
typedef struct { const DML_TENSOR_DESC *InputTensor, *OutputTensor; uint32_t InterpolationMode;
                 uint32_t DimensionCount; const float *Scales, *InputPixelOffsets, *OutputPixelOffsets; } DML_RESAMPLE1_DESC;
/* DML_RESAMPLE2_OPERATOR_DESC (RoundingDirection: DML_AXIS_DIRECTION, INCREASING 0, DECREASING 1) */
typedef struct { const DML_TENSOR_DESC *InputTensor, *OutputTensor; uint32_t InterpolationMode; uint32_t RoundingDirection;
                 uint32_t DimensionCount; const float *Scales, *InputPixelOffsets, *OutputPixelOffsets; } DML_RESAMPLE2_DESC;
/* DML_RESAMPLE3_OPERATOR_DESC: RESAMPLE2's fields, then BOOL Antialiased */
typedef struct { const DML_TENSOR_DESC *InputTensor, *OutputTensor; uint32_t InterpolationMode; uint32_t RoundingDirection;
                 uint32_t DimensionCount; const float *Scales, *InputPixelOffsets, *OutputPixelOffsets;
                 int32_t Antialiased; } DML_RESAMPLE3_DESC;

/* IDMLDevice::CheckFeatureSupport */
enum { DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0, DML_FEATURE_FEATURE_LEVELS = 1 };
typedef struct { uint32_t DataType; } DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT;
typedef struct { int32_t IsSupported; } DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT;
typedef struct { uint32_t RequestedFeatureLevelCount; const uint32_t *RequestedFeatureLevels; } DML_FEATURE_QUERY_FEATURE_LEVELS;
typedef struct { uint32_t MaxSupportedFeatureLevel; } DML_FEATURE_DATA_FEATURE_LEVELS;

/* Bindings */
typedef struct { uint32_t RequiredDescriptorCount; uint64_t TemporaryResourceSize; uint64_t PersistentResourceSize; } DML_BINDING_PROPERTIES;
enum { DML_BINDING_TYPE_NONE = 0, DML_BINDING_TYPE_BUFFER = 1, DML_BINDING_TYPE_BUFFER_ARRAY = 2 };
typedef struct { uint32_t Type; const void *Desc; } DML_BINDING_DESC;
typedef struct { void *Buffer; uint64_t Offset; uint64_t SizeInBytes; } DML_BUFFER_BINDING;   /* Buffer: ID3D12Resource* */
typedef struct IDMLDispatchable IDMLDispatchable;
typedef struct { IDMLDispatchable *Dispatchable; uint64_t CPUDescriptorHandle; uint64_t GPUDescriptorHandle;
                 uint32_t SizeInDescriptors; } DML_BINDING_TABLE_DESC;

/* Graphs (IDMLDevice1::CompileGraph) */
enum { DML_GRAPH_NODE_TYPE_OPERATOR = 1 };
enum { DML_GRAPH_EDGE_TYPE_INPUT = 1, DML_GRAPH_EDGE_TYPE_OUTPUT = 2 };
typedef struct IDMLOperator IDMLOperator;
typedef struct { IDMLOperator *Operator; const char *Name; } DML_OPERATOR_GRAPH_NODE_DESC;
typedef struct { uint32_t Type; const void *Desc; } DML_GRAPH_NODE_DESC;
typedef struct { uint32_t GraphInputIndex, ToNodeIndex, ToNodeInputIndex; const char *Name; } DML_INPUT_GRAPH_EDGE_DESC;
typedef struct { uint32_t FromNodeIndex, FromNodeOutputIndex, GraphOutputIndex; const char *Name; } DML_OUTPUT_GRAPH_EDGE_DESC;
typedef struct { uint32_t Type; const void *Desc; } DML_GRAPH_EDGE_DESC;
typedef struct {
    uint32_t InputCount, OutputCount, NodeCount; const DML_GRAPH_NODE_DESC *Nodes;
    uint32_t InputEdgeCount; const DML_GRAPH_EDGE_DESC *InputEdges;
    uint32_t OutputEdgeCount; const DML_GRAPH_EDGE_DESC *OutputEdges;
    uint32_t IntermediateEdgeCount; const DML_GRAPH_EDGE_DESC *IntermediateEdges;
} DML_GRAPH_DESC;

/* Interfaces: IUnknown, IDMLObject, IDMLDeviceChild, IDMLPageable (no methods), IDMLDispatchable */
#define DML_UNKNOWN_METHODS(T) \
    DML_HRESULT (*QueryInterface)(T *, const DML_GUID *, void **); uint32_t (*AddRef)(T *); uint32_t (*Release)(T *);
#define DML_OBJECT_METHODS(T) DML_UNKNOWN_METHODS(T) \
    DML_HRESULT (*GetPrivateData)(T *, const DML_GUID *, uint32_t *, void *); \
    DML_HRESULT (*SetPrivateData)(T *, const DML_GUID *, uint32_t, const void *); \
    DML_HRESULT (*SetPrivateDataInterface)(T *, const DML_GUID *, void *); \
    DML_HRESULT (*SetName)(T *, const uint16_t *);
#define DML_CHILD_METHODS(T) DML_OBJECT_METHODS(T) DML_HRESULT (*GetDevice)(T *, const DML_GUID *, void **);
#ifdef _WIN32
/* MSVC's member-function ABI: a returned struct comes back through a hidden pointer after `this` */
#define DML_DISPATCHABLE_METHODS(T) DML_CHILD_METHODS(T) \
    DML_BINDING_PROPERTIES *(*GetBindingProperties)(T *, DML_BINDING_PROPERTIES *);
#define DML_BINDING_PROPERTIES_OF(obj, out) ((void)(obj)->v->GetBindingProperties((obj), (out)))
#else
/* libdirectml.so (clang, System V): the struct is returned as C returns it */
#define DML_DISPATCHABLE_METHODS(T) DML_CHILD_METHODS(T) DML_BINDING_PROPERTIES (*GetBindingProperties)(T *);
#define DML_BINDING_PROPERTIES_OF(obj, out) (*(out) = (obj)->v->GetBindingProperties(obj))
#endif

typedef struct IDMLDevice IDMLDevice;
typedef struct IDMLCompiledOperator IDMLCompiledOperator;
typedef struct IDMLOperatorInitializer IDMLOperatorInitializer;
typedef struct IDMLBindingTable IDMLBindingTable;
typedef struct IDMLCommandRecorder IDMLCommandRecorder;

struct IDMLDeviceVtbl {
    DML_OBJECT_METHODS(IDMLDevice)
    DML_HRESULT (*CheckFeatureSupport)(IDMLDevice *, uint32_t, uint32_t, const void *, uint32_t, void *);
    DML_HRESULT (*CreateOperator)(IDMLDevice *, const DML_OPERATOR_DESC *, const DML_GUID *, void **);
    DML_HRESULT (*CompileOperator)(IDMLDevice *, IDMLOperator *, uint32_t, const DML_GUID *, void **);
    DML_HRESULT (*CreateOperatorInitializer)(IDMLDevice *, uint32_t, IDMLCompiledOperator *const *, const DML_GUID *, void **);
    DML_HRESULT (*CreateCommandRecorder)(IDMLDevice *, const DML_GUID *, void **);
    DML_HRESULT (*CreateBindingTable)(IDMLDevice *, const DML_BINDING_TABLE_DESC *, const DML_GUID *, void **);
    DML_HRESULT (*Evict)(IDMLDevice *, uint32_t, void *const *);
    DML_HRESULT (*MakeResident)(IDMLDevice *, uint32_t, void *const *);
    DML_HRESULT (*GetDeviceRemovedReason)(IDMLDevice *);
    DML_HRESULT (*GetParentDevice)(IDMLDevice *, const DML_GUID *, void **);
    /* IDMLDevice1 */
    DML_HRESULT (*CompileGraph)(IDMLDevice *, const DML_GRAPH_DESC *, uint32_t, const DML_GUID *, void **);
};
struct IDMLDevice { const struct IDMLDeviceVtbl *v; };
struct IDMLOperatorVtbl { DML_CHILD_METHODS(IDMLOperator) };
struct IDMLOperator { const struct IDMLOperatorVtbl *v; };
struct IDMLDispatchableVtbl { DML_DISPATCHABLE_METHODS(IDMLDispatchable) };
struct IDMLDispatchable { const struct IDMLDispatchableVtbl *v; };
struct IDMLCompiledOperatorVtbl { DML_DISPATCHABLE_METHODS(IDMLCompiledOperator) };
struct IDMLCompiledOperator { const struct IDMLCompiledOperatorVtbl *v; };
struct IDMLOperatorInitializerVtbl { DML_DISPATCHABLE_METHODS(IDMLOperatorInitializer)
    DML_HRESULT (*Reset)(IDMLOperatorInitializer *, uint32_t, IDMLCompiledOperator *const *); };
struct IDMLOperatorInitializer { const struct IDMLOperatorInitializerVtbl *v; };
struct IDMLBindingTableVtbl { DML_CHILD_METHODS(IDMLBindingTable)
    void (*BindInputs)(IDMLBindingTable *, uint32_t, const DML_BINDING_DESC *);
    void (*BindOutputs)(IDMLBindingTable *, uint32_t, const DML_BINDING_DESC *);
    void (*BindTemporaryResource)(IDMLBindingTable *, const DML_BINDING_DESC *);
    void (*BindPersistentResource)(IDMLBindingTable *, const DML_BINDING_DESC *);
    DML_HRESULT (*Reset)(IDMLBindingTable *, const DML_BINDING_TABLE_DESC *); };
struct IDMLBindingTable { const struct IDMLBindingTableVtbl *v; };
struct IDMLCommandRecorderVtbl { DML_CHILD_METHODS(IDMLCommandRecorder)
    void (*RecordDispatch)(IDMLCommandRecorder *, void *, IDMLDispatchable *, IDMLBindingTable *); };  /* ID3D12CommandList* */
struct IDMLCommandRecorder { const struct IDMLCommandRecorderVtbl *v; };

/* libdirectml.so's (and DirectML.dll's) export */
DML_HRESULT DMLCreateDevice1(void *d3d12Device, uint32_t flags, uint32_t minimumFeatureLevel, const DML_GUID *riid, void **ppv);

static const DML_GUID IID_IDMLDevice = {0x6dbd6437, 0x96fd, 0x423f, {0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f}};
static const DML_GUID IID_IDMLDevice1 = {0xa0884f9a, 0xd2be, 0x4355, {0xaa, 0x5d, 0x59, 0x01, 0x28, 0x1a, 0xd1, 0xd2}};
static const DML_GUID IID_IDMLOperator = {0x26caae7a, 0x3081, 0x4633, {0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d}};
static const DML_GUID IID_IDMLCompiledOperator = {0x6b15e56a, 0xbf5c, 0x4902, {0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4}};
static const DML_GUID IID_IDMLOperatorInitializer = {0x427c1113, 0x435c, 0x469c, {0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13}};
static const DML_GUID IID_IDMLBindingTable = {0x29c687dc, 0xde74, 0x4e3b, {0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc}};
static const DML_GUID IID_IDMLCommandRecorder = {0xe6857a76, 0x2e3e, 0x4fdd, {0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53}};

#endif
