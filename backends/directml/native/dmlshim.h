/* The flat interface between Python (ctypes, backends/directml/shim.py) and the shim library.
 *
 * One operator call is described by plain numbers and arrays: the operator type, every
 * attribute, the two tensor descs with every DML_BUFFER_TENSOR_DESC field, the execution flags
 * and the path (CompileOperator, or a one-node graph through IDMLDevice1::CompileGraph). Host
 * buffers hold exactly TotalTensorSizeInBytes bytes per tensor; the shim copies them into D3D12
 * buffers, dispatches, and copies every buffer back (inputs too: DirectML must leave them alone).
 *
 * Keep in step with shim.py: DMLSHIM_ABI_VERSION is checked when the library is loaded. */
#ifndef DMLCONF_DMLSHIM_H
#define DMLCONF_DMLSHIM_H

#include <stdint.h>

#define DMLSHIM_ABI_VERSION 2

typedef struct dmlshim_tensor {
    uint32_t data_type;                        /* DML_TENSOR_DATA_TYPE */
    uint32_t flags;                            /* DML_TENSOR_FLAGS */
    uint32_t dimension_count;                  /* DimensionCount: the length of sizes (and strides) */
    uint32_t guaranteed_base_offset_alignment;
    const uint32_t *sizes;
    const uint32_t *strides;                   /* NULL: packed (Strides omitted) */
    uint64_t total_tensor_size_in_bytes;
} dmlshim_tensor;

typedef struct dmlshim_call {
    uint32_t operator_type;                    /* DML_OPERATOR_TYPE */
    uint32_t block_size;                       /* depth/space: BlockSize */
    uint32_t order;                            /* *_1: DML_DEPTH_SPACE_ORDER */
    uint32_t interpolation_mode;               /* resample: DML_INTERPOLATION_MODE */
    uint32_t dimension_count;                  /* resample: ScaleCount / DimensionCount */
    uint32_t execution_flags;                  /* DML_EXECUTION_FLAGS for CompileOperator / CompileGraph */
    const float *scales;
    const float *input_pixel_offsets;          /* RESAMPLE1, RESAMPLE2, RESAMPLE3 */
    const float *output_pixel_offsets;         /* RESAMPLE1, RESAMPLE2, RESAMPLE3 */
    dmlshim_tensor input, output;
    uint32_t graph;                            /* 0: CompileOperator; 1: CompileGraph of one node */
    uint32_t rounding_direction;               /* RESAMPLE2, RESAMPLE3: DML_AXIS_DIRECTION */
    uint32_t antialiased;                      /* RESAMPLE3: BOOL Antialiased */
    uint32_t reserved;
} dmlshim_call;

/* Where a call stopped (dmlshim_status.stage) */
enum dmlshim_stage {
    DMLSHIM_STAGE_NONE = 0, DMLSHIM_STAGE_DEVICE, DMLSHIM_STAGE_CREATE_OPERATOR,
    DMLSHIM_STAGE_COMPILE, DMLSHIM_STAGE_INITIALIZER, DMLSHIM_STAGE_RESOURCES,
    DMLSHIM_STAGE_BINDING, DMLSHIM_STAGE_RECORD, DMLSHIM_STAGE_EXECUTE, DMLSHIM_STAGE_READBACK,
};

/* Return codes of dmlshim_run */
enum dmlshim_result {
    DMLSHIM_OK = 0,
    DMLSHIM_REJECTED_CREATE = 1,   /* CreateOperator refused the desc (hr says how) */
    DMLSHIM_REJECTED_COMPILE = 2,  /* CompileOperator / CompileGraph refused it */
    DMLSHIM_FAILED = 3,            /* anything else failed: hr, stage, message */
    DMLSHIM_DEVICE_REMOVED = 4,    /* the D3D12 device was removed: reason in removed_reason */
    DMLSHIM_BAD_CALL = 5,          /* the description itself cannot be put to DirectML */
};

typedef struct dmlshim_status {
    int32_t hr;                    /* the failing HRESULT, 0 when none */
    int32_t removed_reason;        /* ID3D12Device::GetDeviceRemovedReason when the device was lost */
    uint32_t stage;                /* enum dmlshim_stage */
    uint32_t guard_bytes_changed;  /* bytes changed around the bound ranges (outside TotalTensorSizeInBytes) */
    int32_t guard_tensor;          /* 0 input, 1 output: the first tensor whose guard changed, -1 none */
    int32_t guard_offset;          /* its first changed byte, relative to the binding's start */
    double seconds_compile;        /* CreateOperator + CompileOperator (0 when reused) */
    double seconds_execute;        /* initialize, dispatch and copies */
    char message[2048];            /* words: what failed, and the D3D12 layer's log lines */
} dmlshim_status;

#define DMLSHIM_MODE_COMPILE 0     /* create and compile only (create_operator) */
#define DMLSHIM_MODE_EXECUTE 1     /* everything; reuses the operator just compiled for the same call */

/* dmlshim-helper.exe's protocol (helper.c says how frames are laid out; helper.py packs them) */
#define DMLSHIM_REQUEST 0x51484D44u  /* "DMHQ" */
#define DMLSHIM_ANSWER 0x41484D44u   /* "DMHA" */
enum dmlshim_command {
    DMLSHIM_CMD_ABI = 1, DMLSHIM_CMD_OPEN, DMLSHIM_CMD_LEVEL, DMLSHIM_CMD_TYPE, DMLSHIM_CMD_RUN,
    DMLSHIM_CMD_CLOSE,
};

#endif
