// hgpy.h — shared declarations of the CPython extension hologram._C.
//
// Lifetime model (why buffers have two "dead" states):
// - A Buffer is *freed* when the user calls free() or closes its Executor: every later use
//   raises InvalidHandleError.
// - Its memory is *destroyed* (hg_buffer_destroy, foreign memory released) only when it is freed
//   AND nobody can still reach the memory: no buffer-protocol views (numpy arrays from
//   to_numpy), no DLPack capsules, no library call in flight on another thread (`users`), and no
//   __array_interface__ handed out (`pinned`: that protocol has no release hook, so the memory
//   then lives until the Buffer object itself is deallocated).
// - An Executor is destroyed when it is closed and none of its buffers' memory is left.
// All of this state is touched only with the GIL held.
#ifndef HGPY_H
#define HGPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include "hologram.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject* hgpy_newref(PyObject* o) { Py_INCREF(o); return o; }
#define Py_NewRef(o) hgpy_newref((PyObject*)(o))
#endif

typedef struct HgBuffer HgBuffer;

// Library buffers of small op results whose Python objects are gone, kept (at most
// HGPY_SPARES per executor, each of at most HGPY_SPARE_BYTES) for the next result of the same
// dtype and element count: `z = x + y` in a loop then reuses the buffer of the z before
// instead of a library allocation and release per call (~1,100 instructions of ~3,900).
#define HGPY_SPARES 4
#define HGPY_SPARE_BYTES 4096
typedef struct hgpy_spare {
    hg_buffer buf;
    hg_dtype dtype;
    size_t count;
} hgpy_spare;

typedef struct HgExecutor {
    PyObject_HEAD
    hg_executor ex;
    hg_backend_kind backend;
    int closed;               // close()/__exit__ called: no new buffers, buffers freed
    int destroyed;            // hg_executor_destroy done
    Py_ssize_t live_memory;   // buffers whose memory is not yet destroyed
    HgBuffer* buffers;        // intrusive list of those buffers (no references held)
    PyObject* weakreflist;
    hg_event order_ev;        // DLPack stream ordering (dlpack.c); created on first use
    int nspare;               // spare result buffers (CPU executors; see hgpy_spare)
    hgpy_spare spare[HGPY_SPARES];
} HgExecutor;

struct HgBuffer {
    PyObject_HEAD
    hg_buffer buf;
    HgExecutor* owner;        // strong reference
    void* data;               // host pointer (CPU memory), NULL where not host-visible
    size_t count;
    hg_dtype dtype;
    int freed;
    int destroyed;
    int readonly;             // wraps read-only foreign memory
    int pinned;               // __array_interface__ handed out
    Py_ssize_t users;         // buffer-protocol views + DLPack capsules + calls in flight
    // Foreign memory (asarray / from_dlpack): released after hg_buffer_destroy.
    Py_buffer view;
    int has_view;
    void* dl_managed;         // DLManagedTensor(Versioned)* whose deleter we must call
    int dl_versioned;
    HgBuffer* prev;
    HgBuffer* next;
    PyObject* weakreflist;
    int op_result;            // library memory made for an op's result (may become a spare)
};

extern PyTypeObject HgExecutor_Type;
extern PyTypeObject HgBuffer_Type;

// --- errors.c ---------------------------------------------------------------------------------
// Raises the HologramError subclass registered for status with hg_last_error()'s message
// (prefixed by `context` when not NULL). Returns NULL.
PyObject* hgpy_raise_status(hg_status status, const char* context);
// Raises the class registered for status with a message of our own. Returns NULL.
PyObject* hgpy_raise_msg(hg_status status, const char* fmt, ...);
PyObject* hgpy_set_error_classes(PyObject* self, PyObject* args);
PyObject* hgpy_set_log_handler(PyObject* self, PyObject* handler);
// Registers the log queue's fork handler (once; module init).
void hgpy_errors_fork_init(void);

// --- dtype.c ----------------------------------------------------------------------------------
// Converts a dtype spec (numpy dtype, type, or name such as "float32", "f32", "bfloat16") to
// hg_dtype; raises DtypeError and returns -1 on failure.
int hgpy_dtype_from_object(PyObject* spec, hg_dtype* out);
// The numpy dtype object used for a hg dtype (bf16: ml_dtypes.bfloat16 when it imports, else
// uint16, the raw bits). Borrowed reference; never NULL for a valid dtype.
PyObject* hgpy_numpy_dtype(hg_dtype dt);
// 1 when bf16 shows as ml_dtypes.bfloat16 (looks it up on first use).
int hgpy_bf16_is_ml_dtypes(void);
// _reset_bf16(): forget the looked-up bf16 dtype; the next use imports ml_dtypes again.
PyObject* hgpy_reset_bf16(PyObject* self, PyObject* unused);
// An array of bfloat16 (ml_dtypes) as a uint16 view of its bits; other objects unchanged.
// New reference (NULL with an exception on failure).
PyObject* hgpy_bf16_bits(PyObject* obj);
// PEP 3118 format character for a dtype ('?', 'b', 'l', 'e', ...).
const char* hgpy_format(hg_dtype dt);
// numpy typestr for __array_interface__ ("<f4", "|b1").
const char* hgpy_typestr(hg_dtype dt);
// hg dtype of a PEP 3118 format + itemsize; -1 (no exception) when none matches.
int hgpy_dtype_from_format(const char* format, Py_ssize_t itemsize);
PyObject* hgpy_numpy(void);   // the numpy module (borrowed; imported at module init)
int hgpy_dtype_init(void);

// --- buffer.c ---------------------------------------------------------------------------------
// New Buffer object for a created/wrapped handle (takes ownership of h; on failure destroys it).
HgBuffer* hgpy_buffer_new(HgExecutor* owner, hg_buffer h);
// The same when the caller knows the buffer's dtype and element count (no queries).
HgBuffer* hgpy_buffer_new_known(HgExecutor* owner, hg_buffer h, hg_dtype dt, size_t count);
// 0 if b may be used; else raises InvalidHandleError (freed / executor closed) and returns -1.
int hgpy_buffer_check(HgBuffer* b);
// users++ / users-- (the latter may destroy the memory of a freed buffer).
static inline void hgpy_buffer_hold(HgBuffer* b) { b->users++; }
void hgpy_buffer_unhold(HgBuffer* b);
void hgpy_buffer_free(HgBuffer* b);      // logical free (+ destroy when nobody uses it)
void hgpy_executor_maybe_destroy(HgExecutor* e);
// Keeps an op result's library buffer as a spare (1) or declines (0: the caller destroys it).
int hgpy_executor_park(HgExecutor* e, hg_buffer buf, hg_dtype dtype, size_t count);
// A spare of exactly dtype and count, removed from the executor (0 when there is none).
int hgpy_executor_take_spare(HgExecutor* e, hg_dtype dtype, size_t count, hg_buffer* out);

// --- executor.c / event.c -----------------------------------------------------------------------
// A stream argument as hg_executor_set_stream takes it: None or 0 -> NULL (the executor's own),
// an int -> that CUstream, an object with a `cuda_stream` attribute (torch.cuda.Stream) -> its
// value, where 0 (torch's default stream) is the legacy default stream, (void*)1. 0 or -1 with
// an exception.
int hgpy_stream_arg(PyObject* obj, void** out, const char* fn);
// Makes stream `to` wait for the work queued so far on e's current stream (nothing when `to` is
// that stream). For handing memory to another stream's user (DLPack, release of imports).
hg_status hgpy_order_stream_after(HgExecutor* e, void* to);
// The reverse: e's current stream waits for the work queued so far on `from` (a switch to it
// and back, each making the new stream wait for the old).
hg_status hgpy_order_after_stream(HgExecutor* e, void* from);
extern PyTypeObject HgEvent_Type;

// --- dlpack.c ---------------------------------------------------------------------------------
PyObject* hgpy_buffer_dlpack(HgBuffer* self, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames);
PyObject* hgpy_buffer_dlpack_device(HgBuffer* self, PyObject* unused);
struct HgTensor;
PyObject* hgpy_tensor_dlpack(struct HgTensor* self, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames);
PyObject* hgpy_tensor_dlpack_device(struct HgTensor* self, PyObject* unused);
PyObject* hgpy_import_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* hgpy_from_capsule(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* hgpy_capsule_binary(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* hgpy_capsule_matmul(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* hgpy_capsule_addmm(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
PyObject* hgpy_wrap_buffer(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
// Releases the foreign memory of b (DLPack deleter / Py_buffer) once its handle is destroyed.
void hgpy_release_foreign(HgBuffer* b);

// --- ops.c ------------------------------------------------------------------------------------
extern PyMethodDef hgpy_ops_methods[];
// Positional + keyword arguments (METH_FASTCALL | METH_KEYWORDS) into slots[0..nnames) (NULL =
// not given); the first nrequired must be given. Raises TypeError like Python does.
int hgpy_parse_args(const char* fn, const char* const* names, int nnames, int nrequired,
                    PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** slots);

// --- tensor.c ---------------------------------------------------------------------------------
// hologram._C.Tensor: an N-d strided view (hg_tensor) over a Buffer's memory. `base` is the
// Buffer whose memory the view reads; it keeps that memory (and its Executor) alive. A Tensor is
// immutable: views and ops make new Tensor objects.
typedef struct HgTensor {
    PyObject_HEAD
    HgBuffer* base;   // strong reference
    hg_tensor t;
    PyObject* weakreflist;
} HgTensor;

extern PyTypeObject HgTensor_Type;
// The type new Tensors get: hologram.Tensor (a Python subclass with the Python-level methods)
// once registered by the package, else _C.Tensor itself.
extern PyTypeObject* hgpy_tensor_type;
static inline int hgpy_is_tensor(PyObject* o) {
    return Py_TYPE(o) == hgpy_tensor_type || PyObject_TypeCheck(o, &HgTensor_Type);
}
// New Tensor over base (strong reference taken) with view t.
PyObject* hgpy_tensor_new(HgBuffer* base, const hg_tensor* t);
// A new C-contiguous Tensor of shape[0..nd) (a valid shape) and dtype dt on e; flags: the
// hg_buffer_create_ex flags. fn names the call in messages.
PyObject* hgpy_tensor_empty(HgExecutor* e, int32_t nd, const int64_t* shape, hg_dtype dt,
                            uint32_t flags, const char* fn);
// Elements of a view.
static inline int64_t hgpy_numel(const hg_tensor* t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; d++) n *= t->shape[d];
    return n;
}
// A Tensor for a result the library allocated (t->buffer is a new handle now owned by us).
PyObject* hgpy_tensor_from_result(HgExecutor* owner, const hg_tensor* t);
// 0 if the tensor's memory may be used (its Buffer is not freed); else raises, returns -1.
int hgpy_tensor_check(HgTensor* t);
int hgpy_tensor_types_init(PyObject* module);

// Calls that touch fewer elements keep the GIL (op_call.h, ops.c): releasing and re-taking it
// costs about as much as a 1-element op; numpy does the same.
#define HGPY_GIL_ELEMS 16384

// --- op_call.c, tensor_ops.c, tensor_data_ops.c ------------------------------------------------
// An op operand: a tensor view (from a Tensor, a Buffer, or an array converted by the package's
// _as_tensor hook) or a Python scalar (bool/int/float: numpy's weak promotion).
typedef struct hgpy_operand {
    int is_scalar;
    hg_tensor t;
    HgBuffer* base;     // borrowed through `keep` or the caller's argument
    hg_scalar s;
    PyObject* keep;     // new reference released by hgpy_operand_release (converted arrays)
} hgpy_operand;
// Converts obj. executor: the executor arrays are placed on (NULL: the package's default).
// Returns 0, -1 with an exception, or 1 (no exception) when obj is no operand type we know and
// allow_other is set (binary operators return NotImplemented then). allow_scalar
// HGPY_BIG_INT_AS_FLOAT (beside a float tensor): an int beyond int64 becomes a float scalar.
enum { HGPY_BIG_INT_AS_FLOAT = 2 };
int hgpy_operand_get(PyObject* obj, HgExecutor* executor, int allow_scalar, int allow_other,
                     const char* what, hgpy_operand* out);
void hgpy_operand_release(hgpy_operand* o);
// The binary operators of Tensor (nb_add, ...): `a op b`, reflected when a is not a tensor.
PyObject* hgpy_binary_operator(hg_binary_op op, PyObject* a, PyObject* b, int inplace);
PyObject* hgpy_unary_operator(hg_unary_op op, PyObject* x);
PyObject* hgpy_matmul_operator(PyObject* a, PyObject* b, int inplace);
extern PyMethodDef hgpy_tensor_op_methods[];    // tensor_ops.c: computation
// _C.unary / _C.binary's vectorcall bodies (args: op code, operands, then out by position or name).
PyObject* hgpy_unary_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
PyObject* hgpy_binary_call(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);

// --- op_function.c: hologram.ops' elementwise functions as C callables -----------------------------
extern PyTypeObject HgOpFunction_Type;
PyObject* hgpy_op_function(PyObject* self, PyObject* args);
extern PyMethodDef hgpy_tensor_data_methods[];  // tensor_data_ops.c: data ops, creation

// --- graph.c ----------------------------------------------------------------------------------
extern PyTypeObject HgGraph_Type;
extern PyTypeObject HgPlan_Type;
typedef struct HgPlan {
    PyObject_HEAD
    hg_plan p;
    HgExecutor* ex;      // strong reference: the plan runs on it
    int32_t ninputs, noutputs;
} HgPlan;
// Runs plan on the views ti (inputs, of Buffers bi) and to (outputs, of Buffers bo). Calls of
// fewer than HGPY_GIL_ELEMS input elements keep the GIL; larger ones hold the Buffers and
// release it. Returns 0, or -1 with an exception set.
int hgpy_plan_run_views(HgPlan* plan, int32_t ni, const hg_tensor* ti, HgBuffer* const* bi,
                        int32_t no, const hg_tensor* to, HgBuffer* const* bo, int64_t elems);

// --- jit_function.c: the repeated call of an @hologram.jit function -----------------------------
extern PyTypeObject HgJitFunction_Type;

#endif  // HGPY_H
