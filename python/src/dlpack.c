// DLPack export (Buffer.__dlpack__) and import (from_dlpack, asarray) without copying.
// The struct definitions follow the DLPack 1.x ABI (dlpack.h); written out here so the build
// needs no extra header.
#include <stdlib.h>
#include <string.h>
#include "hgpy.h"

typedef struct { uint32_t major, minor; } DLPackVersion;
enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLMetal = 8 };
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;   // in elements; NULL = C-contiguous
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct DLManagedTensor*);
} DLManagedTensor;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned*);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

_Static_assert(sizeof(DLDataType) == 4, "DLDataType layout");
_Static_assert(sizeof(DLDevice) == 8, "DLDevice layout");

#define HGPY_DLPACK_MAJOR 1
#define HGPY_DLPACK_MINOR 1

static DLDataType dl_dtype(hg_dtype dt) {
    DLDataType r = {kDLFloat, (uint8_t)(8 * hg_dtype_size(dt)), 1};
    switch (dt) {
    case HG_DTYPE_BOOL: r.code = kDLBool; break;
    case HG_DTYPE_I8: case HG_DTYPE_I16: case HG_DTYPE_I32: case HG_DTYPE_I64: r.code = kDLInt; break;
    case HG_DTYPE_U8: case HG_DTYPE_U16: case HG_DTYPE_U32: case HG_DTYPE_U64: r.code = kDLUInt; break;
    case HG_DTYPE_BF16: r.code = kDLBfloat; break;
    default: break;
    }
    return r;
}

static int hg_from_dl(DLDataType t) {
    if (t.lanes != 1) return -1;
    switch (t.code) {
    case kDLBool: return t.bits == 8 ? HG_DTYPE_BOOL : -1;
    case kDLInt:
        return t.bits == 8 ? HG_DTYPE_I8 : t.bits == 16 ? HG_DTYPE_I16 : t.bits == 32 ? HG_DTYPE_I32
             : t.bits == 64 ? HG_DTYPE_I64 : -1;
    case kDLUInt:
        return t.bits == 8 ? HG_DTYPE_U8 : t.bits == 16 ? HG_DTYPE_U16 : t.bits == 32 ? HG_DTYPE_U32
             : t.bits == 64 ? HG_DTYPE_U64 : -1;
    case kDLFloat:
        return t.bits == 16 ? HG_DTYPE_F16 : t.bits == 32 ? HG_DTYPE_F32
             : t.bits == 64 ? HG_DTYPE_F64 : -1;
    case kDLBfloat: return t.bits == 16 ? HG_DTYPE_BF16 : -1;
    default: return -1;
    }
}

// --- export ----------------------------------------------------------------------------------------
// The consumer's stream of a CUDA export: sync = 0 for stream=-1 (no ordering wanted).
typedef struct {
    int sync;
    void* stream;
} dl_stream;

// One allocation per export: the managed tensor, its shape/strides and the Buffer it holds.
typedef struct {
    DLManagedTensorVersioned v;   // used when versioned
    DLManagedTensor u;            // used otherwise
    int64_t shape[HG_MAX_DIMS];
    int64_t strides[HG_MAX_DIMS];
    HgBuffer* owner;              // strong reference; owner->users counts this export
    int foreign_stream;           // CUDA: handed to a consumer stream other than ours
    void* consumer;               // ... that stream
} ExportCtx;

static int finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

// Called exactly once, by the consumer or by the capsule destructor, from any thread.
static void release_export(ExportCtx* ctx) {
    if (!Py_IsInitialized() || (finalizing() && !PyGILState_Check())) {
        free(ctx);   // the interpreter is going away: the Buffer goes with it
        return;
    }
    PyGILState_STATE st = PyGILState_Ensure();
    HgBuffer* b = ctx->owner;
    HgExecutor* e = b->owner;
    // The consumer's stream may still use the memory: our stream waits for what it queued so
    // far before the memory can be reused (a switch there and back orders both ways).
    if (ctx->foreign_stream && !e->destroyed && hgpy_order_after_stream(e, ctx->consumer))
        hg_clear_error();   // a dead executor: its memory is not reused
    hgpy_buffer_unhold(b);
    Py_DECREF(b);
    PyGILState_Release(st);
    free(ctx);
}

static void deleter_versioned(DLManagedTensorVersioned* m) { release_export((ExportCtx*)m->manager_ctx); }
static void deleter_unversioned(DLManagedTensor* m) { release_export((ExportCtx*)m->manager_ctx); }

static void capsule_destructor_versioned(PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor_versioned")) return;   // consumed: consumer deletes
    DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
}

static void capsule_destructor_unversioned(PyObject* cap) {
    if (!PyCapsule_IsValid(cap, "dltensor")) return;
    DLManagedTensor* m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
}

// The DLPack device of b's memory: (kDLCPU, 0) for host memory, (kDLCUDA, ordinal) for CUDA.
static DLDevice device_of(HgBuffer* b) {
    DLDevice d = {kDLCPU, 0};
    if (b->owner->backend == HG_BACKEND_CUDA) {
        hg_device_info info;
        memset(&info, 0, sizeof info);
        d.device_type = kDLCUDA;
        if (hg_executor_device(b->owner->ex, &info) == HG_OK) d.device_id = info.index;
    }
    return d;
}

// Exports the view t of b's memory (data points at element (0, ..., 0), byte_offset 0).
static PyObject* export_capsule(HgBuffer* b, const hg_tensor* v, int versioned, int copied,
                                const dl_stream* ds) {
    if (ds->sync) {   // the consumer's stream waits for our queued work on the memory
        hg_status s = hgpy_order_stream_after(b->owner, ds->stream);
        if (s != HG_OK) return hgpy_raise_status(s, "__dlpack__ (stream)");
    }
    ExportCtx* ctx = calloc(1, sizeof *ctx);
    if (!ctx) return PyErr_NoMemory();
    if (ds->sync) {
        void* cur = NULL;
        hg_executor_stream(b->owner->ex, &cur);
        ctx->foreign_stream = ds->stream != cur;
        ctx->consumer = ds->stream;
    }
    for (int32_t d = 0; d < v->ndim; d++) {
        ctx->shape[d] = v->shape[d];
        ctx->strides[d] = v->strides[d];
    }
    ctx->owner = (HgBuffer*)Py_NewRef((PyObject*)b);
    uint64_t base = (uint64_t)(uintptr_t)b->data;
    if (!b->data) hg_buffer_device_address(b->buf, &base);   // device memory: its address
    char* data = (char*)(uintptr_t)(base + (uint64_t)(v->offset * (int64_t)hg_dtype_size(v->dtype)));
    DLTensor t = {data, device_of(b), v->ndim, dl_dtype(v->dtype), ctx->shape, ctx->strides, 0};
    PyObject* cap;
    if (versioned) {
        ctx->v.version.major = HGPY_DLPACK_MAJOR;
        ctx->v.version.minor = HGPY_DLPACK_MINOR;
        ctx->v.manager_ctx = ctx;
        ctx->v.deleter = deleter_versioned;
        ctx->v.flags = (b->readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0) |
                       (copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0);
        ctx->v.dl_tensor = t;
        cap = PyCapsule_New(&ctx->v, "dltensor_versioned", capsule_destructor_versioned);
    } else {
        ctx->u.manager_ctx = ctx;
        ctx->u.deleter = deleter_unversioned;
        ctx->u.dl_tensor = t;
        cap = PyCapsule_New(&ctx->u, "dltensor", capsule_destructor_unversioned);
    }
    if (!cap) {
        Py_DECREF(b);
        free(ctx);
        return NULL;
    }
    hgpy_buffer_hold(b);
    return cap;
}

// The keywords of __dlpack__ (keyword-only) for memory on device `dev`: sets *versioned,
// *want_copy and *ds; 0 or -1.
static int dlpack_kwargs(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, DLDevice dev,
                         int* versioned, int* want_copy, dl_stream* ds) {
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (nargs > 0) {
        PyErr_Format(PyExc_TypeError, "__dlpack__() takes keyword arguments only");
        return -1;
    }
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++) {
        PyObject* k = PyTuple_GET_ITEM(kwnames, i);
        PyObject* v = args[i];
        if (!PyUnicode_CompareWithASCIIString(k, "stream")) stream = v;
        else if (!PyUnicode_CompareWithASCIIString(k, "max_version")) max_version = v;
        else if (!PyUnicode_CompareWithASCIIString(k, "dl_device")) dl_device = v;
        else if (!PyUnicode_CompareWithASCIIString(k, "copy")) copy = v;
        else {
            PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword %R", k);
            return -1;
        }
    }
    // CPU data needs no stream: None is the only meaningful value (-1 is accepted as "none").
    // CUDA data (the DLPack spec): None = the legacy default stream, 1 = legacy default, 2 =
    // per-thread default, another positive int = the consumer's stream, -1 = no
    // synchronization; 0 is ambiguous and refused. The named stream waits (an event) for our
    // queued work; the host does not wait.
    ds->sync = 0;
    ds->stream = NULL;
    if (dev.device_type == kDLCUDA) {
        if (stream != Py_None && !PyLong_Check(stream)) {
            PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an integer, got %R",
                         stream);
            return -1;
        }
        long long v = stream == Py_None ? 1 : PyLong_AsLongLong(stream);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            v = -2;   // beyond 64 bits: no stream handle
        }
        if (v == 0 || v < -1) {
            PyErr_Format(PyExc_ValueError, "__dlpack__: stream %R is not valid for CUDA memory "
                         "(None or 1: the legacy default stream, 2: the per-thread default "
                         "stream, a CUstream handle > 2, or -1 for no synchronization; 0 is "
                         "ambiguous and not allowed)", stream);
            return -1;
        }
        ds->sync = v != -1;
        ds->stream = (void*)(uintptr_t)(unsigned long long)v;
    } else if (stream != Py_None) {
        long s = PyLong_Check(stream) ? PyLong_AsLong(stream) : 0;
        if (!PyLong_Check(stream) || s != -1) {
            PyErr_Format(PyExc_ValueError, "__dlpack__: stream must be None for CPU memory, got "
                         "%R", stream);
            return -1;
        }
    }
    if (dl_device != Py_None) {
        int dt, id;
        if (!PyArg_ParseTuple(dl_device, "ii:dl_device", &dt, &id)) return -1;
        if (dt != dev.device_type || id != dev.device_id) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: cannot export memory of DLPack device "
                         "(%d, %d) to device (%d, %d) without a copy between devices",
                         dev.device_type, dev.device_id, dt, id);
            return -1;
        }
    }
    *versioned = 0;
    if (max_version != Py_None) {
        int major, minor;
        if (!PyArg_ParseTuple(max_version, "ii:max_version", &major, &minor)) return -1;
        *versioned = major >= 1;
    }
    *want_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    return *want_copy < 0 ? -1 : 0;
}

// Exports view of b, or (want_copy) a C-contiguous copy of it that only the capsule reaches.
static PyObject* export_view(HgBuffer* b, const hg_tensor* view, int versioned, int want_copy,
                             const dl_stream* ds) {
    if (!b->data && b->owner->backend != HG_BACKEND_CUDA)
        return hgpy_raise_msg(HG_ERR_UNSUPPORTED, "__dlpack__: memory of the %s backend has no "
                              "DLPack device type", hg_backend_name(b->owner->backend));
    if (!want_copy) return export_capsule(b, view, versioned, 0, ds);
    hg_tensor out = {0};
    hg_status s;
    hgpy_buffer_hold(b);
    Py_BEGIN_ALLOW_THREADS
    s = hg_cast(view, view->dtype, &out);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(b);
    if (s != HG_OK) return hgpy_raise_status(s, "__dlpack__(copy=True)");
    HgBuffer* c = hgpy_buffer_new(b->owner, out.buffer);
    if (!c) return NULL;
    PyObject* cap = export_capsule(c, &out, versioned, 1, ds);
    if (cap) c->freed = 1;   // only the capsule can reach it; memory goes with the capsule
    Py_DECREF(c);
    return cap;
}

PyObject* hgpy_buffer_dlpack(HgBuffer* self, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
    int versioned, want_copy;
    dl_stream ds;
    if (hgpy_buffer_check(self)) return NULL;
    if (dlpack_kwargs(args, nargs, kwnames, device_of(self), &versioned, &want_copy, &ds))
        return NULL;
    hg_tensor v;
    memset(&v, 0, sizeof v);
    v.buffer = self->buf;
    v.dtype = self->dtype;
    v.ndim = 1;
    v.shape[0] = (int64_t)self->count;
    v.strides[0] = 1;
    return export_view(self, &v, versioned, want_copy, &ds);
}

PyObject* hgpy_tensor_dlpack(HgTensor* self, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) {
    int versioned, want_copy;
    dl_stream ds;
    if (hgpy_tensor_check(self)) return NULL;
    if (dlpack_kwargs(args, nargs, kwnames, device_of(self->base), &versioned, &want_copy, &ds))
        return NULL;
    return export_view(self->base, &self->t, versioned, want_copy, &ds);
}

PyObject* hgpy_tensor_dlpack_device(HgTensor* self, PyObject* unused) {
    DLDevice d = device_of(self->base);
    return Py_BuildValue("(ii)", d.device_type, d.device_id);
}

PyObject* hgpy_buffer_dlpack_device(HgBuffer* self, PyObject* unused) {
    DLDevice d = device_of(self);
    return Py_BuildValue("(ii)", d.device_type, d.device_id);
}

// --- import ------------------------------------------------------------------------------------------
// The producer's deleter (either struct; a NULL deleter means nothing to release).
static void call_deleter(void* managed, int versioned) {
    if (versioned) {
        DLManagedTensorVersioned* mv = managed;
        if (mv->deleter) mv->deleter(mv);
    } else {
        DLManagedTensor* mu = managed;
        if (mu->deleter) mu->deleter(mu);
    }
}

void hgpy_release_foreign(HgBuffer* b) {
    if (b->has_view) {
        b->has_view = 0;
        PyBuffer_Release(&b->view);
    }
    // Imported CUDA memory goes back to its producer, whose allocator may hand it out at once
    // to work on its stream (torch: its current stream, by default the legacy default stream),
    // while our queued work may still use it: that stream first waits for ours. A producer on
    // another stream is ordered when the executor works on that stream (Executor.set_stream).
    HgExecutor* e = b->owner;
    if (b->dl_managed && e->backend == HG_BACKEND_CUDA && !e->destroyed &&
        hgpy_order_stream_after(e, (void*)(uintptr_t)1) != HG_OK)
        hg_clear_error();   // a dead executor runs nothing more on the memory
    if (b->dl_managed) {
        void* m = b->dl_managed;
        b->dl_managed = NULL;
        call_deleter(m, b->dl_versioned);
    }
}

static HgExecutor* require_executor(PyObject* exobj, const char* fn) {
    if (!PyObject_TypeCheck(exobj, &HgExecutor_Type)) {
        PyErr_Format(PyExc_TypeError, "%s: executor must be a hologram.Executor, got %.100s", fn,
                     Py_TYPE(exobj)->tp_name);
        return NULL;
    }
    HgExecutor* e = (HgExecutor*)exobj;
    if (e->closed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "%s: Executor used after close()", fn);
        return NULL;
    }
    return e;
}

// 0 when memory on DLPack device (devtype, devid) can be wrapped by e; else -1 with an error.
static int check_device(HgExecutor* e, int devtype, int devid, const char* fn) {
    if (devtype != kDLCPU && devtype != kDLCUDA) {
        hgpy_raise_msg(HG_ERR_UNSUPPORTED, "%s: the data is on DLPack device type %d (CPU "
                       "memory, type 1, and CUDA memory, type 2, can be wrapped)", fn, devtype);
        return -1;
    }
    if (devtype == kDLCPU && e->backend != HG_BACKEND_CPU) {
        hgpy_raise_msg(HG_ERR_UNSUPPORTED, "%s: CPU memory can only be wrapped by a CPU "
                       "executor, this one is '%s'", fn, hg_backend_name(e->backend));
        return -1;
    }
    if (devtype == kDLCUDA) {
        hg_device_info info;
        memset(&info, 0, sizeof info);
        if (e->backend != HG_BACKEND_CUDA || hg_executor_device(e->ex, &info) != HG_OK ||
            info.index != devid) {
            hgpy_raise_msg(HG_ERR_UNSUPPORTED, "%s: CUDA memory of device %d can only be "
                           "wrapped by a CUDA executor of that device, this one is '%s' (device "
                           "%d)", fn, devid, hg_backend_name(e->backend),
                           e->backend == HG_BACKEND_CUDA ? info.index : 0);
            return -1;
        }
    }
    return 0;
}

// Consumes an unused DLPack capsule `cap` (a new reference, released here) of memory on DLPack
// device type devtype into a Buffer on e that owns the producer's tensor (its deleter runs when
// the Buffer is released) and *view, the tensor's layout over that Buffer (view->buffer is the
// Buffer's handle). fn names the call in messages. NULL with an exception on failure.
static HgBuffer* consume_capsule(PyObject* cap, HgExecutor* e, int devtype, hg_tensor* view,
                                 const char* fn, int ordered) {
    int versioned;
    DLTensor* t;
    void* managed;
    uint64_t flags = 0;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        DLManagedTensorVersioned* m = PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m->version.major != 1) {
            Py_DECREF(cap);   // unconsumed: its destructor calls the deleter
            hgpy_raise_msg(HG_ERR_UNSUPPORTED, "%s: DLPack major version %u is not supported "
                           "(expected 1)", fn, m->version.major);
            return NULL;
        }
        versioned = 1;
        t = &m->dl_tensor;
        managed = m;
        flags = m->flags;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        DLManagedTensor* m = PyCapsule_GetPointer(cap, "dltensor");
        versioned = 0;
        t = &m->dl_tensor;
        managed = m;
    } else {
        Py_DECREF(cap);
        PyErr_Format(PyExc_TypeError, "%s: expected an unused DLPack capsule", fn);
        return NULL;
    }
    int dt = hg_from_dl(t->dtype);
    const char* bad = NULL;
    if (dt < 0) bad = "its dtype has no hologram equivalent";
    else if (t->ndim < 0 || t->ndim > HG_MAX_DIMS) bad = "it has too many dimensions";
    else if (t->device.device_type != devtype) bad = "its device differs from __dlpack_device__";
    if (bad) {
        hgpy_raise_msg(HG_ERR_UNSUPPORTED, "%s: cannot wrap the tensor: %s (dtype code %d, %d "
                       "bits, %d lanes; %d dims)", fn, bad, t->dtype.code, t->dtype.bits,
                       t->dtype.lanes, t->ndim);
        Py_DECREF(cap);
        return NULL;
    }
    // Span of reachable elements relative to element (0, ..., 0).
    int64_t lo = 0, hi = 0, numel = 1, expect = 1;
    int64_t strides[HG_MAX_DIMS];
    for (int d = t->ndim - 1; d >= 0; d--) {
        strides[d] = t->strides ? t->strides[d] : expect;
        expect *= t->shape[d];
    }
    for (int d = 0; d < t->ndim; d++) {
        numel *= t->shape[d];
        if (t->shape[d] == 0) continue;
        int64_t ext = (t->shape[d] - 1) * strides[d];
        if (ext < 0) lo += ext; else hi += ext;
    }
    size_t es = hg_dtype_size((hg_dtype)dt);
    size_t count = numel == 0 ? 0 : (size_t)(hi - lo + 1);
    char* base = (char*)t->data + t->byte_offset + (numel == 0 ? 0 : lo * (int64_t)es);
    // Take ownership: from here on the deleter is ours to call (through the Buffer).
    if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor")) {
        Py_DECREF(cap);
        return NULL;
    }
    Py_DECREF(cap);
    // Empty tensors may have a NULL data pointer; wrapping needs an address (never accessed).
    static _Alignas(16) char empty_data[16];
    if (count == 0 && !base) base = devtype == kDLCUDA ? (char*)(uintptr_t)16 : empty_data;
    hg_buffer h;
    hg_status s;
    if (devtype == kDLCUDA) {
        // `ordered`: the producer made our stream wait for its queued writes (the stream
        // argument of its __dlpack__). A bare capsule comes with no such promise: our stream
        // waits for the legacy default stream, where DLPack's producers queue by default.
        s = ordered ? HG_OK : hgpy_order_after_stream(e, (void*)(uintptr_t)1);
        if (!s) s = hg_buffer_wrap_device(e->ex, (hg_dtype)dt, (uint64_t)(uintptr_t)base, count, &h);
    } else {
        s = hg_buffer_wrap(e->ex, (hg_dtype)dt, base, count, &h);
    }
    if (s != HG_OK) {
        call_deleter(managed, versioned);
        hgpy_raise_status(s, fn);
        return NULL;
    }
    HgBuffer* b = hgpy_buffer_new(e, h);
    if (!b) {
        call_deleter(managed, versioned);
        return NULL;
    }
    b->dl_managed = managed;
    b->dl_versioned = versioned;
    b->readonly = (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    memset(view, 0, sizeof *view);
    view->buffer = h;
    view->dtype = (hg_dtype)dt;
    view->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) {
        view->shape[d] = t->shape[d];
        view->strides[d] = strides[d];
    }
    view->offset = numel == 0 ? 0 : -lo;
    return b;
}

// _import_dlpack(obj, executor) -> (Buffer, shape, strides, offset): wraps the memory span that
// obj's elements reach (no copy). shape/strides/offset (in elements, into that Buffer) describe
// obj's layout; the Buffer keeps obj's memory alive and calls the DLPack deleter when released.
PyObject* hgpy_import_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_import_dlpack(obj, executor)");
    PyObject* obj = args[0];
    HgExecutor* e = require_executor(args[1], "from_dlpack");
    if (!e) return NULL;
    // Ask the producer where its data lives first, for a clear message before any export.
    PyObject* dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!dev) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return NULL;
        PyErr_Clear();
        return PyErr_Format(PyExc_TypeError, "from_dlpack: %.100s does not support DLPack (no "
                            "__dlpack_device__)", Py_TYPE(obj)->tp_name);
    }
    int devtype = 0, devid = 0;
    int ok = PyArg_ParseTuple(dev, "ii", &devtype, &devid);
    Py_DECREF(dev);
    if (!ok) return NULL;
    if (check_device(e, devtype, devid, "from_dlpack")) return NULL;
    // Versioned first; producers that predate it reject max_version with TypeError. CUDA data:
    // our stream goes to the producer, which makes it wait for its queued writes (the DLPack
    // spec), instead of a wait for the whole device here.
    PyObject* kw = Py_BuildValue("{s:(ii)}", "max_version", HGPY_DLPACK_MAJOR, HGPY_DLPACK_MINOR);
    PyObject* stream_kw = NULL;
    if (kw && devtype == kDLCUDA) {
        void* cur = NULL;
        hg_status s = hg_executor_stream(e->ex, &cur);
        if (s != HG_OK) {
            Py_DECREF(kw);
            return hgpy_raise_status(s, "from_dlpack");
        }
        // The emulation's own stream is NULL (its work is done when a call returns): None.
        stream_kw = cur ? PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)cur)
                        : Py_NewRef(Py_None);
        if (!stream_kw || PyDict_SetItemString(kw, "stream", stream_kw)) Py_CLEAR(kw);
    }
    if (!kw) {
        Py_XDECREF(stream_kw);
        return NULL;
    }
    PyObject* meth = PyObject_GetAttrString(obj, "__dlpack__");
    if (!meth) {
        Py_DECREF(kw);
        return NULL;
    }
    PyObject* empty = PyTuple_New(0);
    PyObject* cap = empty ? PyObject_Call(meth, empty, kw) : NULL;
    Py_DECREF(kw);
    if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyObject* kw2 = stream_kw ? Py_BuildValue("{s:O}", "stream", stream_kw) : NULL;
        if (!stream_kw || kw2) cap = PyObject_Call(meth, empty, kw2);
        Py_XDECREF(kw2);
    }
    Py_XDECREF(stream_kw);
    Py_XDECREF(empty);
    Py_DECREF(meth);
    if (!cap) return NULL;
    hg_tensor view;
    HgBuffer* b = consume_capsule(cap, e, devtype, &view, "from_dlpack", 1);
    if (!b) return NULL;
    PyObject* shape = PyTuple_New(view.ndim);
    PyObject* st = PyTuple_New(view.ndim);
    if (!shape || !st) goto fail;
    for (int d = 0; d < view.ndim; d++) {
        PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(view.shape[d]));
        PyTuple_SET_ITEM(st, d, PyLong_FromLongLong(view.strides[d]));
    }
    return Py_BuildValue("(NNNL)", (PyObject*)b, shape, st, (long long)view.offset);
fail:
    Py_XDECREF(shape);
    Py_XDECREF(st);
    Py_DECREF(b);
    return NULL;
}

// _wrap_buffer(obj, executor) -> Buffer over a C-contiguous buffer-protocol object's memory (no
// copy; the Buffer holds the view, which keeps obj alive). None when obj has no C-contiguous
// buffer-protocol view. A numpy array of ml_dtypes.bfloat16 (which the protocol cannot describe)
// is wrapped through a uint16 view of its bits as a bf16 Buffer.
static int get_view(PyObject* obj, Py_buffer* v, int* readonly) {
    *readonly = 0;
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) == 0)
        return 0;
    PyErr_Clear();
    *readonly = 1;
    if (PyObject_GetBuffer(obj, v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) return 0;
    PyErr_Clear();
    return -1;
}

PyObject* hgpy_wrap_buffer(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_wrap_buffer(obj, executor)");
    HgExecutor* e = require_executor(args[1], "asarray");
    if (!e) return NULL;
    if (e->backend != HG_BACKEND_CPU)
        return hgpy_raise_msg(HG_ERR_UNSUPPORTED, "asarray: host memory can only be wrapped by "
                              "a CPU executor, this one is '%s'", hg_backend_name(e->backend));
    Py_buffer v;
    int readonly, bf16 = 0;
    if (get_view(args[0], &v, &readonly)) {
        PyObject* bits = hgpy_bf16_bits(args[0]);
        if (!bits) return NULL;
        int got = bits != args[0] ? get_view(bits, &v, &readonly) : -1;
        Py_DECREF(bits);   // v holds its own reference
        if (got) Py_RETURN_NONE;   // no buffer protocol, or not C-contiguous: no view possible
        bf16 = 1;
    }
    int dt = hgpy_dtype_from_format(v.format, v.itemsize);
    if (bf16 && dt == HG_DTYPE_U16) dt = HG_DTYPE_BF16;
    if (dt < 0) {
        PyObject* r = hgpy_raise_msg(HG_ERR_DTYPE_MISMATCH, "asarray: element format '%s' "
                                     "(%zd bytes) has no hologram dtype", v.format ? v.format : "B",
                                     v.itemsize);
        PyBuffer_Release(&v);
        return r;
    }
    hg_buffer h;
    hg_status s = hg_buffer_wrap(e->ex, (hg_dtype)dt, v.buf, (size_t)(v.len / v.itemsize), &h);
    if (s != HG_OK) {
        PyBuffer_Release(&v);
        return hgpy_raise_status(s, "asarray");
    }
    HgBuffer* b = hgpy_buffer_new(e, h);
    if (!b) {
        PyBuffer_Release(&v);
        return NULL;
    }
    b->view = v;
    b->has_view = 1;
    b->readonly = readonly;
    return (PyObject*)b;
}

// Imports an unused DLPack capsule as a view (a new reference to its Buffer, or NULL).
static HgBuffer* capsule_view(PyObject* cap, HgExecutor* e, hg_tensor* view, const char* fn) {
    DLTensor* t = NULL;
    if (PyCapsule_IsValid(cap, "dltensor_versioned"))
        t = &((DLManagedTensorVersioned*)PyCapsule_GetPointer(cap, "dltensor_versioned"))->dl_tensor;
    else if (PyCapsule_IsValid(cap, "dltensor"))
        t = &((DLManagedTensor*)PyCapsule_GetPointer(cap, "dltensor"))->dl_tensor;
    else
        return (HgBuffer*)PyErr_Format(PyExc_TypeError, "%s: expected an unused DLPack capsule, "
                                       "got %.100s", fn, Py_TYPE(cap)->tp_name);
    if (check_device(e, t->device.device_type, t->device.device_id, fn)) return NULL;
    Py_INCREF(cap);   // consume_capsule releases one reference
    return consume_capsule(cap, e, t->device.device_type, view, fn, 0);
}

// _from_capsule(capsule, executor) -> Tensor over the capsule's memory (no copy; the Tensor's
// Buffer owns the producer's tensor). For producers whose __dlpack__ costs more than the wrap
// itself: torch._C._to_dlpack(t) takes 0.25 us, t.__dlpack__() 2.3 (hologram_torch).
PyObject* hgpy_from_capsule(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_from_capsule(capsule, executor)");
    HgExecutor* e = require_executor(args[1], "from_capsule");
    if (!e) return NULL;
    hg_tensor view;
    HgBuffer* b = capsule_view(args[0], e, &view, "from_capsule");
    if (!b) return NULL;
    PyObject* r = hgpy_tensor_new(b, &view);
    Py_DECREF(b);
    return r;
}

// fn(op, a, b, out) of two producers' tensors (DLPack capsules) into memory the library
// allocates, returned as a DLPack capsule: the whole op with no Python objects in between.
typedef hg_status (*capsule_op_fn)(long op, const hg_tensor* a, const hg_tensor* b, hg_tensor* out);

// A result the library allocated, as a DLPack capsule that alone owns its memory.
static PyObject* export_result(HgExecutor* e, const hg_tensor* out) {
    HgBuffer* c = hgpy_buffer_new(e, out->buffer);
    if (!c) {
        hg_buffer_destroy(out->buffer);
        return NULL;
    }
    // A bare capsule of CUDA memory: its consumer reads on the legacy default stream (DLPack's
    // default). Host memory has no stream to order.
    int cuda = e->backend == HG_BACKEND_CUDA;
    dl_stream ds = {cuda, cuda ? (void*)(uintptr_t)1 : NULL};
    PyObject* cap = export_capsule(c, out, 0, 0, &ds);
    if (cap) c->freed = 1;   // only the capsule can reach it; the memory goes with the capsule
    Py_DECREF(c);
    return cap;
}

static PyObject* capsule_op(capsule_op_fn fn, long op, PyObject* const* caps, PyObject* executor,
                            const char* name) {
    HgExecutor* e = require_executor(executor, name);
    if (!e) return NULL;
    hg_tensor va, vb, out;
    HgBuffer* a = capsule_view(caps[0], e, &va, name);
    if (!a) return NULL;
    HgBuffer* b = capsule_view(caps[1], e, &vb, name);
    if (!b) {
        Py_DECREF(a);
        return NULL;
    }
    memset(&out, 0, sizeof out);
    hg_status s;
    if (hgpy_numel(&va) + hgpy_numel(&vb) >= HGPY_GIL_ELEMS) {
        hgpy_buffer_hold(a);
        hgpy_buffer_hold(b);
        Py_BEGIN_ALLOW_THREADS
        s = fn(op, &va, &vb, &out);
        Py_END_ALLOW_THREADS
        hgpy_buffer_unhold(a);
        hgpy_buffer_unhold(b);
    } else {
        s = fn(op, &va, &vb, &out);
    }
    Py_DECREF(a);
    Py_DECREF(b);
    if (s != HG_OK) return hgpy_raise_status(s, name);
    return export_result(e, &out);
}

static hg_status binary_op(long op, const hg_tensor* a, const hg_tensor* b, hg_tensor* out) {
    return hg_binary((hg_binary_op)op, a, b, out);
}

static hg_status matmul_op(long op, const hg_tensor* a, const hg_tensor* b, hg_tensor* out) {
    (void)op;
    return hg_matmul(a, b, out);
}

// _capsule_binary(op, capsule_a, capsule_b, executor) -> a DLPack capsule of hg_binary(op, a, b)
// (hologram_torch's add/sub/mul/div of one dtype). The Python-level round trip (two
// _from_capsule Tensors, the op, __dlpack__) cost ~1 us more of a 1-element torch add.
PyObject* hgpy_capsule_binary(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError, "_capsule_binary(op, capsule_a, capsule_b, executor)");
    long op = PyLong_AsLong(args[0]);
    if (op == -1 && PyErr_Occurred()) return NULL;
    if (op < 0 || op >= HG_BINARY_COUNT)
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "_capsule_binary: op code %ld out of range",
                              op);
    return capsule_op(binary_op, op, args + 1, args[3], hg_binary_op_name((hg_binary_op)op));
}

// _capsule_addmm(capsule_bias, capsule_a, capsule_b, executor) -> a DLPack capsule of
// a @ b + bias (bias broadcast, added in place into the product: hologram.ops.linear's two
// calls), the compile backend's addmm.
PyObject* hgpy_capsule_addmm(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError,
                            "_capsule_addmm(capsule_bias, capsule_a, capsule_b, executor)");
    HgExecutor* e = require_executor(args[3], "addmm");
    if (!e) return NULL;
    hg_tensor v[3], out;
    HgBuffer* h[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        if (!(h[i] = capsule_view(args[i], e, &v[i], "addmm"))) {
            for (int j = 0; j < i; j++) Py_DECREF(h[j]);
            return NULL;
        }
    memset(&out, 0, sizeof out);
    int release = hgpy_numel(&v[1]) + hgpy_numel(&v[2]) >= HGPY_GIL_ELEMS;
    hg_status s;
    if (release) {
        for (int i = 0; i < 3; i++) hgpy_buffer_hold(h[i]);
        Py_BEGIN_ALLOW_THREADS
        s = hg_matmul(&v[1], &v[2], &out);
        if (s == HG_OK) s = hg_binary(HG_BINARY_ADD, &out, &v[0], &out);
        Py_END_ALLOW_THREADS
        for (int i = 0; i < 3; i++) hgpy_buffer_unhold(h[i]);
    } else {
        s = hg_matmul(&v[1], &v[2], &out);
        if (s == HG_OK) s = hg_binary(HG_BINARY_ADD, &out, &v[0], &out);
    }
    for (int i = 0; i < 3; i++) Py_DECREF(h[i]);
    if (s != HG_OK) {
        if (out.buffer.handle) hg_buffer_destroy(out.buffer);
        return hgpy_raise_status(s, "addmm");
    }
    return export_result(e, &out);
}

// _capsule_matmul(capsule_a, capsule_b, executor) -> a DLPack capsule of hg_matmul(a, b) (the
// compile backend's mm / bmm: ~3 us of Python per call saved).
PyObject* hgpy_capsule_matmul(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3)
        return PyErr_Format(PyExc_TypeError, "_capsule_matmul(capsule_a, capsule_b, executor)");
    return capsule_op(matmul_op, 0, args, args[2], "matmul");
}
