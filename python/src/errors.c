// Errors (hg_status -> HologramError subclasses registered by hologram/errors.py) and the
// bridge from the library's log callback to Python's `logging`.
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "hgpy.h"

// status -> exception class; filled by hologram/errors.py through _set_error_classes.
static PyObject* g_error_classes = NULL;   // dict int -> class
static PyObject* g_error_fallback = NULL;  // HologramError (or RuntimeError before registration)

static PyObject* class_for(hg_status status) {
    if (g_error_classes) {
        PyObject* key = PyLong_FromLong((long)status);
        if (key) {
            PyObject* cls = PyDict_GetItemWithError(g_error_classes, key);
            Py_DECREF(key);
            if (cls) return cls;
        }
        PyErr_Clear();
    }
    // Unknown status: the group's base class (e.g. 3xx -> 300), else HologramError.
    if (g_error_classes) {
        PyObject* key = PyLong_FromLong((long)status / 100 * 100);
        if (key) {
            PyObject* cls = PyDict_GetItemWithError(g_error_classes, key);
            Py_DECREF(key);
            if (cls) return cls;
        }
        PyErr_Clear();
    }
    return g_error_fallback ? g_error_fallback : PyExc_RuntimeError;
}

static PyObject* raise_text(hg_status status, const char* text) {
    PyObject* cls = class_for(status);
    PyObject* exc = PyObject_CallFunction(cls, "si", text, (int)status);
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject* hgpy_raise_status(hg_status status, const char* context) {
    const char* msg = hg_last_error();
    if (!msg || !*msg) msg = hg_status_string(status);
    if (!context) return raise_text(status, msg);
    PyObject* s = PyUnicode_FromFormat("%s: %s", context, msg);
    if (!s) return NULL;
    PyObject* r = raise_text(status, PyUnicode_AsUTF8(s));
    Py_DECREF(s);
    return r;
}

PyObject* hgpy_raise_msg(hg_status status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject* s = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!s) return NULL;
    PyObject* r = raise_text(status, PyUnicode_AsUTF8(s));
    Py_DECREF(s);
    return r;
}

PyObject* hgpy_set_error_classes(PyObject* self, PyObject* args) {
    PyObject* mapping;
    PyObject* base;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &mapping, &base)) return NULL;
    Py_INCREF(mapping);
    Py_XSETREF(g_error_classes, mapping);
    Py_INCREF(base);
    Py_XSETREF(g_error_fallback, base);
    Py_RETURN_NONE;
}

// --- logging ------------------------------------------------------------------------------------
// The library may call the callback from any thread. A thread holding the GIL calls the Python
// handler at once; other threads queue the message (see log_callback). During interpreter
// finalization the callback must not touch Python: atexit removes it (hologram/_log.py), and the
// check in log_callback covers threads that race with shutdown.
static PyObject* g_log_handler = NULL;

static int finalizing(void) {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

// Calls the Python handler; the caller holds the GIL.
static void dispatch(int level, const char* message) {
    PyObject* handler = g_log_handler;
    if (!handler) return;
    Py_INCREF(handler);
    // Keep an exception that the current thread may be carrying (we may be called from inside a
    // library call made while an error is being raised).
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject* r = PyObject_CallFunction(handler, "is", level, message);
    if (!r) PyErr_WriteUnraisable(handler);
    Py_XDECREF(r);
    PyErr_Restore(et, ev, tb);
    Py_DECREF(handler);
}

// Messages from threads that do not hold the GIL (the library's workers) are queued and
// handed to Python by a pending call in the main thread: a worker never waits for the GIL, so a
// caller that keeps the GIL during a small library call cannot deadlock with its workers.
typedef struct queued {
    struct queued* next;
    int level;
    char text[];
} queued;
static pthread_mutex_t g_queue_lock = PTHREAD_MUTEX_INITIALIZER;
static queued *g_queue_head = NULL, *g_queue_tail = NULL;
static int g_flush_pending = 0;

static int flush_queue(void* unused) {
    (void)unused;
    pthread_mutex_lock(&g_queue_lock);
    queued* q = g_queue_head;
    g_queue_head = g_queue_tail = NULL;
    g_flush_pending = 0;
    pthread_mutex_unlock(&g_queue_lock);
    while (q) {
        queued* next = q->next;
        dispatch(q->level, q->text);
        free(q);
        q = next;
    }
    return 0;
}

static void log_callback(hg_log_level level, const char* message, void* user) {
    (void)user;
    if (!Py_IsInitialized() || finalizing()) {
        fprintf(stderr, "hologram [%d] %s\n", (int)level, message);
        return;
    }
    if (PyGILState_Check()) {
        dispatch((int)level, message);
        return;
    }
    size_t len = strlen(message);
    queued* q = malloc(sizeof *q + len + 1);
    if (!q) {
        fprintf(stderr, "hologram [%d] %s\n", (int)level, message);
        return;
    }
    q->next = NULL;
    q->level = (int)level;
    memcpy(q->text, message, len + 1);
    pthread_mutex_lock(&g_queue_lock);
    if (g_queue_tail) g_queue_tail->next = q;
    else g_queue_head = q;
    g_queue_tail = q;
    int schedule = !g_flush_pending;
    g_flush_pending = 1;
    pthread_mutex_unlock(&g_queue_lock);
    // Py_AddPendingCall may be called without the GIL; it fails only when its queue is full,
    // and then the next message schedules the flush again.
    if (schedule && Py_AddPendingCall(flush_queue, NULL) != 0) {
        pthread_mutex_lock(&g_queue_lock);
        g_flush_pending = 0;
        pthread_mutex_unlock(&g_queue_lock);
    }
}

// A forked child: the lock made anew and the queue dropped (its messages are the parent's, and a
// thread of the parent may have been linking one in). Not taken before fork: a library worker
// holding an executor lock the library's own fork handler waits for may be queueing a message.
static void queue_after_fork_child(void);
static void register_fork_child(void) { (void)pthread_atfork(NULL, NULL, queue_after_fork_child); }

static void queue_after_fork_child(void) {
    pthread_mutex_init(&g_queue_lock, NULL);
    g_queue_head = g_queue_tail = NULL;
    g_flush_pending = 0;
}

void hgpy_errors_fork_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_child);
}

PyObject* hgpy_set_log_handler(PyObject* self, PyObject* handler) {
    if (handler == Py_None) {
        hg_log_set_callback(NULL, NULL);
        Py_CLEAR(g_log_handler);
        Py_RETURN_NONE;
    }
    if (!PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "_set_log_handler: expected a callable or None");
        return NULL;
    }
    Py_INCREF(handler);
    Py_XSETREF(g_log_handler, handler);
    hg_log_set_callback(log_callback, NULL);
    Py_RETURN_NONE;
}
