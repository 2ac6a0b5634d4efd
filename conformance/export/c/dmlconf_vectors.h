/* dmlconf_vectors.h: read the expectation files (.expect) of vectors written by
 * `dmlconf export` and judge a harness's output bytes against them, as the Python suite
 * judges them (conformance/judge/compare.py): PASS, QUALITY_WARNING (inside the legal
 * envelope, outside the strict model) or FAIL, naming the first bad element.
 *
 * C99, the C library only (no libm: link nothing). The format is described in
 * docs/vectors.md and at the top of dmlconf_vectors.c.
 *
 *     char error[256];
 *     dmlconf_expectation *e = dmlconf_load("cases/ID/call.OutputTensor.expect",
 *                                           error, sizeof error);
 *     dmlconf_verdict v;
 *     if (!e) { fprintf(stderr, "%s\n", error); return 3; }
 *     dmlconf_judge(e, output_bytes, output_size, dmlconf_fill(e, 0), &v);
 *     printf("%s %s\n", dmlconf_status_name(v.status), v.message);
 *     dmlconf_free(e);
 */
#ifndef DMLCONF_VECTORS_H
#define DMLCONF_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The verdict, in the order of severity (the exit status of dmlconf_check). */
typedef enum dmlconf_status {
    DMLCONF_PASS = 0,
    DMLCONF_QUALITY_WARNING = 1, /* legal on D3D12, but outside the strict model */
    DMLCONF_FAIL = 2,
    DMLCONF_ERROR = 3            /* the buffer given cannot be judged (too small, ...) */
} dmlconf_status;

#define DMLCONF_MAX_DIMS 8
/* The most admissible readings an open region's file holds besides the suite's own. */
#define DMLCONF_MAX_READINGS 16
#define DMLCONF_MESSAGE_SIZE 1024

/* A DML_BUFFER_TENSOR_DESC as the checker reads the buffer: element strides are the
 * desc's Strides, or the packed ones where the desc omits them. */
typedef struct dmlconf_tensor {
    uint32_t data_type;        /* DML_TENSOR_DATA_TYPE value (1 FLOAT32 ... 11 INT64) */
    uint32_t dimension_count;
    uint64_t total_size;       /* TotalTensorSizeInBytes: the bytes of the bound buffer */
    uint32_t sizes[DMLCONF_MAX_DIMS];
    uint32_t strides[DMLCONF_MAX_DIMS];
    uint32_t element_size;
    uint64_t element_count;
} dmlconf_tensor;

typedef struct dmlconf_expectation dmlconf_expectation; /* opaque */

typedef struct dmlconf_verdict {
    dmlconf_status status;
    uint64_t bad_count;   /* elements outside the model that decided the status */
    uint64_t first_bad;   /* row-major index of the first of them (when bad_count > 0) */
    uint32_t first_index[DMLCONF_MAX_DIMS]; /* its logical index */
    uint64_t padding_written; /* padding bytes unlike the fill given: legal, information */
    char message[DMLCONF_MESSAGE_SIZE];
} dmlconf_verdict;

/* Read and check an .expect file (dmlconf_parse: the same from memory). NULL on a problem,
 * described in error (which may be NULL). Free with dmlconf_free. */
dmlconf_expectation *dmlconf_load(const char *path, char *error, size_t error_size);
dmlconf_expectation *dmlconf_parse(const void *data, size_t size, char *error,
                                   size_t error_size);
void dmlconf_free(dmlconf_expectation *expectation);

/* What the file is about. */
int dmlconf_is_relation(const dmlconf_expectation *expectation);
const char *dmlconf_name(const dmlconf_expectation *expectation);
/* The output (a relation: its left side), and a relation's right side (else NULL). */
const dmlconf_tensor *dmlconf_output(const dmlconf_expectation *expectation);
const dmlconf_tensor *dmlconf_right(const dmlconf_expectation *expectation);
/* The fill bytes: fill the output buffer with fill k before run k (0, and 1 where a second
 * run is needed); dmlconf_fill returns -1 for k out of range. */
uint32_t dmlconf_fill_count(const dmlconf_expectation *expectation);
int dmlconf_fill(const dmlconf_expectation *expectation, uint32_t k);

/* Judge an output buffer (size: its bytes, at least TotalTensorSizeInBytes). fill: the
 * byte the buffer was filled with before the dispatch, to count the padding bytes written
 * (legal: never a failure), or -1. Returns verdict->status. */
dmlconf_status dmlconf_judge(const dmlconf_expectation *expectation, const void *output,
                             size_t size, int fill, dmlconf_verdict *verdict);
/* Judge a relation: the left output against the right one (its elements taken along an
 * axis first, where the relation says so). */
dmlconf_status dmlconf_judge_relation(const dmlconf_expectation *expectation,
                                      const void *left, size_t left_size, const void *right,
                                      size_t right_size, dmlconf_verdict *verdict);

/* "PASS", "QUALITY_WARNING", "FAIL" or "ERROR". */
const char *dmlconf_status_name(dmlconf_status status);
/* The worse of two verdicts' statuses (a case of two runs, or of several outputs). */
dmlconf_status dmlconf_worse(dmlconf_status a, dmlconf_status b);

/* A whole file in memory (malloc'd; free() it), or NULL with error set. */
void *dmlconf_read_file(const char *path, size_t *size, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* DMLCONF_VECTORS_H */
