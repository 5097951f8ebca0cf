// hologram._C.Executor: a backend + device on which buffers live and work runs.
#include "hgpy.h"

static int Executor_init(HgExecutor* self, PyObject* args, PyObject* kwds) {
    static char* kwlist[] = {"backend", "device", "num_threads", NULL};
    PyObject* backend = NULL;
    int device = 0, num_threads = 0;
    if (self->ex.handle) {
        PyErr_SetString(PyExc_RuntimeError, "Executor.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$ii:Executor", kwlist, &backend, &device,
                                     &num_threads))
        return -1;
    hg_executor_options opt = {HG_BACKEND_AUTO, device, num_threads};
    if (backend && backend != Py_None) {
        if (!PyUnicode_Check(backend)) {
            PyErr_Format(PyExc_TypeError, "Executor: backend must be a str ('auto', 'cpu', "
                         "'cuda', 'metal'), got %.100s", Py_TYPE(backend)->tp_name);
            return -1;
        }
        const char* name = PyUnicode_AsUTF8(backend);
        if (!name) return -1;
        hg_status s = hg_backend_from_name(name, &opt.backend);
        if (s != HG_OK) {
            hgpy_raise_status(s, "Executor");
            return -1;
        }
    }
    hg_executor ex;
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_executor_create_ex(&opt, &ex);
    Py_END_ALLOW_THREADS
    if (s != HG_OK) {
        hgpy_raise_status(s, "Executor");
        return -1;
    }
    hg_backend_kind kind = HG_BACKEND_CPU;
    hg_executor_backend(ex, &kind);
    self->ex = ex;
    self->backend = kind;
    return 0;
}

static int executor_check(HgExecutor* self) {
    if (!self->ex.handle) {
        PyErr_SetString(PyExc_RuntimeError, "Executor was not initialized");
        return -1;
    }
    if (self->closed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Executor used after close()");
        return -1;
    }
    return 0;
}

int hgpy_executor_park(HgExecutor* e, hg_buffer buf, hg_dtype dtype, size_t count) {
    if (e->closed || e->destroyed || e->backend != HG_BACKEND_CPU || e->nspare == HGPY_SPARES ||
        count == 0 || count * hg_dtype_size(dtype) > HGPY_SPARE_BYTES)
        return 0;
    e->spare[e->nspare++] = (hgpy_spare){buf, dtype, count};
    return 1;
}

int hgpy_executor_take_spare(HgExecutor* e, hg_dtype dtype, size_t count, hg_buffer* out) {
    for (int i = e->nspare - 1; i >= 0; i--) {
        if (e->spare[i].dtype != dtype || e->spare[i].count != count) continue;
        *out = e->spare[i].buf;
        e->spare[i] = e->spare[--e->nspare];
        return 1;
    }
    return 0;
}

static void drop_spares(HgExecutor* e) {
    while (e->nspare > 0) hg_buffer_destroy(e->spare[--e->nspare].buf);
}

static PyObject* Executor_close(HgExecutor* self, PyObject* unused) {
    if (!self->ex.handle || self->closed) Py_RETURN_NONE;
    self->closed = 1;
    drop_spares(self);
    // Free every buffer; memory still viewed elsewhere goes when its last view does, and the
    // executor itself when its last buffer memory does.
    for (HgBuffer* b = self->buffers; b;) {
        HgBuffer* next = b->next;
        hgpy_buffer_free(b);
        b = next;
    }
    hgpy_executor_maybe_destroy(self);
    Py_RETURN_NONE;
}

static void Executor_dealloc(HgExecutor* self) {
    if (self->weakreflist) PyObject_ClearWeakRefs((PyObject*)self);
    // Buffers hold references to their executor: none is left here.
    if (self->ex.handle && !self->destroyed) {
        drop_spares(self);
        self->destroyed = 1;
        Py_BEGIN_ALLOW_THREADS
        hg_executor_destroy(self->ex);   // joins the worker threads: never with the GIL held
        Py_END_ALLOW_THREADS
    }
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* Executor_allocate(HgExecutor* self, PyObject* args, PyObject* kwds) {
    static char* kwlist[] = {"n", "dtype", NULL};
    Py_ssize_t n;
    PyObject* dtype = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|O:allocate", kwlist, &n, &dtype)) return NULL;
    if (executor_check(self)) return NULL;
    if (n < 0) return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "allocate: n must be >= 0, got %zd", n);
    hg_dtype dt;
    if (hgpy_dtype_from_object(dtype, &dt)) return NULL;
    hg_buffer h;
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_buffer_create(self->ex, dt, (size_t)n, &h);
    Py_END_ALLOW_THREADS
    if (s != HG_OK) return hgpy_raise_status(s, "allocate");
    return (PyObject*)hgpy_buffer_new(self, h);
}

static PyObject* Executor_enter(HgExecutor* self, PyObject* unused) {
    if (executor_check(self)) return NULL;
    return Py_NewRef((PyObject*)self);
}

static PyObject* Executor_exit(HgExecutor* self, PyObject* args) {
    PyObject* r = Executor_close(self, NULL);
    if (!r) return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject* Executor_synchronize(HgExecutor* self, PyObject* unused) {
    if (executor_check(self)) return NULL;
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_executor_synchronize(self->ex);
    Py_END_ALLOW_THREADS
    if (s != HG_OK) return hgpy_raise_status(s, "Executor.synchronize");
    Py_RETURN_NONE;
}

int hgpy_stream_arg(PyObject* obj, void** out, const char* fn) {
    *out = NULL;
    if (obj == Py_None) return 0;
    int from_attr = 0;
    PyObject* v = NULL;
    if (PyLong_Check(obj)) {
        v = Py_NewRef(obj);
    } else {
        v = PyObject_GetAttrString(obj, "cuda_stream");
        if (!v) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: stream must be None, an int (a CUstream) or an "
                         "object with a cuda_stream attribute (torch.cuda.Stream), got %.100s",
                         fn, Py_TYPE(obj)->tp_name);
            return -1;
        }
        from_attr = 1;
    }
    unsigned long long h = PyLong_Check(v) ? PyLong_AsUnsignedLongLong(v) : (unsigned long long)-1;
    Py_DECREF(v);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: the stream handle must be an integer in [0, 2**64)",
                     fn);
        return -1;
    }
    // torch reports its default (legacy) stream as cuda_stream == 0.
    if (h == 0 && from_attr) h = 1;
    *out = (void*)(uintptr_t)h;
    return 0;
}

hg_status hgpy_order_stream_after(HgExecutor* e, void* to) {
    void* cur = NULL;
    hg_status s = hg_executor_stream(e->ex, &cur);
    if (s || to == cur) return s;
    if (!e->order_ev.handle && (s = hg_event_create(e->ex, &e->order_ev))) return s;
    if (!(s = hg_event_record(e->order_ev))) s = hg_event_wait(e->order_ev, to);
    return s;
}

hg_status hgpy_order_after_stream(HgExecutor* e, void* from) {
    void* cur = NULL;
    hg_status s = hg_executor_stream(e->ex, &cur);
    if (s || from == cur) return s;
    if (!(s = hg_executor_set_stream(e->ex, from))) s = hg_executor_set_stream(e->ex, cur);
    return s;
}

static PyObject* Executor_set_stream(HgExecutor* self, PyObject* arg) {
    if (executor_check(self)) return NULL;
    void* st;
    if (hgpy_stream_arg(arg, &st, "Executor.set_stream")) return NULL;
    hg_status s = hg_executor_set_stream(self->ex, st);
    if (s != HG_OK) return hgpy_raise_status(s, "Executor.set_stream");
    Py_RETURN_NONE;
}

static PyObject* Executor_get_stream(HgExecutor* self, void* c) {
    if (executor_check(self)) return NULL;
    void* st = NULL;
    hg_status s = hg_executor_stream(self->ex, &st);
    if (s != HG_OK) return hgpy_raise_status(s, "Executor.stream");
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)st);
}

static PyObject* Executor_get_backend(HgExecutor* self, void* c) {
    if (!self->ex.handle) Py_RETURN_NONE;
    return PyUnicode_FromString(hg_backend_name(self->backend));
}

static PyObject* Executor_get_closed(HgExecutor* self, void* c) {
    return PyBool_FromLong(self->closed);
}

static PyObject* Executor_get_num_threads(HgExecutor* self, void* c) {
    if (executor_check(self)) return NULL;
    int n = 0;
    hg_status s = hg_executor_num_threads(self->ex, &n);
    if (s != HG_OK) return hgpy_raise_status(s, "Executor.num_threads");
    return PyLong_FromLong(n);
}

static PyObject* Executor_get_device(HgExecutor* self, void* c) {
    if (executor_check(self)) return NULL;
    hg_device_info d;
    hg_status s = hg_executor_device(self->ex, &d);
    if (s != HG_OK) return hgpy_raise_status(s, "Executor.device");
    return Py_BuildValue("{s:s,s:i,s:s,s:K,s:i,s:(ii)}", "backend", hg_backend_name(d.backend),
                         "index", d.index, "name", d.name, "memory_bytes",
                         (unsigned long long)d.memory_bytes, "compute_units", d.compute_units,
                         "capability", d.capability_major, d.capability_minor);
}

static PyObject* Executor_repr(HgExecutor* self) {
    if (!self->ex.handle) return PyUnicode_FromString("<hologram.Executor (uninitialized)>");
    return PyUnicode_FromFormat("<hologram.Executor backend='%s'%s>",
                                hg_backend_name(self->backend), self->closed ? " (closed)" : "");
}

static PyGetSetDef Executor_getset[] = {
    {"backend", (getter)Executor_get_backend, NULL, "Concrete backend name ('cpu', 'cuda', ...).",
     NULL},
    {"closed", (getter)Executor_get_closed, NULL, "True after close() / leaving a with block.",
     NULL},
    {"num_threads", (getter)Executor_get_num_threads, NULL, "Worker threads (CPU) or 1.", NULL},
    {"device", (getter)Executor_get_device, NULL, "Device facts as a dict.", NULL},
    {"stream", (getter)Executor_get_stream, NULL, "The stream work is queued on (a CUstream as "
     "an int; 0 where there is none: CPU, the CUDA emulation's own).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Executor_methods[] = {
    {"allocate", (PyCFunction)(void (*)(void))Executor_allocate, METH_VARARGS | METH_KEYWORDS,
     "allocate(n, dtype=numpy.float32) -> Buffer of n zero elements."},
    {"close", (PyCFunction)Executor_close, METH_NOARGS,
     "close(): free all buffers and release the executor (idempotent)."},
    {"synchronize", (PyCFunction)Executor_synchronize, METH_NOARGS,
     "synchronize(): wait until submitted work has finished; raises an error of asynchronous "
     "work (CUDA: an out-of-bounds access of an earlier launch)."},
    {"set_stream", (PyCFunction)Executor_set_stream, METH_O,
     "set_stream(stream): queue later work on stream (None: the executor's own; an int CUstream; "
     "or an object with cuda_stream, like torch.cuda.current_stream()). The new stream first "
     "waits for the work queued on the old one. CPU executors take None only."},
    {"__enter__", (PyCFunction)Executor_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)Executor_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject HgExecutor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram.Executor",
    .tp_basicsize = sizeof(HgExecutor),
    .tp_dealloc = (destructor)Executor_dealloc,
    .tp_repr = (reprfunc)Executor_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Executor(backend='auto', *, device=0, num_threads=0): a backend and device.\n"
              "backend: 'auto' (best available: cuda, metal, cpu), 'cpu', 'cuda' or 'metal'.",
    .tp_weaklistoffset = offsetof(HgExecutor, weakreflist),
    .tp_methods = Executor_methods,
    .tp_getset = Executor_getset,
    .tp_init = (initproc)Executor_init,
    .tp_new = PyType_GenericNew,
};
