/* Launch arguments into the kernarg buffer: each hk_arg checked against its
 * parameter (kind, dtype, range, device) and stored at the parameter's
 * offset, with messages that name the kernel, the parameter and the value. */
#include "internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void describe(hkc_strbuf *err, const char *kernel, int i, const hkc_param *p)
{
    if (kernel && kernel[0])
        hkc_strbuf_printf(err, "%s: ", kernel);
    if (p->name[0])
        hkc_strbuf_printf(err, "parameter %d '%s' (%s) ", i + 1, p->name, p->type);
    else
        hkc_strbuf_printf(err, "parameter %d (%s) ", i + 1, p->type);
}

static const char *arg_kind_text(const hk_arg *a)
{
    switch (a->kind) {
    case HK_ARG_INT:
    case HK_ARG_UINT:
    case HK_ARG_FLOAT: return "a number";
    case HK_ARG_BOOL: return "a boolean";
    case HK_ARG_BUFFER: return "a buffer";
    case HK_ARG_NULL: return "a null pointer";
    case HK_ARG_VECTOR: return "a vector";
    }
    return "an unknown argument kind";
}

/* Prints the argument's value for a message. */
static void arg_value_text(hkc_strbuf *s, const hk_arg *a)
{
    switch (a->kind) {
    case HK_ARG_INT: hkc_strbuf_printf(s, "%" PRId64, a->v.i); break;
    case HK_ARG_UINT: hkc_strbuf_printf(s, "%" PRIu64, a->v.u); break;
    case HK_ARG_FLOAT: {
        /* The shortest spelling that reads back as the same double. */
        char buf[40];
        if (a->v.f == floor(a->v.f) && fabs(a->v.f) < 1e16) {
            hkc_strbuf_printf(s, "%.0f", a->v.f);
            break;
        }
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof(buf), "%.*g", prec, a->v.f);
            if (strtod(buf, NULL) == a->v.f || isnan(a->v.f))
                break;
        }
        hkc_strbuf_puts(s, buf);
        break;
    }
    case HK_ARG_BOOL: hkc_strbuf_puts(s, a->v.i ? "true" : "false"); break;
    default: hkc_strbuf_puts(s, arg_kind_text(a)); break;
    }
}

/* Where a number goes, for messages: parameter `index` of `kernel`, and for
 * a vector the lane (-1 for a scalar parameter). */
typedef struct slot {
    const char *kernel;
    const hkc_param *p;
    int index, lane;
} slot;

static void describe_slot(hkc_strbuf *err, const slot *at)
{
    describe(err, at->kernel, at->index, at->p);
    if (at->lane >= 0)
        hkc_strbuf_printf(err, "lane %c: ", "xyzw"[at->lane]);
}

/* Converts a number (INT, UINT, FLOAT or BOOL) to the parameter's type at
 * dst: a scalar parameter's value, or one lane of a vector parameter (whose
 * dtype is its element type), with the same rules for both. */
static int convert_number(const slot *at, const hk_arg *a, void *dst, hkc_strbuf *err)
{
    const hkc_param *p = at->p;
    if (p->is_bool) {
        int ok = a->kind == HK_ARG_BOOL || (a->kind == HK_ARG_INT && (a->v.i == 0 || a->v.i == 1)) ||
                 (a->kind == HK_ARG_UINT && a->v.u <= 1);
        if (!ok) {
            describe_slot(err, at);
            hkc_strbuf_puts(err, "got ");
            arg_value_text(err, a);
            hkc_strbuf_puts(err, ", expects a boolean (true, false, 0 or 1)");
            return HK_EARG;
        }
        uint8_t b = a->kind == HK_ARG_UINT ? a->v.u != 0 : a->v.i != 0;
        memcpy(dst, &b, 1);
        return 0;
    }

    /* The dtype codec applies the rules; a refusal is told here, with the
     * argument's value as the caller wrote it. */
    hk_dtype d = p->dtype;
    int rc;
    switch (a->kind) {
    case HK_ARG_INT: rc = hk_dtype_store_i64(d, dst, a->v.i); break;
    case HK_ARG_UINT: rc = hk_dtype_store_u64(d, dst, a->v.u); break;
    case HK_ARG_BOOL: rc = hk_dtype_store_u64(d, dst, a->v.i != 0); break;
    default: rc = hk_dtype_store_f64(d, dst, a->v.f); break;
    }
    if (rc == 0)
        return 0;
    describe_slot(err, at);
    if (rc == HK_EINVAL) { /* only a FLOAT for an integer dtype */
        hkc_strbuf_puts(err, "got ");
        arg_value_text(err, a);
        hkc_strbuf_puts(err, ", expects an integer");
        return HK_EARG;
    }
    hkc_strbuf_puts(err, "value ");
    arg_value_text(err, a);
    int64_t lo;
    uint64_t hi;
    if (hk_dtype_int_range(d, &lo, &hi) == 0) {
        hkc_strbuf_printf(err, " out of range [%" PRId64 ", %" PRIu64 "]", lo, hi);
    } else {
        double maxv = hkc_dtype_float_max(d);
        hkc_strbuf_printf(err, " out of range [%.8g, %.8g]", -maxv, maxv);
    }
    return HK_EARG;
}

static int pack_scalar(const hkc_param *p, const hk_arg *a, void *dst, const char *kernel, int i,
                       hkc_strbuf *err)
{
    if (a->kind == HK_ARG_BUFFER || a->kind == HK_ARG_NULL || a->kind == HK_ARG_VECTOR) {
        describe(err, kernel, i, p);
        hkc_strbuf_printf(err, "got %s, expects %s", arg_kind_text(a),
                          p->is_bool ? "a boolean" : "a number");
        return HK_EARG;
    }
    if (a->kind != HK_ARG_INT && a->kind != HK_ARG_UINT && a->kind != HK_ARG_FLOAT &&
        a->kind != HK_ARG_BOOL) {
        describe(err, kernel, i, p);
        hkc_strbuf_printf(err, "got an argument of unknown kind %d", (int)a->kind);
        return HK_EARG;
    }
    const slot at = {kernel, p, i, -1};
    return convert_number(&at, a, dst, err);
}

/* Each lane is a double, converted as a scalar of the element type. */
static int pack_vector(const hkc_param *p, const hk_arg *a, void *dst, const char *kernel, int i,
                       hkc_strbuf *err)
{
    static const char *const fields[] = {"", "x", "x, y", "x, y, z", "x, y, z, w"};
    size_t esize = hk_dtype_size(p->dtype);
    int lanes = (int)(p->size / esize);
    if (a->kind != HK_ARG_VECTOR || !a->v.vec) {
        describe(err, kernel, i, p);
        if (a->kind == HK_ARG_VECTOR) {
            hkc_strbuf_puts(err, "got a vector whose values pointer is NULL");
        } else {
            hkc_strbuf_puts(err, "got ");
            arg_value_text(err, a);
        }
        hkc_strbuf_printf(err, ", expects a vector of %d numbers (a table {%s} in Lua)", lanes,
                          fields[lanes]);
        return HK_EARG;
    }
    for (int l = 0; l < lanes; l++) {
        const slot at = {kernel, p, i, l};
        const hk_arg v = hk_arg_float(a->v.vec[l]);
        int rc = convert_number(&at, &v, (unsigned char *)dst + (size_t)l * esize, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int pack_pointer(const hkc_param *p, const hk_arg *a, int device, void *dst,
                        const char *kernel, int i, hkc_strbuf *err)
{
    uint64_t addr = 0;
    if (a->kind == HK_ARG_NULL) {
        memcpy(dst, &addr, 8);
        return 0;
    }
    if (a->kind != HK_ARG_BUFFER) {
        describe(err, kernel, i, p);
        hkc_strbuf_puts(err, "got ");
        arg_value_text(err, a);
        if (p->dtype == HK_DTYPE_COUNT)
            hkc_strbuf_puts(err, ", expects a buffer");
        else
            hkc_strbuf_printf(err, ", expects a buffer of %s", hk_dtype_name(p->dtype));
        return HK_EARG;
    }
    const hk_buffer *b = a->v.buf;
    if (!b) {
        describe(err, kernel, i, p);
        hkc_strbuf_puts(err, "got a NULL hk_buffer pointer; use hk_arg_null() to pass a null "
                        "pointer deliberately");
        return HK_EARG;
    }
    hk_dtype bd = hk_buffer_dtype(b);
    if (p->dtype != HK_DTYPE_COUNT && bd != p->dtype) {
        describe(err, kernel, i, p);
        const char *bn = hk_dtype_name(bd);
        hkc_strbuf_printf(err, "expects a buffer of %s, got a buffer of %s",
                          hk_dtype_name(p->dtype), bn ? bn : "?");
        return HK_EARG;
    }
    int bdev = hk_buffer_device(b);
    if (bdev != device) {
        describe(err, kernel, i, p);
        hkc_strbuf_printf(err, "got a buffer on device %d, but the kernel runs on device %d",
                          bdev, device);
        return HK_EARG;
    }
    addr = (uint64_t)(uintptr_t)b->kptr;
    memcpy(dst, &addr, 8);
    return 0;
}

int hkc_signature_pack(const hkc_signature *sig, const char *kernel, const hk_arg *args,
                       int nargs, int device, void *kernarg, hkc_strbuf *err)
{
    if (nargs != sig->count) {
        if (kernel && kernel[0])
            hkc_strbuf_printf(err, "%s: ", kernel);
        hkc_strbuf_printf(err, "expects %d argument%s ", sig->count, sig->count == 1 ? "" : "s");
        hkc_signature_format(sig, err);
        hkc_strbuf_printf(err, ", got %d", nargs);
        return HK_EARG;
    }
    if (sig->kernarg_size)
        memset(kernarg, 0, sig->kernarg_size);
    for (int i = 0; i < sig->count; i++) {
        const hkc_param *p = &sig->params[i];
        unsigned char *dst = (unsigned char *)kernarg + p->offset;
        int rc;
        switch (p->kind) {
        case HK_PARAM_POINTER: rc = pack_pointer(p, &args[i], device, dst, kernel, i, err); break;
        case HK_PARAM_VECTOR: rc = pack_vector(p, &args[i], dst, kernel, i, err); break;
        default: rc = pack_scalar(p, &args[i], dst, kernel, i, err); break;
        }
        if (rc)
            return rc;
    }
    return 0;
}
