// hologram._C.Tensor: N-d strided views over Buffers. The view machinery (reshape, permute,
// slice, ...) is the library's (hg_tensor_*); this file holds the object, its attributes, the
// element read behind bool()/int()/float(), and the operator slots, which call tensor_ops.c.
// hologram.Tensor (python/hologram/tensor.py) subclasses it with the Python-level methods
// (indexing, reductions, numpy(), repr).
#include <string.h>
#include "hgpy.h"

PyTypeObject* hgpy_tensor_type = &HgTensor_Type;

// --- lifetime -----------------------------------------------------------------------------------
PyObject* hgpy_tensor_new(HgBuffer* base, const hg_tensor* t) {
    HgTensor* o = (HgTensor*)hgpy_tensor_type->tp_alloc(hgpy_tensor_type, 0);
    if (!o) return NULL;
    Py_INCREF(base);
    o->base = base;
    o->t = *t;
    o->weakreflist = NULL;
    return (PyObject*)o;
}

PyObject* hgpy_tensor_from_result(HgExecutor* owner, const hg_tensor* t) {
    // The library made a C-contiguous buffer of exactly the result's elements.
    size_t count = 1;
    for (int32_t d = 0; d < t->ndim; d++) count *= (size_t)t->shape[d];
    HgBuffer* b = hgpy_buffer_new_known(owner, t->buffer, t->dtype, count);   // destroys h on failure
    if (!b) return NULL;
    b->op_result = 1;
    PyObject* r = hgpy_tensor_new(b, t);
    Py_DECREF(b);
    return r;
}

int hgpy_tensor_check(HgTensor* t) {
    if (!t->base) {
        PyErr_SetString(PyExc_RuntimeError, "Tensor was not initialized");
        return -1;
    }
    return hgpy_buffer_check(t->base);
}

static void Tensor_dealloc(HgTensor* self) {
    PyObject_GC_UnTrack(self);
    if (self->weakreflist) PyObject_ClearWeakRefs((PyObject*)self);
    Py_CLEAR(self->base);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static int Tensor_traverse(HgTensor* self, visitproc visit, void* arg) {
    Py_VISIT(self->base);
    return 0;
}

static int Tensor_clear(HgTensor* self) {
    Py_CLEAR(self->base);
    return 0;
}

// --- argument helpers ---------------------------------------------------------------------------
// A shape/axes sequence of Python ints into out[0..*n) (at most HG_MAX_DIMS entries).
static int int_tuple(PyObject* seq, const char* what, int64_t* out, int32_t* n) {
    if (PyLong_Check(seq)) {
        out[0] = PyLong_AsLongLong(seq);
        if (out[0] == -1 && PyErr_Occurred()) return -1;
        *n = 1;
        return 0;
    }
    PyObject* fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    if (len > HG_MAX_DIMS) {
        Py_DECREF(fast);
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: %zd dims, at most %d are supported", what,
                       len, HG_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject* it = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyLong_Check(it) && !PyIndex_Check(it)) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_TypeError, "%s: expected ints, got %.100s", what,
                         Py_TYPE(it)->tp_name);
            return -1;
        }
        out[i] = PyLong_AsLongLong(it);
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    *n = (int32_t)len;
    Py_DECREF(fast);
    return 0;
}

static PyObject* tuple_of(const int64_t* v, int32_t n) {
    PyObject* t = PyTuple_New(n);
    if (!t) return NULL;
    for (int32_t i = 0; i < n; i++) {
        PyObject* x = PyLong_FromLongLong(v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

// --- construction -------------------------------------------------------------------------------
// Tensor(buffer, shape=None, strides=None, offset=0): a view of buffer's memory (no copy).
// shape None: the whole buffer as 1-D; strides None: C-contiguous.
static PyObject* Tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
    static char* kwlist[] = {"buffer", "shape", "strides", "offset", NULL};
    PyObject *bufobj, *shape_obj = Py_None, *strides_obj = Py_None;
    long long offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOL:Tensor", kwlist, &bufobj, &shape_obj,
                                     &strides_obj, &offset))
        return NULL;
    if (Py_TYPE(bufobj) != &HgBuffer_Type) {
        return PyErr_Format(PyExc_TypeError, "Tensor: expected a hologram.Buffer, got %.100s (use "
                            "hologram.asarray / hologram.tensor for arrays)",
                            Py_TYPE(bufobj)->tp_name);
    }
    HgBuffer* b = (HgBuffer*)bufobj;
    if (hgpy_buffer_check(b)) return NULL;
    int64_t shape[HG_MAX_DIMS], strides[HG_MAX_DIMS];
    int32_t nd = 1, ns = 0;
    shape[0] = (int64_t)b->count;
    if (shape_obj != Py_None && int_tuple(shape_obj, "Tensor: shape", shape, &nd)) return NULL;
    if (strides_obj != Py_None) {
        if (int_tuple(strides_obj, "Tensor: strides", strides, &ns)) return NULL;
        if (ns != nd)
            return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "Tensor: %d strides for %d dims", ns,
                                  nd);
    }
    hg_tensor t;
    hg_status s = hg_tensor_view(b->buf, nd, shape, strides_obj != Py_None ? strides : NULL,
                                 offset, &t);
    if (s != HG_OK) return hgpy_raise_status(s, "Tensor");
    HgTensor* o = (HgTensor*)type->tp_alloc(type, 0);
    if (!o) return NULL;
    Py_INCREF(b);
    o->base = b;
    o->t = t;
    o->weakreflist = NULL;
    return (PyObject*)o;
}

// --- attributes ---------------------------------------------------------------------------------
static PyObject* T_shape(HgTensor* self, void* c) { return tuple_of(self->t.shape, self->t.ndim); }
static PyObject* T_strides(HgTensor* self, void* c) {
    return tuple_of(self->t.strides, self->t.ndim);
}
static PyObject* T_ndim(HgTensor* self, void* c) { return PyLong_FromLong(self->t.ndim); }
static PyObject* T_size(HgTensor* self, void* c) { return PyLong_FromLongLong(hgpy_numel(&self->t)); }
static PyObject* T_offset(HgTensor* self, void* c) { return PyLong_FromLongLong(self->t.offset); }
static PyObject* T_dtype(HgTensor* self, void* c) {
    return Py_NewRef(hgpy_numpy_dtype(self->t.dtype));
}
static PyObject* T_dtype_name(HgTensor* self, void* c) {
    return PyUnicode_FromString(hg_dtype_name(self->t.dtype));
}
static PyObject* T_itemsize(HgTensor* self, void* c) {
    return PyLong_FromSize_t(hg_dtype_size(self->t.dtype));
}
static PyObject* T_nbytes(HgTensor* self, void* c) {
    return PyLong_FromLongLong(hgpy_numel(&self->t) * (int64_t)hg_dtype_size(self->t.dtype));
}
static PyObject* T_buffer(HgTensor* self, void* c) { return Py_NewRef(self->base); }
static PyObject* T_executor(HgTensor* self, void* c) { return Py_NewRef(self->base->owner); }
static PyObject* T_backend(HgTensor* self, void* c) {
    return PyUnicode_FromString(hg_backend_name(self->base->owner->backend));
}
static PyObject* T_readonly(HgTensor* self, void* c) { return PyBool_FromLong(self->base->readonly); }
static PyObject* T_is_contiguous(HgTensor* self, void* c) {
    int r = 0;
    hg_tensor_is_contiguous(&self->t, &r);
    return PyBool_FromLong(r);
}
// Host address of element (0, ..., 0), or 0 where the memory is not host-visible.
static PyObject* T_data_ptr(HgTensor* self, void* c) {
    if (hgpy_tensor_check(self)) return NULL;
    if (!self->base->data) return PyLong_FromLong(0);
    char* p = (char*)self->base->data + self->t.offset * (int64_t)hg_dtype_size(self->t.dtype);
    return PyLong_FromVoidPtr(p);
}

// __array_interface__ (CPU memory): the view's shape and byte strides. As for Buffer, the
// protocol has no release hook, so reading it pins the Buffer's memory until the Buffer object
// is deallocated (the consumer keeps this Tensor, which keeps the Buffer).
// bf16 with ml_dtypes: no interface (its typestr cannot name bfloat16), so that numpy takes
// __array__ and np.asarray(t) gets numpy()'s dtype.
static PyObject* T_array_interface(HgTensor* self, void* c) {
    if (hgpy_tensor_check(self)) return NULL;
    if (self->t.dtype == HG_DTYPE_BF16 && hgpy_bf16_is_ml_dtypes())
        return PyErr_Format(PyExc_AttributeError, "__array_interface__: bfloat16 has no typestr; "
                            "use numpy() or np.asarray(t) (ml_dtypes.bfloat16)");
    HgBuffer* b = self->base;
    if (!b->data)
        return hgpy_raise_msg(HG_ERR_UNSUPPORTED, "__array_interface__: the Tensor is in %s "
                              "device memory, not host memory (use numpy(copy=True))",
                              hg_backend_name(b->owner->backend));
    int64_t es = (int64_t)hg_dtype_size(self->t.dtype);
    int64_t bst[HG_MAX_DIMS];
    for (int32_t d = 0; d < self->t.ndim; d++) bst[d] = self->t.strides[d] * es;
    PyObject* shape = tuple_of(self->t.shape, self->t.ndim);
    PyObject* strides = tuple_of(bst, self->t.ndim);
    char* p = (char*)b->data + self->t.offset * es;
    PyObject* d = (shape && strides)
        ? Py_BuildValue("{s:O,s:s,s:(N,O),s:O,s:i}", "shape", shape, "typestr",
                        hgpy_typestr(self->t.dtype), "data", PyLong_FromVoidPtr(p),
                        b->readonly ? Py_True : Py_False, "strides", strides, "version", 3)
        : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (d) b->pinned = 1;
    return d;
}

// __cuda_array_interface__ (version 3, CUDA memory): the device address of element
// (0, ..., 0), byte strides, and the executor's stream, on which consumers synchronize (work is
// queued; None where there is no stream: the emulation, whose calls complete before they
// return). Pins the memory as above.
static PyObject* T_cuda_array_interface(HgTensor* self, void* c) {
    if (hgpy_tensor_check(self)) return NULL;
    HgBuffer* b = self->base;
    if (b->owner->backend != HG_BACKEND_CUDA) {
        PyErr_Format(PyExc_AttributeError, "__cuda_array_interface__: the Tensor is in %s "
                     "memory, not CUDA device memory", hg_backend_name(b->owner->backend));
        return NULL;
    }
    uint64_t addr = 0;
    hg_status st = hg_buffer_device_address(b->buf, &addr);
    if (st) return hgpy_raise_status(st, "__cuda_array_interface__");
    int64_t es = (int64_t)hg_dtype_size(self->t.dtype);
    int64_t bst[HG_MAX_DIMS];
    for (int32_t d = 0; d < self->t.ndim; d++) bst[d] = self->t.strides[d] * es;
    PyObject* shape = tuple_of(self->t.shape, self->t.ndim);
    PyObject* strides = tuple_of(bst, self->t.ndim);
    uint64_t p = addr + (uint64_t)(self->t.offset * es);
    void* stream = NULL;
    if ((st = hg_executor_stream(b->owner->ex, &stream))) {
        Py_XDECREF(shape);
        Py_XDECREF(strides);
        return hgpy_raise_status(st, "__cuda_array_interface__");
    }
    PyObject* sobj = stream ? PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)stream)
                            : Py_NewRef(Py_None);
    PyObject* d = (shape && strides && sobj)
        ? Py_BuildValue("{s:O,s:s,s:(N,O),s:O,s:i,s:O}", "shape", shape, "typestr",
                        hgpy_typestr(self->t.dtype), "data", PyLong_FromUnsignedLongLong(p),
                        b->readonly ? Py_True : Py_False, "strides", strides, "version", 3,
                        "stream", sobj)
        : NULL;
    Py_XDECREF(sobj);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    if (d) b->pinned = 1;
    return d;
}

// Device address of element (0, ..., 0) (CUDA: a CUdeviceptr; CPU: equal to data_ptr).
static PyObject* T_device_ptr(HgTensor* self, void* c) {
    if (hgpy_tensor_check(self)) return NULL;
    uint64_t addr = 0;
    hg_status st = hg_buffer_device_address(self->base->buf, &addr);
    if (st) return hgpy_raise_status(st, "device_ptr");
    return PyLong_FromUnsignedLongLong(addr + (uint64_t)(self->t.offset *
                                                         (int64_t)hg_dtype_size(self->t.dtype)));
}

// --- one element as a Python number ------------------------------------------------------------
static PyObject* read_element(HgTensor* self, const char* what) {
    if (hgpy_tensor_check(self)) return NULL;
    if (hgpy_numel(&self->t) != 1)
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "%s: only a Tensor of one element can "
                              "be converted to a Python scalar (this one has shape of %lld "
                              "elements)", what, (long long)hgpy_numel(&self->t));
    unsigned char v[8] = {0};
    size_t es = hg_dtype_size(self->t.dtype);
    if (self->base->data) {
        memcpy(v, (char*)self->base->data + self->t.offset * (int64_t)es, es);
    } else {
        hg_status s = hg_buffer_read(self->base->buf, (size_t)self->t.offset, v, 1);
        if (s != HG_OK) return hgpy_raise_status(s, what);
    }
    switch (self->t.dtype) {
    case HG_DTYPE_BOOL: return PyBool_FromLong(v[0] != 0);
    case HG_DTYPE_I8: { int8_t x; memcpy(&x, v, 1); return PyLong_FromLong(x); }
    case HG_DTYPE_I16: { int16_t x; memcpy(&x, v, 2); return PyLong_FromLong(x); }
    case HG_DTYPE_I32: { int32_t x; memcpy(&x, v, 4); return PyLong_FromLong(x); }
    case HG_DTYPE_I64: { int64_t x; memcpy(&x, v, 8); return PyLong_FromLongLong(x); }
    case HG_DTYPE_U8: return PyLong_FromUnsignedLong(v[0]);
    case HG_DTYPE_U16: { uint16_t x; memcpy(&x, v, 2); return PyLong_FromUnsignedLong(x); }
    case HG_DTYPE_U32: { uint32_t x; memcpy(&x, v, 4); return PyLong_FromUnsignedLong(x); }
    case HG_DTYPE_U64: { uint64_t x; memcpy(&x, v, 8); return PyLong_FromUnsignedLongLong(x); }
    case HG_DTYPE_F16: { uint16_t x; memcpy(&x, v, 2); return PyFloat_FromDouble(hg_f16_to_f32(x)); }
    case HG_DTYPE_BF16: { uint16_t x; memcpy(&x, v, 2); return PyFloat_FromDouble(hg_bf16_to_f32(x)); }
    case HG_DTYPE_F32: { float x; memcpy(&x, v, 4); return PyFloat_FromDouble(x); }
    default: { double x; memcpy(&x, v, 8); return PyFloat_FromDouble(x); }
    }
}

static PyObject* Tensor_item(HgTensor* self, PyObject* unused) { return read_element(self, "item"); }

static int Tensor_bool(HgTensor* self) {
    if (hgpy_tensor_check(self)) return -1;
    if (hgpy_numel(&self->t) != 1) {
        PyErr_Format(PyExc_ValueError, "The truth value of a Tensor with %lld elements is "
                     "ambiguous; use .any() or .all()", (long long)hgpy_numel(&self->t));
        return -1;
    }
    PyObject* v = read_element(self, "bool");
    if (!v) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static PyObject* Tensor_float(HgTensor* self) {
    PyObject* v = read_element(self, "float");
    if (!v) return NULL;
    PyObject* r = PyNumber_Float(v);
    Py_DECREF(v);
    return r;
}

static PyObject* Tensor_int(HgTensor* self) {
    PyObject* v = read_element(self, "int");
    if (!v) return NULL;
    PyObject* r = PyNumber_Long(v);   // floats truncate, NaN/inf raise as for float
    Py_DECREF(v);
    return r;
}

// operator.index: integer and bool tensors of one element only (numpy's rule).
static PyObject* Tensor_index(HgTensor* self) {
    if (self->t.dtype == HG_DTYPE_F16 || self->t.dtype == HG_DTYPE_BF16 ||
        self->t.dtype == HG_DTYPE_F32 || self->t.dtype == HG_DTYPE_F64) {
        PyErr_SetString(PyExc_TypeError, "only integer Tensors of one element can be used as "
                        "an index");
        return NULL;
    }
    PyObject* v = read_element(self, "index");
    if (!v) return NULL;
    PyObject* r = PyNumber_Long(v);
    Py_DECREF(v);
    return r;
}

// --- views --------------------------------------------------------------------------------------
static PyObject* view_result(HgTensor* self, hg_status s, const hg_tensor* out, const char* what) {
    if (s != HG_OK) return hgpy_raise_status(s, what);
    return hgpy_tensor_new(self->base, out);
}

// _reshape(shape): a view when numpy's no-copy rule allows, else a contiguous copy (numpy's
// reshape semantics); -1 infers one size.
static PyObject* Tensor_reshape_impl(HgTensor* self, PyObject* shape_obj) {
    if (hgpy_tensor_check(self)) return NULL;
    int64_t shape[HG_MAX_DIMS];
    int32_t nd = 0;
    if (int_tuple(shape_obj, "reshape: shape", shape, &nd)) return NULL;
    // Infer one -1 here so the message names the element count.
    int64_t known = 1, total = hgpy_numel(&self->t);
    int infer = -1;
    for (int32_t d = 0; d < nd; d++) {
        if (shape[d] == -1) {
            if (infer >= 0)
                return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "reshape: only one dimension "
                                      "can be -1");
            infer = d;
        } else if (shape[d] < 0) {
            return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "reshape: negative size %lld",
                                  (long long)shape[d]);
        } else {
            known *= shape[d];
        }
    }
    if (infer >= 0) {
        if (known == 0 || total % known)
            return hgpy_raise_msg(HG_ERR_SIZE_MISMATCH, "reshape: cannot reshape %lld elements "
                                  "into a shape with a -1 and %lld other elements",
                                  (long long)total, (long long)known);
        shape[infer] = total / known;
    }
    hg_tensor out;
    hg_status s = hg_tensor_reshape(&self->t, nd, shape, &out);
    if (s == HG_OK) return hgpy_tensor_new(self->base, &out);
    if (s != HG_ERR_UNSUPPORTED) return hgpy_raise_status(s, "reshape");
    // Not expressible as a view: copy to contiguous memory first, as numpy does.
    hg_clear_error();
    hg_tensor c;
    int copied = 0;
    hgpy_buffer_hold(self->base);
    Py_BEGIN_ALLOW_THREADS
    s = hg_tensor_contiguous(&self->t, &c, &copied);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(self->base);
    if (s != HG_OK) return hgpy_raise_status(s, "reshape");
    PyObject* ct = copied ? hgpy_tensor_from_result(self->base->owner, &c)
                          : hgpy_tensor_new(self->base, &c);
    if (!ct) return NULL;
    HgTensor* cto = (HgTensor*)ct;
    s = hg_tensor_reshape(&cto->t, nd, shape, &out);
    PyObject* r = s == HG_OK ? hgpy_tensor_new(cto->base, &out) : hgpy_raise_status(s, "reshape");
    Py_DECREF(ct);
    return r;
}

static PyObject* Tensor_permute_impl(HgTensor* self, PyObject* perm_obj) {
    if (hgpy_tensor_check(self)) return NULL;
    int64_t p64[HG_MAX_DIMS];
    int32_t n = 0, perm[HG_MAX_DIMS];
    if (int_tuple(perm_obj, "transpose: axes", p64, &n)) return NULL;
    if (n != self->t.ndim)
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "transpose: %d axes given for a %d-d "
                              "Tensor", n, self->t.ndim);
    for (int32_t i = 0; i < n; i++) perm[i] = (int32_t)p64[i];
    hg_tensor out;
    return view_result(self, hg_tensor_permute(&self->t, perm, &out), &out, "transpose");
}

// _slice(dim, start, stop, step): start/stop None = open ends (Python slice semantics).
static PyObject* Tensor_slice_impl(HgTensor* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 4) return PyErr_Format(PyExc_TypeError, "_slice(dim, start, stop, step)");
    if (hgpy_tensor_check(self)) return NULL;
    long dim = PyLong_AsLong(args[0]);
    if (dim == -1 && PyErr_Occurred()) return NULL;
    int64_t v[3];
    const int64_t none[3] = {HG_SLICE_NONE, HG_SLICE_NONE, 1};
    for (int i = 0; i < 3; i++) {
        PyObject* o = args[1 + i];
        if (o == Py_None) {
            v[i] = none[i];
            continue;
        }
        PyObject* ix = PyNumber_Index(o);
        if (!ix) return NULL;
        int overflow = 0;
        v[i] = PyLong_AsLongLongAndOverflow(ix, &overflow);
        Py_DECREF(ix);
        if (v[i] == -1 && PyErr_Occurred()) return NULL;
        if (overflow) v[i] = overflow > 0 ? HG_SLICE_END : HG_SLICE_NONE + 1;
    }
    if (v[2] == 0) return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "slice step cannot be zero");
    hg_tensor out;
    return view_result(self, hg_tensor_slice(&self->t, (int32_t)dim, v[0], v[1], v[2], &out),
                       &out, "index");
}

static PyObject* Tensor_select_impl(HgTensor* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_select(dim, index)");
    if (hgpy_tensor_check(self)) return NULL;
    long dim = PyLong_AsLong(args[0]);
    if (dim == -1 && PyErr_Occurred()) return NULL;
    PyObject* ix = PyNumber_Index(args[1]);
    if (!ix) return NULL;
    long long index = PyLong_AsLongLong(ix);
    Py_DECREF(ix);
    if (index == -1 && PyErr_Occurred()) return NULL;
    hg_tensor out;
    return view_result(self, hg_tensor_select(&self->t, (int32_t)dim, index, &out), &out, "index");
}

static PyObject* Tensor_expand_impl(HgTensor* self, PyObject* shape_obj) {
    if (hgpy_tensor_check(self)) return NULL;
    int64_t shape[HG_MAX_DIMS];
    int32_t nd = 0;
    if (int_tuple(shape_obj, "broadcast_to: shape", shape, &nd)) return NULL;
    hg_tensor out;
    return view_result(self, hg_tensor_expand(&self->t, nd, shape, &out), &out, "broadcast_to");
}

static PyObject* Tensor_squeeze_impl(HgTensor* self, PyObject* dim_obj) {
    if (hgpy_tensor_check(self)) return NULL;
    int32_t dim = HG_ALL_DIMS;
    if (dim_obj != Py_None) {
        long d = PyLong_AsLong(dim_obj);
        if (d == -1 && PyErr_Occurred()) return NULL;
        dim = (int32_t)d;
    }
    hg_tensor out;
    return view_result(self, hg_tensor_squeeze(&self->t, dim, &out), &out, "squeeze");
}

static PyObject* Tensor_unsqueeze_impl(HgTensor* self, PyObject* dim_obj) {
    if (hgpy_tensor_check(self)) return NULL;
    long d = PyLong_AsLong(dim_obj);
    if (d == -1 && PyErr_Occurred()) return NULL;
    hg_tensor out;
    return view_result(self, hg_tensor_unsqueeze(&self->t, (int32_t)d, &out), &out, "unsqueeze");
}

// contiguous(): self when already C-contiguous, else a C-contiguous copy.
static PyObject* Tensor_contiguous(HgTensor* self, PyObject* unused) {
    if (hgpy_tensor_check(self)) return NULL;
    hg_tensor c;
    int copied = 0;
    hg_status s;
    hgpy_buffer_hold(self->base);
    Py_BEGIN_ALLOW_THREADS
    s = hg_tensor_contiguous(&self->t, &c, &copied);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(self->base);
    if (s != HG_OK) return hgpy_raise_status(s, "contiguous");
    if (!copied) return Py_NewRef(self);
    return hgpy_tensor_from_result(self->base->owner, &c);
}

// --- operator slots -----------------------------------------------------------------------------
#define BINOP(name, op)                                                                        \
    static PyObject* name(PyObject* a, PyObject* b) { return hgpy_binary_operator(op, a, b, 0); } \
    static PyObject* name##_inplace(PyObject* a, PyObject* b) {                                \
        return hgpy_binary_operator(op, a, b, 1);                                              \
    }
BINOP(T_add, HG_BINARY_ADD)
BINOP(T_sub, HG_BINARY_SUB)
BINOP(T_mul, HG_BINARY_MUL)
BINOP(T_truediv, HG_BINARY_DIV)
BINOP(T_floordiv, HG_BINARY_FLOOR_DIVIDE)
BINOP(T_mod, HG_BINARY_REMAINDER)
BINOP(T_and, HG_BINARY_BITWISE_AND)
BINOP(T_or, HG_BINARY_BITWISE_OR)
BINOP(T_xor, HG_BINARY_BITWISE_XOR)
BINOP(T_lshift, HG_BINARY_LEFT_SHIFT)
BINOP(T_rshift, HG_BINARY_RIGHT_SHIFT)
#undef BINOP

static PyObject* T_pow(PyObject* a, PyObject* b, PyObject* mod) {
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return hgpy_binary_operator(HG_BINARY_POW, a, b, 0);
}
static PyObject* T_pow_inplace(PyObject* a, PyObject* b, PyObject* mod) {
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return hgpy_binary_operator(HG_BINARY_POW, a, b, 1);
}
static PyObject* T_matmul(PyObject* a, PyObject* b) { return hgpy_matmul_operator(a, b, 0); }
static PyObject* T_matmul_inplace(PyObject* a, PyObject* b) { return hgpy_matmul_operator(a, b, 1); }
static PyObject* T_neg(PyObject* x) { return hgpy_unary_operator(HG_UNARY_NEG, x); }
static PyObject* T_abs(PyObject* x) { return hgpy_unary_operator(HG_UNARY_ABS, x); }
static PyObject* T_invert(PyObject* x) {
    // numpy: ~ of a bool array is logical not.
    hg_unary_op op = ((HgTensor*)x)->t.dtype == HG_DTYPE_BOOL ? HG_UNARY_LOGICAL_NOT
                                                               : HG_UNARY_BITWISE_NOT;
    return hgpy_unary_operator(op, x);
}
// +x: a copy, as numpy's positive.
static PyObject* T_pos(PyObject* x) {
    HgTensor* t = (HgTensor*)x;
    if (hgpy_tensor_check(t)) return NULL;
    hg_tensor out = {0};
    hg_status s;
    hgpy_buffer_hold(t->base);
    Py_BEGIN_ALLOW_THREADS
    s = hg_cast(&t->t, t->t.dtype, &out);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(t->base);
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    return hgpy_tensor_from_result(t->base->owner, &out);
}

static PyObject* Tensor_richcompare(PyObject* a, PyObject* b, int op) {
    hg_binary_op bop;
    switch (op) {
    case Py_EQ: bop = HG_BINARY_EQ; break;
    case Py_NE: bop = HG_BINARY_NE; break;
    case Py_LT: bop = HG_BINARY_LT; break;
    case Py_LE: bop = HG_BINARY_LE; break;
    case Py_GT: bop = HG_BINARY_GT; break;
    default: bop = HG_BINARY_GE; break;
    }
    return hgpy_binary_operator(bop, a, b, 0);
}

static PyNumberMethods Tensor_as_number = {
    .nb_add = T_add, .nb_subtract = T_sub, .nb_multiply = T_mul, .nb_remainder = T_mod,
    .nb_power = T_pow, .nb_negative = T_neg, .nb_positive = T_pos, .nb_absolute = T_abs,
    .nb_bool = (inquiry)Tensor_bool, .nb_invert = T_invert, .nb_lshift = T_lshift,
    .nb_rshift = T_rshift, .nb_and = T_and, .nb_xor = T_xor, .nb_or = T_or,
    .nb_int = (unaryfunc)Tensor_int, .nb_float = (unaryfunc)Tensor_float,
    .nb_inplace_add = T_add_inplace, .nb_inplace_subtract = T_sub_inplace,
    .nb_inplace_multiply = T_mul_inplace, .nb_inplace_remainder = T_mod_inplace,
    .nb_inplace_power = T_pow_inplace, .nb_inplace_lshift = T_lshift_inplace,
    .nb_inplace_rshift = T_rshift_inplace, .nb_inplace_and = T_and_inplace,
    .nb_inplace_xor = T_xor_inplace, .nb_inplace_or = T_or_inplace,
    .nb_floor_divide = T_floordiv, .nb_true_divide = T_truediv,
    .nb_inplace_floor_divide = T_floordiv_inplace, .nb_inplace_true_divide = T_truediv_inplace,
    .nb_index = (unaryfunc)Tensor_index, .nb_matrix_multiply = T_matmul,
    .nb_inplace_matrix_multiply = T_matmul_inplace,
};

static PyMethodDef Tensor_methods[] = {
    {"item", (PyCFunction)Tensor_item, METH_NOARGS,
     "item(): the value of a one-element Tensor as a Python bool, int or float."},
    {"contiguous", (PyCFunction)Tensor_contiguous, METH_NOARGS,
     "contiguous(): self if C-contiguous, else a C-contiguous copy."},
    {"_reshape", (PyCFunction)Tensor_reshape_impl, METH_O, NULL},
    {"_permute", (PyCFunction)Tensor_permute_impl, METH_O, NULL},
    {"_slice", (PyCFunction)(void (*)(void))Tensor_slice_impl, METH_FASTCALL, NULL},
    {"_select", (PyCFunction)(void (*)(void))Tensor_select_impl, METH_FASTCALL, NULL},
    {"_expand", (PyCFunction)Tensor_expand_impl, METH_O, NULL},
    {"_squeeze", (PyCFunction)Tensor_squeeze_impl, METH_O, NULL},
    {"_unsqueeze", (PyCFunction)Tensor_unsqueeze_impl, METH_O, NULL},
    {"__dlpack__", (PyCFunction)(void (*)(void))hgpy_tensor_dlpack,
     METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule "
     "of this view (no copy)."},
    {"__dlpack_device__", (PyCFunction)hgpy_tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (device_type, device_id)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Tensor_getset[] = {
    {"shape", (getter)T_shape, NULL, "Sizes of the dims (tuple).", NULL},
    {"strides", (getter)T_strides, NULL,
     "Strides of the dims in elements (numpy's strides are in bytes: see byte_strides).", NULL},
    {"ndim", (getter)T_ndim, NULL, "Number of dims.", NULL},
    {"size", (getter)T_size, NULL, "Number of elements.", NULL},
    {"offset", (getter)T_offset, NULL, "Element index in the Buffer of element (0, ..., 0).", NULL},
    {"dtype", (getter)T_dtype, NULL, "numpy dtype of the elements (bfloat16: ml_dtypes.bfloat16 "
     "when ml_dtypes is installed, else uint16, the raw bits).", NULL},
    {"dtype_name", (getter)T_dtype_name, NULL, "Hologram dtype name ('f32', 'bf16', ...).", NULL},
    {"itemsize", (getter)T_itemsize, NULL, "Bytes per element.", NULL},
    {"nbytes", (getter)T_nbytes, NULL, "size * itemsize.", NULL},
    {"buffer", (getter)T_buffer, NULL, "The Buffer whose memory this view reads.", NULL},
    {"executor", (getter)T_executor, NULL, "The Executor of the Buffer.", NULL},
    {"backend", (getter)T_backend, NULL, "The Executor's backend name.", NULL},
    {"readonly", (getter)T_readonly, NULL, "True over read-only foreign memory.", NULL},
    {"is_contiguous", (getter)T_is_contiguous, NULL, "True when C-contiguous.", NULL},
    {"data_ptr", (getter)T_data_ptr, NULL,
     "Host address of element (0, ..., 0); 0 for device memory.", NULL},
    {"__array_interface__", (getter)T_array_interface, NULL,
     "numpy's array interface (CPU memory; pins the Buffer's memory, see docs/python.md).", NULL},
    {"__cuda_array_interface__", (getter)T_cuda_array_interface, NULL,
     "The CUDA array interface, version 3 (CUDA memory; pins the Buffer's memory).", NULL},
    {"device_ptr", (getter)T_device_ptr, NULL,
     "Device address of element (0, ..., 0) (CUDA: CUdeviceptr; CPU: the host address).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject HgTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram._C.Tensor",
    .tp_basicsize = sizeof(HgTensor),
    .tp_dealloc = (destructor)Tensor_dealloc,
    .tp_as_number = &Tensor_as_number,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Tensor(buffer, shape=None, strides=None, offset=0): an N-d strided view of a "
              "Buffer's memory (no copy). Use hologram.Tensor, which adds the Python methods.",
    .tp_traverse = (traverseproc)Tensor_traverse,
    .tp_clear = (inquiry)Tensor_clear,
    .tp_richcompare = Tensor_richcompare,
    .tp_weaklistoffset = offsetof(HgTensor, weakreflist),
    .tp_methods = Tensor_methods,
    .tp_getset = Tensor_getset,
    .tp_new = Tensor_new,
};

// _set_tensor_class(cls): the Python subclass results are made of.
static PyObject* m_set_tensor_class(PyObject* self, PyObject* cls) {
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject*)cls, &HgTensor_Type))
        return PyErr_Format(PyExc_TypeError, "_set_tensor_class: expected a subclass of "
                            "_C.Tensor");
    if (((PyTypeObject*)cls)->tp_basicsize != HgTensor_Type.tp_basicsize)
        return PyErr_Format(PyExc_TypeError, "_set_tensor_class: the subclass must not add "
                            "instance storage (use __slots__ = ())");
    Py_INCREF(cls);
    if (hgpy_tensor_type != &HgTensor_Type) Py_DECREF((PyObject*)hgpy_tensor_type);
    hgpy_tensor_type = (PyTypeObject*)cls;
    Py_RETURN_NONE;
}

static PyMethodDef tensor_module_methods[] = {
    {"_set_tensor_class", m_set_tensor_class, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

// {name: code} of an op enum, from the library's own names.
static int add_op_table(PyObject* m, const char* attr, int count, const char* (*name)(int)) {
    PyObject* d = PyDict_New();
    if (!d) return -1;
    for (int i = 0; i < count; i++) {
        PyObject* v = PyLong_FromLong(i);
        if (!v || PyDict_SetItemString(d, name(i), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return -1;
        }
        Py_DECREF(v);
    }
    return PyModule_AddObject(m, attr, d);
}
static const char* unary_name(int i) { return hg_unary_op_name((hg_unary_op)i); }
static const char* binary_name(int i) { return hg_binary_op_name((hg_binary_op)i); }
static const char* reduce_name(int i) { return hg_reduce_op_name((hg_reduce_op)i); }

int hgpy_tensor_types_init(PyObject* m) {
    if (add_op_table(m, "unary_ops", HG_UNARY_COUNT, unary_name) < 0 ||
        add_op_table(m, "binary_ops", HG_BINARY_COUNT, binary_name) < 0 ||
        add_op_table(m, "reduce_ops", HG_REDUCE_COUNT, reduce_name) < 0)
        return -1;
    if (PyType_Ready(&HgTensor_Type) < 0) return -1;
    Py_INCREF(&HgTensor_Type);
    if (PyModule_AddObject(m, "Tensor", (PyObject*)&HgTensor_Type) < 0) return -1;
    if (PyModule_AddFunctions(m, tensor_module_methods) < 0) return -1;
    if (PyModule_AddFunctions(m, hgpy_tensor_op_methods) < 0) return -1;
    return PyModule_AddFunctions(m, hgpy_tensor_data_methods);
}
