// hologram.Event: a marker in an executor's stream, with torch.cuda.Event's names (record,
// synchronize, query, elapsed_time, wait). On CPU executors, whose calls complete before they
// return, an event is the host time of its record.
#include "hgpy.h"

typedef struct HgEvent {
    PyObject_HEAD
    hg_event ev;
    HgExecutor* ex;      // strong reference
    int timing;          // enable_timing
} HgEvent;

static int Event_init(HgEvent* self, PyObject* args, PyObject* kwds) {
    static char* kwlist[] = {"ex", "enable_timing", NULL};
    PyObject* exobj = Py_None;
    int timing = 1;
    if (self->ex) {
        PyErr_SetString(PyExc_RuntimeError, "Event.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Op:Event", kwlist, &exobj, &timing))
        return -1;
    if (exobj == Py_None) {   // the package's default executor, as for tensors made without one
        PyObject* mod = PyImport_ImportModule("hologram._interop");
        exobj = mod ? PyObject_CallMethod(mod, "default_executor", NULL) : NULL;
        Py_XDECREF(mod);
        if (!exobj) return -1;
    } else {
        Py_INCREF(exobj);
    }
    if (!PyObject_TypeCheck(exobj, &HgExecutor_Type)) {
        PyErr_Format(PyExc_TypeError, "Event: ex must be a hologram.Executor or None, got %.100s",
                     Py_TYPE(exobj)->tp_name);
        Py_DECREF(exobj);
        return -1;
    }
    HgExecutor* e = (HgExecutor*)exobj;
    if (e->closed) {
        Py_DECREF(exobj);
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Event: Executor used after close()");
        return -1;
    }
    hg_status s = hg_event_create(e->ex, &self->ev);
    if (s != HG_OK) {
        Py_DECREF(exobj);
        hgpy_raise_status(s, "Event");
        return -1;
    }
    self->ex = e;
    self->timing = timing;
    return 0;
}

static void Event_dealloc(HgEvent* self) {
    // A closed executor may already be gone, its events with it: nothing to report then.
    if (self->ev.handle && hg_event_destroy(self->ev) != HG_OK) hg_clear_error();
    Py_XDECREF(self->ex);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static int event_check(HgEvent* self, const char* fn) {
    if (!self->ex) {
        PyErr_Format(PyExc_RuntimeError, "%s: Event was not initialized", fn);
        return -1;
    }
    if (self->ex->closed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "%s: the Event's Executor was closed", fn);
        return -1;
    }
    return 0;
}

static PyObject* Event_record(HgEvent* self, PyObject* args, PyObject* kwds) {
    static char* kwlist[] = {"stream", NULL};
    PyObject* stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:record", kwlist, &stream)) return NULL;
    if (event_check(self, "Event.record")) return NULL;
    if (stream != Py_None) {   // torch's signature; hologram records on the executor's stream
        void* want = NULL;
        void* cur = NULL;
        if (hgpy_stream_arg(stream, &want, "Event.record")) return NULL;
        hg_executor_stream(self->ex->ex, &cur);
        if (want != cur)
            return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "Event.record: an event is recorded "
                                  "on its executor's stream (%#llx), not %#llx: use "
                                  "Executor.set_stream", (unsigned long long)(uintptr_t)cur,
                                  (unsigned long long)(uintptr_t)want);
    }
    hg_status s = hg_event_record(self->ev);
    if (s != HG_OK) return hgpy_raise_status(s, "Event.record");
    Py_RETURN_NONE;
}

static PyObject* Event_synchronize(HgEvent* self, PyObject* unused) {
    if (event_check(self, "Event.synchronize")) return NULL;
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_event_synchronize(self->ev);
    Py_END_ALLOW_THREADS
    if (s != HG_OK) return hgpy_raise_status(s, "Event.synchronize");
    Py_RETURN_NONE;
}

static PyObject* Event_query(HgEvent* self, PyObject* unused) {
    if (event_check(self, "Event.query")) return NULL;
    int done = 0;
    hg_status s = hg_event_query(self->ev, &done);
    if (s != HG_OK) return hgpy_raise_status(s, "Event.query");
    return PyBool_FromLong(done);
}

static PyObject* Event_elapsed_time(HgEvent* self, PyObject* end) {
    if (event_check(self, "Event.elapsed_time")) return NULL;
    if (!PyObject_TypeCheck(end, &HgEvent_Type))
        return PyErr_Format(PyExc_TypeError, "Event.elapsed_time: end must be a hologram.Event, "
                            "got %.100s", Py_TYPE(end)->tp_name);
    HgEvent* e = (HgEvent*)end;
    if (event_check(e, "Event.elapsed_time")) return NULL;
    if (!self->timing || !e->timing)
        return PyErr_Format(PyExc_ValueError, "Event.elapsed_time: both events must be created "
                            "with enable_timing=True");
    double ms = 0;
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_event_elapsed_ms(self->ev, e->ev, &ms);
    Py_END_ALLOW_THREADS
    if (s != HG_OK) return hgpy_raise_status(s, "Event.elapsed_time");
    return PyFloat_FromDouble(ms);
}

static PyObject* Event_wait(HgEvent* self, PyObject* args, PyObject* kwds) {
    static char* kwlist[] = {"stream", NULL};
    PyObject* stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:wait", kwlist, &stream)) return NULL;
    if (event_check(self, "Event.wait")) return NULL;
    void* st = NULL;
    if (hgpy_stream_arg(stream, &st, "Event.wait")) return NULL;
    hg_status s = hg_event_wait(self->ev, st);
    if (s != HG_OK) return hgpy_raise_status(s, "Event.wait");
    Py_RETURN_NONE;
}

static PyObject* Event_get_executor(HgEvent* self, void* c) {
    if (!self->ex) Py_RETURN_NONE;
    return Py_NewRef((PyObject*)self->ex);
}

static PyGetSetDef Event_getset[] = {
    {"executor", (getter)Event_get_executor, NULL, "The Executor whose stream it marks.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))Event_record, METH_VARARGS | METH_KEYWORDS,
     "record(stream=None): mark the end of the work queued so far on the executor's stream "
     "(stream, if given, must be that stream)."},
    {"synchronize", (PyCFunction)Event_synchronize, METH_NOARGS,
     "synchronize(): wait for the work before the last record; raises an error of that work."},
    {"query", (PyCFunction)Event_query, METH_NOARGS,
     "query() -> bool: True when the work before the last record has finished (or it was never "
     "recorded)."},
    {"elapsed_time", (PyCFunction)Event_elapsed_time, METH_O,
     "elapsed_time(end) -> float: milliseconds from this event's record to end's (waits for "
     "both)."},
    {"wait", (PyCFunction)(void (*)(void))Event_wait, METH_VARARGS | METH_KEYWORDS,
     "wait(stream=None): make stream (default: the executor's) wait for this event, without "
     "blocking the host."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject HgEvent_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram.Event",
    .tp_basicsize = sizeof(HgEvent),
    .tp_dealloc = (destructor)Event_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Event(ex=None, enable_timing=True): a marker in an executor's stream (ex: the "
              "default executor when None), for timing and ordering as torch.cuda.Event.",
    .tp_methods = Event_methods,
    .tp_getset = Event_getset,
    .tp_init = (initproc)Event_init,
    .tp_new = PyType_GenericNew,
};
