// Internal (python/src): one call of the op library from Python, shared by the files that
// define the _C op functions (tensor_ops.c, tensor_data_ops.c): its operands and out argument,
// the GIL decision and the conversion of Python arguments (op_call.c).
//
// The GIL: small calls (fewer than HGPY_GIL_ELEMS input elements) keep it (releasing and
// re-taking it costs about as much as a 1-element op, numpy does the same); larger ones release
// it while the library works, holding each Buffer (users) so a concurrent free() waits.
#ifndef HGPY_OP_CALL_H
#define HGPY_OP_CALL_H
#include "hgpy.h"

#define MAX_OPERANDS 12

// A 1-D view of a whole Buffer.
static inline void tensor_of_buffer(HgBuffer* b, hg_tensor* t) {
    memset(t, 0, sizeof *t);
    t->buffer = b->buf;
    t->dtype = b->dtype;
    t->ndim = 1;
    t->shape[0] = (int64_t)b->count;
    t->strides[0] = 1;
}

// Operands, the executor results go to, the output and the GIL decision for one call.
typedef struct call {
    const char* fn;
    hgpy_operand op[MAX_OPERANDS];
    int n;
    HgExecutor* ex;          // of the first tensor operand (NULL until one is seen)
    PyObject* out_obj;       // the user's out Tensor (borrowed) or NULL
    hg_tensor out;           // out->buffer.handle == 0: the library allocates
    HgBuffer* out_base;
    int64_t elems;           // input elements, for the GIL decision
    HgBuffer* held[MAX_OPERANDS + 1];
    int nheld;
} call;

// Only the fields read before they are written are set: the struct is large (operand views)
// and a one-element op is over in a few hundred nanoseconds.
static inline void call_init(call* c, const char* fn) {
    c->fn = fn;
    c->n = 0;
    c->ex = NULL;
    c->out_obj = NULL;
    c->out.buffer.handle = 0;   // the library allocates the result
    c->out_base = NULL;
    c->elems = 0;
    c->nheld = 0;
}

static inline void call_end(call* c) {
    for (int i = 0; i < c->n; i++) hgpy_operand_release(&c->op[i]);
}

static inline int call_release_gil(call* c) { return c->elems >= HGPY_GIL_ELEMS; }

static inline void call_hold(call* c) {
    c->nheld = 0;
    for (int i = 0; i < c->n; i++)
        if (!c->op[i].is_scalar) c->held[c->nheld++] = c->op[i].base;
    if (c->out_base) c->held[c->nheld++] = c->out_base;
    for (int i = 0; i < c->nheld; i++) hgpy_buffer_hold(c->held[i]);
}

static inline void call_unhold(call* c) {
    for (int i = 0; i < c->nheld; i++) hgpy_buffer_unhold(c->held[i]);
}

// Runs `stmt` (which sets hg_status s) with the GIL released for large calls.
#define CALL_RUN(c, s, stmt)                     \
    do {                                         \
        if (call_release_gil(c)) {               \
            call_hold(c);                        \
            Py_BEGIN_ALLOW_THREADS               \
            stmt;                                \
            Py_END_ALLOW_THREADS                 \
            call_unhold(c);                      \
        } else {                                 \
            stmt;                                \
        }                                        \
    } while (0)

static inline const hg_tensor* T(call* c, int i) { return &c->op[i].t; }

// The per-call pieces stay inline: a 1-element op is over in a few hundred nanoseconds.
//
// Adds an operand (a tensor, or a scalar when allow_scalar); returns its index or -1.
static inline int hgpy_call_arg(call* c, PyObject* obj, int allow_scalar, const char* name) {
    if (c->n == MAX_OPERANDS) {   // a binding with more tensor arguments than the table holds
        PyErr_Format(PyExc_SystemError, "%s: more than %d tensor arguments (at '%s')", c->fn,
                     MAX_OPERANDS, name);
        return -1;
    }
    hgpy_operand* o = &c->op[c->n];
    int r;
    if (hgpy_is_tensor(obj)) {
        // A Tensor needs no message (formatting one for every argument was a sixth of a
        // 1-element call).
        r = hgpy_operand_get(obj, c->ex, allow_scalar, 0, c->fn, o);
    } else {
        char what[96];
        snprintf(what, sizeof what, "%s: argument '%s'", c->fn, name);
        r = hgpy_operand_get(obj, c->ex, allow_scalar, 0, what, o);
    }
    if (r) return -1;
    c->n++;
    if (!o->is_scalar) {
        if (!c->ex) c->ex = o->base->owner;
        c->elems += hgpy_numel(&o->t);
    }
    return c->n - 1;
}

// The out argument: None/NULL, a Tensor or a Buffer (1-D view). Must be writable.
static inline int hgpy_call_out(call* c, PyObject* obj) {
    if (!obj || obj == Py_None) return 0;
    HgBuffer* b;
    if (hgpy_is_tensor(obj)) {
        HgTensor* t = (HgTensor*)obj;
        if (hgpy_tensor_check(t)) return -1;
        c->out = t->t;
        b = t->base;
    } else if (Py_TYPE(obj) == &HgBuffer_Type) {
        b = (HgBuffer*)obj;
        if (hgpy_buffer_check(b)) return -1;
        tensor_of_buffer(b, &c->out);
    } else {
        PyErr_Format(PyExc_TypeError, "%s: out must be a hologram.Tensor or Buffer, got %.100s",
                     c->fn, Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (b->readonly) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: out wraps read-only memory", c->fn);
        return -1;
    }
    c->out_obj = obj;
    c->out_base = b;
    if (!c->ex) c->ex = b->owner;
    return 0;
}

// The Python result of a call: the out object, or a Tensor over the buffer the library made.
static inline PyObject* hgpy_call_result(call* c, hg_status s) {
    PyObject* r;
    if (s != HG_OK) r = hgpy_raise_status(s, NULL);
    else if (c->out_obj) r = Py_NewRef(c->out_obj);
    else r = hgpy_tensor_from_result(c->ex, &c->out);
    call_end(c);
    return r;
}

// Python arguments of the op functions (c->fn names the function in messages). Each returns 0,
// or -1 with an exception set; None or NULL gives the default.
int hgpy_get_int(call* c, PyObject* o, const char* name, long long dflt, long long* out);
int hgpy_get_dbl(call* c, PyObject* o, const char* name, double dflt, double* out);
int hgpy_get_u64(call* c, PyObject* o, const char* name, uint64_t dflt, uint64_t* out);
// axis: None (all), an int, or a sequence of ints.
int hgpy_get_axes(call* c, PyObject* o, int32_t* axes, int32_t* naxes, int* all);
// reduction: 'none' / 'mean' / 'sum' or its code.
int hgpy_get_reduction(call* c, PyObject* o, hg_reduction* out);
// A scalar for hg_fill / hg_clip_scalar: bool, int or float (numpy scalars too).
int hgpy_get_scalar(call* c, PyObject* o, const char* name, hg_scalar* out);

// _set_hooks(as_tensor, default_executor): the package's conversion hooks.
PyObject* hgpy_set_hooks(PyObject* self, PyObject* args);

// The executor of a call is that of its first Tensor or Buffer argument, wherever it stands:
// other operands (numpy arrays, lists) are converted onto it, so np_array + cuda_tensor and
// hg.ops.add(np_array, cuda_tensor) run on the tensor's device as numpy's operand rules imply.
static inline void call_executor_from(call* c, PyObject* const* a, int n) {
    for (int i = 0; i < n && !c->ex; i++) {
        if (!a[i]) continue;
        if (hgpy_is_tensor(a[i]) && ((HgTensor*)a[i])->base)
            c->ex = ((HgTensor*)a[i])->base->owner;
        else if (Py_TYPE(a[i]) == &HgBuffer_Type)
            c->ex = ((HgBuffer*)a[i])->owner;
    }
}

#define PARSE(fn, names, nreq)                                                                  \
    PyObject* a_[sizeof(names) / sizeof(names[0])];                                             \
    if (hgpy_parse_args(fn, names, (int)(sizeof(names) / sizeof(names[0])), nreq, args, nargs,  \
                        kwnames, a_))                                                           \
        return NULL;                                                                            \
    call c;                                                                                     \
    call_init(&c, fn);                                                                          \
    call_executor_from(&c, a_, (int)(sizeof(names) / sizeof(names[0])))

// PARSE for an op declared in tools/opdecl/ops_decl.py: its argument names, required count and
// name in messages come from the generated <file>_decl.h the binding's file includes.
#define PARSE_DECL(op) PARSE(HGPY_FN_##op, hgpy_names_##op, HGPY_NREQ_##op)

#define FAIL_IF(cond) \
    do {              \
        if (cond) {   \
            call_end(&c); \
            return NULL;  \
        }             \
    } while (0)

#define HGPY_FASTCALL(name, fn, doc) \
    {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, doc}

#endif
