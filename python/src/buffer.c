// hologram._C.Buffer: a typed 1-D array of elements on an Executor's device.
#include <string.h>
#include "hgpy.h"

// --- lifetime -------------------------------------------------------------------------------------
static void link_buffer(HgExecutor* e, HgBuffer* b) {
    b->prev = NULL;
    b->next = e->buffers;
    if (e->buffers) e->buffers->prev = b;
    e->buffers = b;
    e->live_memory++;
}

static void unlink_buffer(HgExecutor* e, HgBuffer* b) {
    if (b->prev) b->prev->next = b->next;
    else e->buffers = b->next;
    if (b->next) b->next->prev = b->prev;
    b->prev = b->next = NULL;
    e->live_memory--;
}

static void destroy_memory(HgBuffer* b) {
    if (b->destroyed) return;
    b->destroyed = 1;
    b->data = NULL;
    // Releasing host memory is quick and waits for nobody (library threads never wait for the
    // GIL: errors.c queues their log messages), so small CPU buffers keep the GIL; device
    // memory may wait for the device, and big mappings for the kernel: those release it.
    // State above is final before it is released.
    if (!b->owner->destroyed &&
        !(b->op_result && hgpy_executor_park(b->owner, b->buf, b->dtype, b->count))) {
        size_t es = hg_dtype_size(b->dtype);
        if (b->owner->backend == HG_BACKEND_CPU && b->count * es <= ((size_t)1 << 20)) {
            hg_buffer_destroy(b->buf);
        } else {
            Py_BEGIN_ALLOW_THREADS
            hg_buffer_destroy(b->buf);
            Py_END_ALLOW_THREADS
        }
    }
    hgpy_release_foreign(b);
    HgExecutor* e = b->owner;
    unlink_buffer(e, b);
    hgpy_executor_maybe_destroy(e);
}

static void maybe_destroy(HgBuffer* b) {
    if (b->freed && !b->destroyed && b->users == 0 && !b->pinned) destroy_memory(b);
}

void hgpy_buffer_unhold(HgBuffer* b) {
    b->users--;
    maybe_destroy(b);
}

void hgpy_buffer_free(HgBuffer* b) {
    b->freed = 1;
    maybe_destroy(b);
}

void hgpy_executor_maybe_destroy(HgExecutor* e) {
    if (e->closed && !e->destroyed && e->live_memory == 0) {
        e->destroyed = 1;
        Py_BEGIN_ALLOW_THREADS
        hg_executor_destroy(e->ex);   // joins the worker threads: never with the GIL held
        Py_END_ALLOW_THREADS
    }
}

HgBuffer* hgpy_buffer_new(HgExecutor* owner, hg_buffer h) {
    hg_dtype dt;
    size_t count;
    hg_status s;
    if ((s = hg_buffer_dtype(h, &dt)) != HG_OK || (s = hg_buffer_count(h, &count)) != HG_OK) {
        hgpy_raise_status(s, "Buffer");
        hg_buffer_destroy(h);
        return NULL;
    }
    return hgpy_buffer_new_known(owner, h, dt, count);
}

HgBuffer* hgpy_buffer_new_known(HgExecutor* owner, hg_buffer h, hg_dtype dt, size_t count) {
    HgBuffer* b = PyObject_GC_New(HgBuffer, &HgBuffer_Type);
    if (!b) {
        hg_buffer_destroy(h);
        return NULL;
    }
    b->buf = h;
    Py_INCREF(owner);
    b->owner = owner;
    b->dtype = dt;
    b->count = count;
    b->freed = b->destroyed = b->readonly = b->pinned = b->op_result = 0;
    b->users = 0;
    b->has_view = 0;
    b->dl_managed = NULL;
    b->dl_versioned = 0;
    b->weakreflist = NULL;
    void* p = NULL;
    b->data = hg_buffer_map(h, &p) == HG_OK ? p : NULL;
    hg_clear_error();
    // Empty host buffers may map to NULL; consumers (numpy, DLPack) want a non-NULL address.
    static _Alignas(16) char empty_host[16];
    if (!b->data && count == 0 && owner->backend == HG_BACKEND_CPU) b->data = empty_host;
    link_buffer(owner, b);
    PyObject_GC_Track(b);
    return b;
}

int hgpy_buffer_check(HgBuffer* b) {
    if (b->freed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "%s Buffer used after %s",
                       hg_dtype_name(b->dtype),
                       b->owner->closed ? "its Executor was closed" : "free()");
        return -1;
    }
    return 0;
}

static void Buffer_dealloc(HgBuffer* b) {
    PyObject_GC_UnTrack(b);
    if (b->weakreflist) PyObject_ClearWeakRefs((PyObject*)b);
    // Nothing else can reach the memory now: views and capsules hold references to b.
    b->freed = 1;
    b->pinned = 0;
    b->users = 0;
    destroy_memory(b);
    Py_CLEAR(b->owner);
    PyObject_GC_Del(b);
}

static int Buffer_traverse(HgBuffer* b, visitproc visit, void* arg) {
    Py_VISIT(b->owner);
    if (b->has_view) Py_VISIT(b->view.obj);
    return 0;
}

// --- helpers ----------------------------------------------------------------------------------------
static int check_writable(HgBuffer* b, const char* what) {
    if (hgpy_buffer_check(b)) return -1;
    if (b->readonly) {
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT,
                       "%s: the Buffer wraps read-only memory and cannot be written", what);
        return -1;
    }
    return 0;
}

// Reads/writes with the GIL released; b is held so that a free() from another thread waits.
static hg_status io_write(HgBuffer* b, const void* src, size_t count) {
    hg_status s;
    hgpy_buffer_hold(b);
    Py_BEGIN_ALLOW_THREADS
    s = hg_buffer_write(b->buf, 0, src, count);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(b);
    return s;
}

static hg_status io_read(HgBuffer* b, void* dst, size_t count) {
    hg_status s;
    hgpy_buffer_hold(b);
    Py_BEGIN_ALLOW_THREADS
    s = hg_buffer_read(b->buf, 0, dst, count);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(b);
    return s;
}

// Gets a C-contiguous buffer view of obj (numpy arrays that are not contiguous go through
// numpy.ascontiguousarray: from_numpy copies anyway).
static int get_contiguous(PyObject* obj, Py_buffer* view, const char* what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) return 0;
    if (!PyErr_ExceptionMatches(PyExc_BufferError) && !PyErr_ExceptionMatches(PyExc_ValueError)) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a numpy array (or any object with the buffer "
                     "protocol), got %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyErr_Clear();
    PyObject* c = PyObject_CallMethod(hgpy_numpy(), "ascontiguousarray", "O", obj);
    if (!c) return -1;
    int r = PyObject_GetBuffer(c, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT);
    Py_DECREF(c);   // the view holds its own reference to c
    return r;
}

// --- methods -----------------------------------------------------------------------------------------
static PyObject* Buffer_from_numpy(HgBuffer* self, PyObject* arr) {
    if (check_writable(self, "Buffer.from_numpy")) return NULL;
    // bf16 buffers take ml_dtypes.bfloat16 arrays as their bits (uint16) too.
    PyObject* bits = self->dtype == HG_DTYPE_BF16 ? hgpy_bf16_bits(arr) : Py_NewRef(arr);
    if (!bits) return NULL;
    Py_buffer v;
    int got = get_contiguous(bits, &v, "Buffer.from_numpy");
    Py_DECREF(bits);   // v holds its own reference
    if (got) return NULL;
    int dt = hgpy_dtype_from_format(v.format, v.itemsize);
    PyObject* ret = NULL;
    size_t n = v.itemsize ? (size_t)(v.len / v.itemsize) : 0;
    // bf16 buffers also take their raw bits from uint16 arrays.
    int ok = dt == (int)self->dtype || (self->dtype == HG_DTYPE_BF16 && dt == HG_DTYPE_U16);
    if (!ok) {
        hgpy_raise_msg(HG_ERR_DTYPE_MISMATCH,
                       "Buffer.from_numpy: array dtype (format '%s', %zd bytes) does not match "
                       "the buffer's %s; convert it first (e.g. arr.astype(buf.dtype))",
                       v.format ? v.format : "B", v.itemsize, hg_dtype_name(self->dtype));
    } else if (n != self->count) {
        hgpy_raise_msg(HG_ERR_SIZE_MISMATCH,
                       "Buffer.from_numpy: array has %zu elements, the buffer holds %zu", n,
                       self->count);
    } else {
        hg_status s = io_write(self, v.buf, n);
        if (s != HG_OK) hgpy_raise_status(s, "Buffer.from_numpy");
        else ret = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&v);
    return ret;
}

static PyObject* Buffer_from_bytes(HgBuffer* self, PyObject* data) {
    if (check_writable(self, "Buffer.from_bytes")) return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(data, &v, PyBUF_C_CONTIGUOUS) != 0) return NULL;
    size_t es = hg_dtype_size(self->dtype);
    PyObject* ret = NULL;
    if ((size_t)v.len != self->count * es) {
        hgpy_raise_msg(HG_ERR_SIZE_MISMATCH,
                       "Buffer.from_bytes: got %zd bytes, the buffer holds %zu bytes (%zu %s "
                       "elements)", v.len, self->count * es, self->count,
                       hg_dtype_name(self->dtype));
    } else {
        hg_status s = io_write(self, v.buf, self->count);
        if (s != HG_OK) hgpy_raise_status(s, "Buffer.from_bytes");
        else ret = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&v);
    return ret;
}

static PyObject* Buffer_to_bytes(HgBuffer* self, PyObject* unused) {
    if (hgpy_buffer_check(self)) return NULL;
    size_t nb = self->count * hg_dtype_size(self->dtype);
    PyObject* out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)nb);
    if (!out) return NULL;
    hg_status s = io_read(self, PyBytes_AS_STRING(out), self->count);
    if (s != HG_OK) {
        Py_DECREF(out);
        return hgpy_raise_status(s, "Buffer.to_bytes");
    }
    return out;
}

// arr (a uint16 array of a bf16 buffer's bits, stolen) as the numpy dtype bf16 shows as.
static PyObject* bf16_view(HgBuffer* self, PyObject* arr) {
    if (!arr || self->dtype != HG_DTYPE_BF16 || !hgpy_bf16_is_ml_dtypes()) return arr;
    PyObject* v = PyObject_CallMethod(arr, "view", "O", hgpy_numpy_dtype(HG_DTYPE_BF16));
    Py_DECREF(arr);
    return v;
}

static PyObject* Buffer_to_numpy(HgBuffer* self, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames) {
    static const char* const kws[] = {"copy", NULL};
    PyObject* copy_obj = nargs > 0 ? args[0] : NULL;
    if (nargs > 1) return PyErr_Format(PyExc_TypeError, "to_numpy() takes at most 1 argument");
    if (kwnames) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), kws[0]) || copy_obj)
                return PyErr_Format(PyExc_TypeError, "to_numpy() got an unexpected keyword "
                                    "argument %R", PyTuple_GET_ITEM(kwnames, i));
            copy_obj = args[nargs + i];
        }
    }
    // copy=None (default), numpy's rule: a view where one is possible (CPU memory), else a
    // copy (device memory: the product documents' `c.to_numpy()` after Executor('auto') must
    // give the values on a GPU machine too). copy=False: a view or an error.
    int copy;
    if (!copy_obj || copy_obj == Py_None) copy = -1;
    else if ((copy = PyObject_IsTrue(copy_obj)) < 0) return NULL;
    if (hgpy_buffer_check(self)) return NULL;
    if (copy == -1) copy = !self->data;
    if (!copy) {
        if (!self->data)
            return hgpy_raise_msg(HG_ERR_UNSUPPORTED,
                                  "Buffer.to_numpy: the buffer is in device memory; a zero-copy "
                                  "view is impossible (copy=False); pass copy=None or True for a copy");
        // numpy takes the view through the buffer protocol, which counts it in self->users.
        return bf16_view(self, PyObject_CallMethod(hgpy_numpy(), "asarray", "O",
                                                   (PyObject*)self));
    }
    // bf16: uint16 storage (numpy's buffer protocol cannot describe ml_dtypes.bfloat16).
    hg_dtype store = self->dtype == HG_DTYPE_BF16 ? HG_DTYPE_U16 : self->dtype;
    PyObject* out = PyObject_CallMethod(hgpy_numpy(), "empty", "nO", (Py_ssize_t)self->count,
                                        hgpy_numpy_dtype(store));
    if (!out) return NULL;
    Py_buffer v;
    if (PyObject_GetBuffer(out, &v, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        Py_DECREF(out);
        return NULL;
    }
    hg_status s = io_read(self, v.buf, self->count);
    PyBuffer_Release(&v);
    if (s != HG_OK) {
        Py_DECREF(out);
        return hgpy_raise_status(s, "Buffer.to_numpy");
    }
    return bf16_view(self, out);
}

static PyObject* Buffer_fill(HgBuffer* self, PyObject* value) {
    if (check_writable(self, "Buffer.fill")) return NULL;
    double v = PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred()) return NULL;
    hg_status s;
    hgpy_buffer_hold(self);
    Py_BEGIN_ALLOW_THREADS
    s = hg_buffer_fill(self->buf, v);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(self);
    if (s != HG_OK) return hgpy_raise_status(s, "Buffer.fill");
    Py_RETURN_NONE;
}

static PyObject* Buffer_copy_from(HgBuffer* self, PyObject* src) {
    if (!PyObject_TypeCheck(src, &HgBuffer_Type)) return Buffer_from_numpy(self, src);
    HgBuffer* b = (HgBuffer*)src;
    if (check_writable(self, "Buffer.copy_from") || hgpy_buffer_check(b)) return NULL;
    if (b->count != self->count)
        return hgpy_raise_msg(HG_ERR_SIZE_MISMATCH, "Buffer.copy_from: source holds %zu "
                              "elements, this buffer %zu", b->count, self->count);
    hg_status s;
    hgpy_buffer_hold(self);
    hgpy_buffer_hold(b);
    Py_BEGIN_ALLOW_THREADS
    s = hg_buffer_copy(self->buf, 0, b->buf, 0, self->count);
    Py_END_ALLOW_THREADS
    hgpy_buffer_unhold(b);
    hgpy_buffer_unhold(self);
    if (s != HG_OK) return hgpy_raise_status(s, "Buffer.copy_from");
    Py_RETURN_NONE;
}

static PyObject* Buffer_free(HgBuffer* self, PyObject* unused) {
    hgpy_buffer_free(self);
    Py_RETURN_NONE;
}

static PyObject* Buffer_array_interface(HgBuffer* self, void* closure) {
    if (hgpy_buffer_check(self)) return NULL;
    if (!self->data)
        return PyErr_Format(PyExc_AttributeError, "__array_interface__: the buffer is in device "
                            "memory (not host-visible)");
    // The protocol has no release hook: keep the memory until this object is deallocated
    // (consumers keep a reference to it).
    self->pinned = 1;
    return Py_BuildValue("{s:(n),s:s,s:(N,O),s:i}", "shape", (Py_ssize_t)self->count, "typestr",
                         hgpy_typestr(self->dtype), "data", PyLong_FromVoidPtr(self->data),
                         self->readonly ? Py_True : Py_False, "version", 3);
}

// --- buffer protocol (numpy views) ----------------------------------------------------------------
static int Buffer_getbuffer(HgBuffer* self, Py_buffer* view, int flags) {
    if (hgpy_buffer_check(self)) {
        view->obj = NULL;
        return -1;
    }
    if (!self->data) {
        PyErr_SetString(PyExc_BufferError, "the buffer is in device memory (not host-visible)");
        view->obj = NULL;
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && self->readonly) {
        PyErr_SetString(PyExc_BufferError, "the Buffer wraps read-only memory");
        view->obj = NULL;
        return -1;
    }
    Py_ssize_t es = (Py_ssize_t)hg_dtype_size(self->dtype);
    view->buf = self->data;
    view->obj = Py_NewRef((PyObject*)self);
    view->len = (Py_ssize_t)self->count * es;
    view->readonly = self->readonly;
    view->itemsize = es;
    view->format = (flags & PyBUF_FORMAT) ? (char*)hgpy_format(self->dtype) : NULL;
    view->ndim = 1;
    view->shape = NULL;
    view->strides = NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    if (flags & PyBUF_ND) {
        // Py_buffer has no room of its own for shape/strides; store them in a small block.
        Py_ssize_t* dims = PyMem_Malloc(2 * sizeof(Py_ssize_t));
        if (!dims) {
            Py_CLEAR(view->obj);
            PyErr_NoMemory();
            return -1;
        }
        dims[0] = (Py_ssize_t)self->count;
        dims[1] = es;
        view->shape = &dims[0];
        view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &dims[1] : NULL;
        view->internal = dims;
    }
    hgpy_buffer_hold(self);
    return 0;
}

static void Buffer_releasebuffer(HgBuffer* self, Py_buffer* view) {
    PyMem_Free(view->internal);
    view->internal = NULL;
    hgpy_buffer_unhold(self);
}

static PyBufferProcs Buffer_as_buffer = {(getbufferproc)Buffer_getbuffer,
                                         (releasebufferproc)Buffer_releasebuffer};

// --- attributes ----------------------------------------------------------------------------------
static PyObject* Buffer_get_size(HgBuffer* self, void* c) { return PyLong_FromSize_t(self->count); }
static PyObject* Buffer_get_nbytes(HgBuffer* self, void* c) {
    return PyLong_FromSize_t(self->count * hg_dtype_size(self->dtype));
}
static PyObject* Buffer_get_dtype(HgBuffer* self, void* c) {
    return Py_NewRef(hgpy_numpy_dtype(self->dtype));
}
static PyObject* Buffer_get_dtype_name(HgBuffer* self, void* c) {
    return PyUnicode_FromString(hg_dtype_name(self->dtype));
}
static PyObject* Buffer_get_executor(HgBuffer* self, void* c) {
    return Py_NewRef((PyObject*)self->owner);
}
static PyObject* Buffer_get_freed(HgBuffer* self, void* c) { return PyBool_FromLong(self->freed); }
static PyObject* Buffer_get_readonly(HgBuffer* self, void* c) {
    return PyBool_FromLong(self->readonly);
}
static PyObject* Buffer_get_data_ptr(HgBuffer* self, void* c) {
    if (hgpy_buffer_check(self)) return NULL;
    return PyLong_FromVoidPtr(self->data);
}
// For tests of the lifetime rules: whether the memory still exists, and how many views,
// capsules and in-flight calls hold it.
static PyObject* Buffer_get_alive(HgBuffer* self, void* c) { return PyBool_FromLong(!self->destroyed); }
static PyObject* Buffer_get_users(HgBuffer* self, void* c) { return PyLong_FromSsize_t(self->users); }
static PyObject* Buffer_get_handle(HgBuffer* self, void* c) {
    return PyLong_FromUnsignedLongLong(self->buf.handle);
}

static Py_ssize_t Buffer_len(HgBuffer* self) { return (Py_ssize_t)self->count; }

static PyObject* Buffer_repr(HgBuffer* self) {
    return PyUnicode_FromFormat("<hologram.Buffer size=%zu dtype=%s backend=%s%s>", self->count,
                                hg_dtype_name(self->dtype), hg_backend_name(self->owner->backend),
                                self->freed ? " (freed)" : "");
}

static PyGetSetDef Buffer_getset[] = {
    {"size", (getter)Buffer_get_size, NULL, "Number of elements.", NULL},
    {"nbytes", (getter)Buffer_get_nbytes, NULL, "Size in bytes.", NULL},
    {"dtype", (getter)Buffer_get_dtype, NULL,
     "numpy dtype of the elements (bfloat16: ml_dtypes.bfloat16 when ml_dtypes is installed, "
     "else uint16, the raw bits).", NULL},
    {"dtype_name", (getter)Buffer_get_dtype_name, NULL, "Hologram dtype name ('f32', 'bf16').",
     NULL},
    {"executor", (getter)Buffer_get_executor, NULL, "The Executor that owns the buffer.", NULL},
    {"freed", (getter)Buffer_get_freed, NULL, "True after free() or Executor.close().", NULL},
    {"readonly", (getter)Buffer_get_readonly, NULL, "True when it wraps read-only memory.", NULL},
    {"data_ptr", (getter)Buffer_get_data_ptr, NULL, "Host address of element 0 (0: device).",
     NULL},
    {"_memory_alive", (getter)Buffer_get_alive, NULL, "False once the memory is released.", NULL},
    {"_users", (getter)Buffer_get_users, NULL, "Live views + capsules + calls in flight.", NULL},
    {"_handle", (getter)Buffer_get_handle, NULL, "The hg_buffer handle value.", NULL},
    {"__array_interface__", (getter)Buffer_array_interface, NULL,
     "numpy array interface (CPU memory; keeps the memory until the Buffer is deallocated).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Buffer_methods[] = {
    {"from_numpy", (PyCFunction)Buffer_from_numpy, METH_O,
     "from_numpy(array): copy an array of the same dtype and size into the buffer."},
    {"to_numpy", (PyCFunction)(void (*)(void))Buffer_to_numpy, METH_FASTCALL | METH_KEYWORDS,
     "to_numpy(copy=None): a zero-copy numpy view of CPU memory, a copy of device memory "
     "(copy=True: always a copy; copy=False: a view or UnsupportedError)."},
    {"from_bytes", (PyCFunction)Buffer_from_bytes, METH_O,
     "from_bytes(data): copy exactly nbytes bytes into the buffer."},
    {"to_bytes", (PyCFunction)Buffer_to_bytes, METH_NOARGS, "to_bytes(): the contents as bytes."},
    {"fill", (PyCFunction)Buffer_fill, METH_O, "fill(value): set every element to value."},
    {"copy_from", (PyCFunction)Buffer_copy_from, METH_O,
     "copy_from(src): copy a Buffer of the same size and dtype (or an array) into this one."},
    {"free", (PyCFunction)Buffer_free, METH_NOARGS,
     "free(): release the buffer; later use raises InvalidHandleError. Memory still viewed by "
     "numpy arrays or DLPack consumers is released when the last of them goes."},
    {"__dlpack__", (PyCFunction)(void (*)(void))hgpy_buffer_dlpack,
     METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)"},
    {"__dlpack_device__", (PyCFunction)hgpy_buffer_dlpack_device, METH_NOARGS,
     "__dlpack_device__() -> (device_type, device_id)"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Buffer_as_sequence = {.sq_length = (lenfunc)Buffer_len};

PyTypeObject HgBuffer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram.Buffer",
    .tp_basicsize = sizeof(HgBuffer),
    .tp_dealloc = (destructor)Buffer_dealloc,
    .tp_repr = (reprfunc)Buffer_repr,
    .tp_as_sequence = &Buffer_as_sequence,
    .tp_as_buffer = &Buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A typed 1-D array on an Executor's device; create with Executor.allocate().",
    .tp_traverse = (traverseproc)Buffer_traverse,
    .tp_weaklistoffset = offsetof(HgBuffer, weakreflist),
    .tp_methods = Buffer_methods,
    .tp_getset = Buffer_getset,
};
