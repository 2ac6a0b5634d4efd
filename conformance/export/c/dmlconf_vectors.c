/* dmlconf_vectors.c: the reader and judge of dmlconf's .expect files (dmlconf_vectors.h).
 *
 * C99 and the C library only. The judgement is conformance/judge/compare.py's, element by
 * element in row-major order of the logical tensor:
 *   exact   the element's bits equal the expected bits (with any_nan: both NaN also passes)
 *   one_of  the bits equal those of one of the arrays (the same NaN rule)
 *   within  |double(got) - center| <= bound, or both NaN, or the center infinite and got
 *           equal to it, or nan_ok and got NaN
 * FAIL where an element is outside the legal envelope (the last model), QUALITY_WARNING
 * where all are inside it but some are outside the strict model (the first), else PASS. In an
 * open region of the spec the file holds the other admissible readings too, each a strict
 * model and an envelope: an output outside the suite's envelope is judged by the first reading
 * whose envelope holds it, and FAILs only when none does (compare.judge).
 *
 * The file, little-endian ("str": u32 byte count, then UTF-8 bytes):
 *   "DMLCEXP2", u32 what (1 output, 2 relation), str name, tensor,
 *   [relation: tensor right, i32 take axis (-1 none), u32 take count, u32 indices[]],
 *   u32 fill count, u8 fills[], u32 model count (1 or 2), models,
 *   u32 reading count (0 .. DMLCONF_MAX_READINGS; 0 for a relation), then per reading
 *   u32 model count (1 or 2), models
 *   tensor: u32 data type, u32 dimension count, u64 total size, u32 sizes[], u32 strides[]
 *   model: u32 kind (0 exact, 1 one_of, 2 within), u32 any_nan, str rule,
 *          u32 value arrays, arrays (element count * element size bytes each),
 *          within: u64 n, f64 center[n]; u64 n, f64 bound[n]; u64 n, u8 nan_ok[n]
 * docs/vectors.md describes every field.
 *
 * Nothing the file says is trusted (issue 24; docs/robustness.md, "Boundaries"): every length
 * and count is checked against the bytes left before anything is read, every tensor's Sizes
 * and strides against its TotalTensorSizeInBytes in overflow-safe arithmetic (check_extent),
 * and the buffers against TotalTensorSizeInBytes before they are judged. A file that fails is
 * refused (NULL, its path and the field named in the error): the reader never reads outside
 * the file or a buffer. conformance/export/c/fuzz (python -m conformance.export.c.fuzz) holds
 * it to that under AddressSanitizer and UndefinedBehaviorSanitizer.
 */
#include "dmlconf_vectors.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_EXACT 0u
#define MODEL_ONE_OF 1u
#define MODEL_WITHIN 2u
#define WHAT_OUTPUT 1u
#define WHAT_RELATION 2u

typedef struct model {
    uint32_t kind;
    uint32_t any_nan;
    const char *rule;
    uint32_t rule_length;
    uint32_t arrays;
    const uint8_t *values; /* arrays * element count * element size bytes */
    uint64_t center_count;
    const uint8_t *center;
    uint64_t bound_count;
    const uint8_t *bound;
    uint64_t nan_ok_count;
    const uint8_t *nan_ok;
} model;

struct dmlconf_expectation {
    uint8_t *data; /* the file; the pointers below point into it */
    uint32_t what;
    const char *name;
    uint32_t name_length;
    char name_text[256]; /* the name, NUL-terminated (cut at 255 bytes) */
    dmlconf_tensor tensor;
    dmlconf_tensor right;
    int32_t take_axis;
    uint32_t take_count;
    const uint8_t *take;
    uint32_t fill_count;
    const uint8_t *fills;
    uint32_t reading_count; /* 1 + the other admissible readings */
    uint32_t model_count[1 + DMLCONF_MAX_READINGS];
    model models[1 + DMLCONF_MAX_READINGS][2]; /* per reading: strict, then legal */
};

/* -- little-endian values ------------------------------------------------------------- */
static uint64_t le(const uint8_t *p, unsigned bytes)
{
    uint64_t v = 0;
    unsigned i;
    for (i = 0; i < bytes; ++i)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static double f64_of(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static double f32_of(uint64_t bits)
{
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, sizeof f);
    return (double)f;
}

static double f16_of(uint64_t bits)
{
    /* exact: every float16 is a double */
    unsigned sign = (unsigned)(bits >> 15) & 1u, exponent = (unsigned)(bits >> 10) & 0x1fu;
    unsigned mantissa = (unsigned)bits & 0x3ffu;
    uint64_t out;
    if (exponent == 0x1f) {
        out = ((uint64_t)sign << 63) | 0x7ff0000000000000ull | ((uint64_t)mantissa << 42);
    } else if (exponent == 0) {
        double v = (double)mantissa / 16777216.0; /* mantissa * 2^-24 */
        return sign ? -v : v;
    } else {
        out = ((uint64_t)sign << 63) | ((uint64_t)(exponent - 15 + 1023) << 52)
              | ((uint64_t)mantissa << 42);
    }
    return f64_of(out);
}

/* DML_TENSOR_DATA_TYPE (spec-notes section 1): element size, float or not. */
static unsigned element_size(uint32_t data_type)
{
    switch (data_type) {
    case 1: case 3: case 6: return 4;   /* FLOAT32, UINT32, INT32 */
    case 2: case 4: case 7: return 2;   /* FLOAT16, UINT16, INT16 */
    case 5: case 8: return 1;           /* UINT8, INT8 */
    case 9: case 10: case 11: return 8; /* FLOAT64, UINT64, INT64 */
    default: return 0;
    }
}

static int is_float(uint32_t data_type)
{
    return data_type == 1 || data_type == 2 || data_type == 9;
}

static int is_nan_bits(uint64_t bits, uint32_t data_type)
{
    switch (data_type) {
    case 2: return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
    case 1: return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0;
    case 9:
        return (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull
               && (bits & 0xfffffffffffffull) != 0;
    default: return 0;
    }
}

/* The element widened to float64, as numpy's astype(float64). */
static double value_of(uint64_t bits, uint32_t data_type)
{
    switch (data_type) {
    case 1: return f32_of(bits);
    case 2: return f16_of(bits);
    case 9: return f64_of(bits);
    case 3: case 4: case 5: case 10: return (double)bits;
    case 6: return (double)(int32_t)(uint32_t)bits;
    case 7: return (double)(int16_t)(uint16_t)bits;
    case 8: return (double)(int8_t)(uint8_t)bits;
    case 11: return (double)(int64_t)bits;
    default: return 0.0;
    }
}

static int nan_d(double x) { return x != x; }
static int inf_d(double x) { return !nan_d(x) && nan_d(x - x); }
static double abs_d(double x) { return x < 0 ? -x : x; }

/* The precision that prints a string of the file: its length, but never more than a message
 * holds (a u32 length cast to int could be negative: %.*s would then read to a NUL). */
static int shown(uint32_t length)
{
    return length < DMLCONF_MESSAGE_SIZE ? (int)length : DMLCONF_MESSAGE_SIZE;
}

/* -- parsing ------------------------------------------------------------------------------ */
typedef struct cursor {
    const uint8_t *p;
    size_t left;
    char *error;
    size_t error_size;
    int failed;
} cursor;

static void say(char *error, size_t size, const char *format, ...)
{
    va_list args;
    if (!error || !size)
        return;
    va_start(args, format);
    vsnprintf(error, size, format, args);
    va_end(args);
}

static const uint8_t *take_bytes(cursor *c, uint64_t n, const char *what)
{
    const uint8_t *p = c->p;
    if (c->failed)
        return NULL;
    if (n > c->left) {
        say(c->error, c->error_size, "the file ends inside %s (%" PRIu64 " bytes needed, %"
            PRIu64 " left): not a complete .expect file", what, n, (uint64_t)c->left);
        c->failed = 1;
        return NULL;
    }
    c->p += n;
    c->left -= (size_t)n;
    return p;
}

static uint32_t u32(cursor *c, const char *what)
{
    const uint8_t *p = take_bytes(c, 4, what);
    return p ? (uint32_t)le(p, 4) : 0;
}

static uint64_t u64(cursor *c, const char *what)
{
    const uint8_t *p = take_bytes(c, 8, what);
    return p ? le(p, 8) : 0;
}

static void bad(cursor *c, const char *format, ...)
{
    va_list args;
    if (c->failed)
        return;
    c->failed = 1;
    if (!c->error || !c->error_size)
        return;
    va_start(args, format);
    vsnprintf(c->error, c->error_size, format, args);
    va_end(args);
}

/* Overflow-safe unsigned arithmetic: 0 where the result does not fit in 64 bits (the file's
 * numbers are never trusted to stay small: issue 24). Portable C99, no compiler builtins. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a && b > UINT64_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

static int add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b > UINT64_MAX - a)
        return 0;
    *out = a + b;
    return 1;
}

/* The tensor's Sizes and strides, checked against its TotalTensorSizeInBytes: the element at
 * index lives at byte dot(index, strides) * element size, so the bytes the elements reach are
 * (sum of (size - 1) * stride, + 1) * element size. Every product and sum is checked before it
 * is made: a file whose Sizes and strides reach past 2^64 bytes is refused, never wrapped
 * around to a small extent that would pass. After this, offset_of cannot overflow and every
 * element lies inside the first total_size bytes. */
static void check_extent(cursor *c, const dmlconf_tensor *t, const char *side)
{
    uint64_t last = 0, term, bytes;
    uint32_t d;
    for (d = 0; d < t->dimension_count; ++d) {
        if (!mul_u64((uint64_t)t->sizes[d] - 1, t->strides[d], &term)
            || !mul_u64(term, t->element_size, &bytes)) {
            bad(c, "%s's Sizes and strides: dimension %" PRIu32 " (size %" PRIu32 ", stride %"
                PRIu32 ", %u-byte elements) reaches past 2^64 bytes", side, d, t->sizes[d],
                t->strides[d], t->element_size);
            return;
        }
        if (bytes && bytes >= t->total_size) {
            bad(c, "%s's Sizes and strides: dimension %" PRIu32 " (size %" PRIu32 ", stride %"
                PRIu32 ") addresses byte %" PRIu64 ", beyond TotalTensorSizeInBytes %" PRIu64,
                side, d, t->sizes[d], t->strides[d], bytes, t->total_size);
            return;
        }
        if (!add_u64(last, term, &last)) {
            bad(c, "%s's Sizes and strides: the sum of (size - 1) * stride over the dimensions "
                "reaches past 2^64 elements", side);
            return;
        }
    }
    if (!add_u64(last, 1, &bytes) || !mul_u64(bytes, t->element_size, &bytes)) {
        bad(c, "%s's Sizes and strides: the last element (element offset %" PRIu64 ", the sum "
            "of (size - 1) * stride; %u-byte elements) ends past 2^64 bytes", side, last,
            t->element_size);
        return;
    }
    if (bytes > t->total_size)
        bad(c, "%s's Sizes and strides address byte %" PRIu64 ", beyond TotalTensorSizeInBytes %"
            PRIu64, side, bytes, t->total_size);
}

/* side: what messages call the tensor ("the output", "the left side", "the right side"). */
static void read_tensor(cursor *c, dmlconf_tensor *t, const char *side)
{
    uint32_t d;
    t->data_type = u32(c, "the data type");
    t->dimension_count = u32(c, "the dimension count");
    t->total_size = u64(c, "TotalTensorSizeInBytes");
    t->element_size = element_size(t->data_type);
    if (c->failed)
        return;
    if (!t->element_size) {
        bad(c, "%s's data type %" PRIu32 " is no DML_TENSOR_DATA_TYPE this reader knows", side,
            t->data_type);
        return;
    }
    if (t->dimension_count == 0 || t->dimension_count > DMLCONF_MAX_DIMS) {
        bad(c, "%s's dimension count %" PRIu32 " is not 1 to %d", side, t->dimension_count,
            DMLCONF_MAX_DIMS);
        return;
    }
    t->element_count = 1;
    for (d = 0; d < t->dimension_count; ++d) {
        t->sizes[d] = u32(c, "Sizes");
        if (c->failed)
            return;
        if (t->sizes[d] == 0) {
            bad(c, "%s's Sizes: a size of zero (dimension %" PRIu32 ")", side, d);
            return;
        }
        /* element_count <= 2^32 - 1 before, a size <= 2^32 - 1: the product fits */
        t->element_count *= t->sizes[d];
        if (t->element_count > 0xffffffffull) {
            bad(c, "%s's Sizes: more than 2^32 - 1 elements", side);
            return;
        }
    }
    for (d = 0; d < t->dimension_count; ++d)
        t->strides[d] = u32(c, "strides");
    if (!c->failed)
        check_extent(c, t, side);
}

static const uint8_t *per_element(cursor *c, uint64_t *count, uint64_t elements,
                                  unsigned width, int may_be_none, const char *what)
{
    *count = u64(c, what);
    if (c->failed)
        return NULL;
    if (!(*count == elements || *count == 1 || (*count == 0 && may_be_none))) {
        bad(c, "%s has %" PRIu64 " values for %" PRIu64 " elements", what, *count, elements);
        return NULL;
    }
    return take_bytes(c, *count * width, what);
}

static void read_model(cursor *c, model *m, const dmlconf_tensor *t, int relation)
{
    uint64_t bytes = t->element_count * t->element_size;
    m->kind = u32(c, "a model's kind");
    m->any_nan = u32(c, "any_nan");
    m->rule_length = u32(c, "the rule");
    m->rule = (const char *)take_bytes(c, m->rule_length, "the rule");
    m->arrays = u32(c, "the value array count");
    if (c->failed)
        return;
    if (m->kind > MODEL_WITHIN) {
        bad(c, "model kind %" PRIu32 " is not 0 (exact), 1 (one_of) or 2 (within)", m->kind);
        return;
    }
    if (relation ? m->arrays != 0
                 : (m->kind == MODEL_WITHIN ? m->arrays != 0
                    : m->kind == MODEL_EXACT ? m->arrays != 1 : m->arrays < 1)) {
        bad(c, "%" PRIu32 " value arrays do not fit a model of kind %" PRIu32, m->arrays,
            m->kind);
        return;
    }
    if (bytes && m->arrays > c->left / bytes) {
        bad(c, "the file ends inside the expected values (%" PRIu32 " arrays): not a "
            "complete .expect file", m->arrays);
        return;
    }
    m->values = take_bytes(c, bytes * m->arrays, "the expected values");
    m->center_count = m->bound_count = m->nan_ok_count = 0;
    if (m->kind != MODEL_WITHIN)
        return;
    m->center = per_element(c, &m->center_count, t->element_count, 8, relation,
                            "the centers");
    if (!c->failed && (relation ? m->center_count != 0 : m->center_count != t->element_count))
        bad(c, "%" PRIu64 " centers for %" PRIu64 " elements", m->center_count,
            t->element_count);
    m->bound = per_element(c, &m->bound_count, t->element_count, 8, 0, "the bounds");
    m->nan_ok = per_element(c, &m->nan_ok_count, t->element_count, 1, 1, "nan_ok");
}

static dmlconf_expectation *parse(dmlconf_expectation *e, size_t size, char *error,
                                  size_t error_size)
{
    cursor c;
    uint32_t k, r;
    const uint8_t *magic;
    c.p = e->data;
    c.left = size;
    c.error = error;
    c.error_size = error_size;
    c.failed = 0;
    magic = take_bytes(&c, 8, "the magic");
    if (magic && memcmp(magic, "DMLCEXP2", 8) != 0)
        bad(&c, "not a dmlconf expectation file of this version (it does not start with "
            "DMLCEXP2)");
    e->what = u32(&c, "what");
    if (!c.failed && e->what != WHAT_OUTPUT && e->what != WHAT_RELATION)
        bad(&c, "what %" PRIu32 " is neither 1 (an output) nor 2 (a relation)", e->what);
    e->name_length = u32(&c, "the name");
    e->name = (const char *)take_bytes(&c, e->name_length, "the name");
    read_tensor(&c, &e->tensor, e->what == WHAT_RELATION ? "the left side" : "the output");
    e->take_axis = -1;
    e->take_count = 0;
    if (e->what == WHAT_RELATION && !c.failed) {
        read_tensor(&c, &e->right, "the right side");
        e->take_axis = (int32_t)u32(&c, "the take axis");
        e->take_count = u32(&c, "the take count");
        e->take = take_bytes(&c, (uint64_t)e->take_count * 4, "the take indices");
        if (!c.failed && (e->take_axis < -1
                          || e->take_axis >= (int32_t)e->right.dimension_count))
            bad(&c, "take axis %" PRId32 " is neither -1 (none) nor a dimension of the right "
                "side", e->take_axis);
        if (!c.failed && e->take_axis < 0 && e->take_count)
            bad(&c, "%" PRIu32 " take indices without a take axis", e->take_count);
        for (k = 0; !c.failed && e->take_axis >= 0 && k < e->take_count; ++k)
            if (le(e->take + 4 * k, 4) >= e->right.sizes[e->take_axis])
                bad(&c, "take index %" PRIu64 " beyond the right side's size",
                    le(e->take + 4 * k, 4));
        if (!c.failed && e->right.data_type != e->tensor.data_type)
            bad(&c, "the sides of the relation differ in data type");
        if (!c.failed && e->right.dimension_count != e->tensor.dimension_count)
            bad(&c, "the sides of the relation differ in dimension count");
        for (k = 0; !c.failed && k < e->tensor.dimension_count; ++k)
            if (e->tensor.sizes[k] != ((int32_t)k == e->take_axis ? e->take_count
                                                                  : e->right.sizes[k]))
                bad(&c, "the sides of the relation differ in shape (dimension %" PRIu32 ")",
                    k);
    }
    e->fill_count = u32(&c, "the fill count");
    e->fills = take_bytes(&c, e->fill_count, "the fills");
    e->reading_count = 1;
    for (r = 0; !c.failed && r < e->reading_count; ++r) {
        e->model_count[r] = u32(&c, "the model count");
        if (!c.failed && (e->model_count[r] < 1 || e->model_count[r] > 2))
            bad(&c, "%" PRIu32 " models: a reading holds 1 (strict, also legal) or 2 (strict, "
                "legal)", e->model_count[r]);
        for (k = 0; !c.failed && k < e->model_count[r]; ++k)
            read_model(&c, &e->models[r][k], &e->tensor, e->what == WHAT_RELATION);
        if (r == 0 && !c.failed) {
            uint32_t others = u32(&c, "the reading count");
            if (!c.failed && (others > DMLCONF_MAX_READINGS
                              || (others && e->what == WHAT_RELATION)))
                bad(&c, "%" PRIu32 " other readings: a file holds at most %d (none for a "
                    "relation)", others, DMLCONF_MAX_READINGS);
            else
                e->reading_count += others;
        }
    }
    if (!c.failed && c.left)
        bad(&c, "%" PRIu64 " bytes follow the last model", (uint64_t)c.left);
    if (c.failed) {
        dmlconf_free(e);
        return NULL;
    }
    k = e->name_length < sizeof e->name_text - 1 ? e->name_length
                                                 : (uint32_t)sizeof e->name_text - 1;
    memcpy(e->name_text, e->name, k);
    e->name_text[k] = 0;
    return e;
}

dmlconf_expectation *dmlconf_parse(const void *data, size_t size, char *error,
                                   size_t error_size)
{
    dmlconf_expectation *e = (dmlconf_expectation *)calloc(1, sizeof *e);
    if (!e || !(e->data = (uint8_t *)malloc(size ? size : 1))) {
        free(e);
        say(error, error_size, "out of memory");
        return NULL;
    }
    memcpy(e->data, data, size);
    return parse(e, size, error, error_size);
}

void *dmlconf_read_file(const char *path, size_t *size, char *error, size_t error_size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t used = 0, capacity = 0, got;
    if (!f) {
        say(error, error_size, "%s: cannot open it", path);
        return NULL;
    }
    for (;;) {
        if (used == capacity) {
            uint8_t *bigger;
            if (capacity > ((size_t)-1) / 2) {
                free(data);
                fclose(f);
                say(error, error_size, "%s: too large to read", path);
                return NULL;
            }
            capacity = capacity ? capacity * 2 : 65536;
            bigger = (uint8_t *)realloc(data, capacity);
            if (!bigger) {
                free(data);
                fclose(f);
                say(error, error_size, "%s: out of memory reading it", path);
                return NULL;
            }
            data = bigger;
        }
        got = fread(data + used, 1, capacity - used, f);
        used += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(data);
        fclose(f);
        say(error, error_size, "%s: a read error", path);
        return NULL;
    }
    fclose(f);
    *size = used;
    return data;
}

dmlconf_expectation *dmlconf_load(const char *path, char *error, size_t error_size)
{
    size_t size = 0;
    char inner[200];
    dmlconf_expectation *e;
    void *data = dmlconf_read_file(path, &size, error, error_size);
    if (!data)
        return NULL;
    e = (dmlconf_expectation *)calloc(1, sizeof *e);
    if (!e) {
        free(data);
        say(error, error_size, "out of memory");
        return NULL;
    }
    e->data = (uint8_t *)data;
    inner[0] = 0;
    e = parse(e, size, inner, sizeof inner);
    if (!e)
        say(error, error_size, "%s: %s", path, inner);
    return e;
}

void dmlconf_free(dmlconf_expectation *e)
{
    if (e) {
        free(e->data);
        free(e);
    }
}

int dmlconf_is_relation(const dmlconf_expectation *e) { return e->what == WHAT_RELATION; }
const dmlconf_tensor *dmlconf_output(const dmlconf_expectation *e) { return &e->tensor; }
const dmlconf_tensor *dmlconf_right(const dmlconf_expectation *e)
{
    return e->what == WHAT_RELATION ? &e->right : NULL;
}
uint32_t dmlconf_fill_count(const dmlconf_expectation *e) { return e->fill_count; }
int dmlconf_fill(const dmlconf_expectation *e, uint32_t k)
{
    return k < e->fill_count ? e->fills[k] : -1;
}

const char *dmlconf_name(const dmlconf_expectation *e) { return e->name_text; }

const char *dmlconf_status_name(dmlconf_status s)
{
    switch (s) {
    case DMLCONF_PASS: return "PASS";
    case DMLCONF_QUALITY_WARNING: return "QUALITY_WARNING";
    case DMLCONF_FAIL: return "FAIL";
    default: return "ERROR";
    }
}

dmlconf_status dmlconf_worse(dmlconf_status a, dmlconf_status b) { return a > b ? a : b; }

/* -- judging ------------------------------------------------------------------------------ */
typedef struct sides {
    const dmlconf_expectation *e;
    const uint8_t *got;   /* the output (a relation: left) */
    const uint8_t *right; /* a relation's right side, else NULL */
} sides;

static uint64_t offset_of(const dmlconf_tensor *t, const uint32_t *index)
{
    uint64_t offset = 0;
    uint32_t d;
    for (d = 0; d < t->dimension_count; ++d)
        offset += (uint64_t)index[d] * t->strides[d];
    return offset * t->element_size;
}

/* The right side's element that stands against the left's element at index. */
static uint64_t right_bits(const sides *s, const uint32_t *index)
{
    const dmlconf_expectation *e = s->e;
    uint32_t at[DMLCONF_MAX_DIMS];
    memcpy(at, index, sizeof at);
    if (e->take_axis >= 0)
        at[e->take_axis] = (uint32_t)le(e->take + 4 * (uint64_t)index[e->take_axis], 4);
    return le(s->right + offset_of(&e->right, at), e->right.element_size);
}

static int element_ok(const sides *s, const model *m, uint64_t i, const uint32_t *index,
                      uint64_t got)
{
    const dmlconf_tensor *t = &s->e->tensor;
    unsigned size = t->element_size;
    if (m->kind != MODEL_WITHIN) {
        uint32_t k, arrays = s->right ? 1 : m->arrays;
        for (k = 0; k < arrays; ++k) {
            uint64_t want = s->right ? right_bits(s, index)
                                     : le(m->values + (k * t->element_count + i) * size, size);
            if (got == want)
                return 1;
            if (m->any_nan && is_nan_bits(got, t->data_type) && is_nan_bits(want, t->data_type))
                return 1;
        }
        return 0;
    } else {
        double value = value_of(got, t->data_type);
        double center = s->right ? value_of(right_bits(s, index), s->e->right.data_type)
                                 : f64_of(le(m->center + 8 * i, 8));
        double bound = f64_of(le(m->bound + 8 * (m->bound_count == 1 ? 0 : i), 8));
        int nan_ok = m->nan_ok_count ? m->nan_ok[m->nan_ok_count == 1 ? 0 : i] != 0 : 0;
        if (abs_d(value - center) <= bound)
            return 1;
        if (nan_d(center) && nan_d(value))
            return 1;
        if (inf_d(center) && value == center)
            return 1;
        return nan_ok && nan_d(value);
    }
}

static void next_index(const dmlconf_tensor *t, uint32_t *index)
{
    int d;
    for (d = (int)t->dimension_count - 1; d >= 0; --d) {
        if (++index[d] < t->sizes[d])
            return;
        index[d] = 0;
    }
}

/* Count the elements outside m; the first one's row-major and logical index. */
static uint64_t count_bad(const sides *s, const model *m, uint64_t *first,
                          uint32_t *first_index)
{
    const dmlconf_tensor *t = &s->e->tensor;
    uint32_t index[DMLCONF_MAX_DIMS] = {0};
    uint64_t i, bad_count = 0;
    for (i = 0; i < t->element_count; ++i, next_index(t, index)) {
        uint64_t got = le(s->got + offset_of(t, index), t->element_size);
        if (!element_ok(s, m, i, index, got)) {
            if (!bad_count++) {
                *first = i;
                memcpy(first_index, index, sizeof index);
            }
        }
    }
    return bad_count;
}

static void format_value(char *out, size_t size, uint64_t bits, uint32_t data_type)
{
    unsigned width = element_size(data_type) * 2;
    double v = value_of(bits, data_type);
    if (is_float(data_type)) {
        if (nan_d(v))
            snprintf(out, size, "nan (0x%0*" PRIx64 ")", (int)width, bits);
        else
            snprintf(out, size, "%.*g (0x%0*" PRIx64 ")",
                     data_type == 2 ? 5 : data_type == 1 ? 9 : 17, v, (int)width, bits);
    } else if (data_type == 11) {
        snprintf(out, size, "%" PRId64, (int64_t)bits);
    } else if (data_type == 6 || data_type == 7 || data_type == 8) {
        snprintf(out, size, "%.0f", v);
    } else {
        snprintf(out, size, "%" PRIu64, bits);
    }
}

/* "NAME: 3 of 48 elements differ (RULE): [0, 1, 0, 2] expected 5, got 7" (compare.describe,
 * for the first element). */
static void describe(const sides *s, const model *m, dmlconf_verdict *v, const char *prefix)
{
    const dmlconf_expectation *e = s->e;
    const dmlconf_tensor *t = &e->tensor;
    char index_text[160], want[200], got[64], one[64];
    size_t used = 0;
    uint32_t d;
    uint64_t i = v->first_bad;
    uint64_t got_bits = le(s->got + offset_of(t, v->first_index), t->element_size);
    index_text[0] = 0;
    for (d = 0; d < t->dimension_count && used < sizeof index_text; ++d)
        used += (size_t)snprintf(index_text + used, sizeof index_text - used, "%s%" PRIu32,
                                 d ? ", " : "", v->first_index[d]);
    format_value(got, sizeof got, got_bits, t->data_type);
    if (m->kind == MODEL_WITHIN) {
        double center = s->right ? value_of(right_bits(s, v->first_index), e->right.data_type)
                                 : f64_of(le(m->center + 8 * i, 8));
        double bound = f64_of(le(m->bound + 8 * (m->bound_count == 1 ? 0 : i), 8));
        snprintf(want, sizeof want, "%.17g +- %.3g", center, bound);
    } else {
        uint32_t k, j, arrays = s->right ? 1 : m->arrays;
        int any_nan = 0, said;
        want[0] = 0;
        used = 0;
        for (k = 0; k < arrays; ++k) {
            uint64_t bits = s->right ? right_bits(s, v->first_index)
                                     : le(m->values + (k * t->element_count + i)
                                          * t->element_size, t->element_size);
            for (said = 0, j = 0; j < k && !said; ++j) /* an alternative already said */
                said = le(m->values + (j * t->element_count + i) * t->element_size,
                          t->element_size) == bits;
            if (said)
                continue;
            format_value(one, sizeof one, bits, t->data_type);
            any_nan |= m->any_nan && is_nan_bits(bits, t->data_type);
            used += (size_t)snprintf(want + used, sizeof want - used, "%s%s", k ? " or " : "",
                                     one);
            if (used >= sizeof want)
                break;
        }
        if (any_nan && used < sizeof want)
            snprintf(want + used, sizeof want - used, " or any NaN");
    }
    snprintf(v->message, sizeof v->message,
             "%s%.*s: %" PRIu64 " of %" PRIu64 " elements differ (%.*s): [%s] expected %s, got %s",
             prefix, shown(e->name_length), e->name, v->bad_count, t->element_count,
             shown(m->rule_length), m->rule, index_text, want, got);
}

static dmlconf_status decide(const sides *s, dmlconf_verdict *v, const char *relation)
{
    const dmlconf_expectation *e = s->e;
    const model *legal = &e->models[0][e->model_count[0] - 1];
    const model *strict;
    char prefix[300];
    uint32_t r = 0;
    v->bad_count = count_bad(s, legal, &v->first_bad, v->first_index);
    /* outside the suite's envelope: the first admissible reading whose envelope holds it */
    for (r = 1; v->bad_count && r < e->reading_count; ++r) {
        uint64_t first;
        uint32_t index[DMLCONF_MAX_DIMS];
        if (!count_bad(s, &e->models[r][e->model_count[r] - 1], &first, index))
            break;
    }
    if (v->bad_count && r >= e->reading_count) {
        v->status = DMLCONF_FAIL;
        describe(s, legal, v, relation);
        if (e->reading_count > 1) {
            size_t used = strlen(v->message);
            snprintf(v->message + used, sizeof v->message - used, "; nor does it fit any of "
                     "the %" PRIu32 " other admissible readings of this open region",
                     e->reading_count - 1);
        }
        return v->status;
    }
    if (!v->bad_count)
        r = 0;
    legal = &e->models[r][e->model_count[r] - 1];
    strict = &e->models[r][0];
    prefix[0] = 0;
    if (r)
        snprintf(prefix, sizeof prefix, "follows an admissible reading of an open region, "
                 "not the suite's own: %.*s; ", shown(strict->rule_length), strict->rule);
    if (e->model_count[r] == 2) {
        v->bad_count = count_bad(s, strict, &v->first_bad, v->first_index);
        if (v->bad_count) {
            char more[700];
            v->status = DMLCONF_QUALITY_WARNING;
            snprintf(more, sizeof more,
                     "%s%sinside the legal envelope (%.*s), outside the strict reading: ",
                     relation, prefix, shown(legal->rule_length), legal->rule);
            describe(s, strict, v, more);
            return v->status;
        }
    }
    v->bad_count = 0;
    v->status = DMLCONF_PASS;
    snprintf(v->message, sizeof v->message, "%s%s%.*s: all %" PRIu64 " elements pass (%.*s)",
             relation, prefix, shown(e->name_length), e->name, e->tensor.element_count,
             shown(strict->rule_length), strict->rule);
    return v->status;
}

static dmlconf_status refuse(dmlconf_verdict *v, const char *format, ...)
{
    va_list args;
    v->status = DMLCONF_ERROR;
    va_start(args, format);
    vsnprintf(v->message, sizeof v->message, format, args);
    va_end(args);
    return v->status;
}

static void clear(dmlconf_verdict *v)
{
    memset(v, 0, sizeof *v);
}

dmlconf_status dmlconf_judge(const dmlconf_expectation *e, const void *output, size_t size,
                             int fill, dmlconf_verdict *v)
{
    sides s;
    clear(v);
    if (e->what != WHAT_OUTPUT)
        return refuse(v, "this expectation is a relation: judge it with "
                         "dmlconf_judge_relation and both outputs");
    if ((uint64_t)size < e->tensor.total_size)
        return refuse(v, "%.*s: the buffer holds %" PRIu64 " bytes; its "
                         "TotalTensorSizeInBytes is %" PRIu64, shown(e->name_length), e->name,
                      (uint64_t)size, e->tensor.total_size);
    s.e = e;
    s.got = (const uint8_t *)output;
    s.right = NULL;
    if (fill >= 0) {
        /* padding: the bytes of the buffer no logical element occupies */
        const dmlconf_tensor *t = &e->tensor;
        uint8_t *used = (uint8_t *)calloc((size_t)t->total_size ? (size_t)t->total_size : 1, 1);
        uint32_t index[DMLCONF_MAX_DIMS] = {0};
        uint64_t i, b;
        if (!used)
            return refuse(v, "out of memory");
        for (i = 0; i < t->element_count; ++i, next_index(t, index))
            memset(used + offset_of(t, index), 1, t->element_size);
        for (b = 0; b < t->total_size; ++b)
            v->padding_written += !used[b] && s.got[b] != (uint8_t)fill;
        free(used);
    }
    return decide(&s, v, "");
}

dmlconf_status dmlconf_judge_relation(const dmlconf_expectation *e, const void *left,
                                      size_t left_size, const void *right, size_t right_size,
                                      dmlconf_verdict *v)
{
    sides s;
    char prefix[300];
    clear(v);
    if (e->what != WHAT_RELATION)
        return refuse(v, "this expectation is an output's: judge it with dmlconf_judge");
    if ((uint64_t)left_size < e->tensor.total_size || (uint64_t)right_size < e->right.total_size)
        return refuse(v, "relation %.*s: the buffers hold %" PRIu64 " and %" PRIu64
                         " bytes; TotalTensorSizeInBytes is %" PRIu64 " and %" PRIu64,
                      shown(e->name_length), e->name, (uint64_t)left_size,
                      (uint64_t)right_size, e->tensor.total_size, e->right.total_size);
    s.e = e;
    s.got = (const uint8_t *)left;
    s.right = (const uint8_t *)right;
    snprintf(prefix, sizeof prefix, "relation ");
    return decide(&s, v, prefix);
}
