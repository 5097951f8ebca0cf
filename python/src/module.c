// hologram._C: module init and the small module-level functions.
#include "hgpy.h"
#include <string.h>

static PyObject* m_backend_query(PyObject* self, PyObject* name) {
    if (!PyUnicode_Check(name)) return PyErr_Format(PyExc_TypeError, "backend name must be a str");
    hg_backend_kind kind;
    hg_status s = hg_backend_from_name(PyUnicode_AsUTF8(name), &kind);
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    if (kind == HG_BACKEND_AUTO)
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "backend_query: 'auto' is not a concrete "
                              "backend (use 'cpu', 'cuda' or 'metal')");
    hg_backend_info info;
    s = hg_backend_query(kind, &info);
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    return Py_BuildValue("{s:s,s:O,s:i,s:s}", "name", info.name, "available",
                         info.available ? Py_True : Py_False, "device_count", info.device_count,
                         "reason", info.reason);
}

static PyObject* m_trace_start(PyObject* self, PyObject* path) {
    PyObject* bytes = NULL;
    if (!PyUnicode_FSConverter(path, &bytes)) return NULL;
    hg_status s = hg_trace_start(PyBytes_AS_STRING(bytes));
    Py_DECREF(bytes);
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

static PyObject* m_trace_stop(PyObject* self, PyObject* unused) {
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_trace_stop();
    Py_END_ALLOW_THREADS
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

static PyObject* m_trace_enabled(PyObject* self, PyObject* unused) {
    return PyBool_FromLong(hg_trace_enabled());
}

static PyObject* m_set_cpu_threading(PyObject* self, PyObject* mode) {
    if (!PyUnicode_Check(mode))
        return PyErr_Format(PyExc_TypeError, "set_cpu_threading: mode must be 'own' or "
                            "'openmp', got %s", Py_TYPE(mode)->tp_name);
    const char* m = PyUnicode_AsUTF8(mode);
    if (!m) return NULL;
    hg_cpu_threading t;
    if (strcmp(m, "own") == 0) t = HG_CPU_THREADING_OWN;
    else if (strcmp(m, "openmp") == 0) t = HG_CPU_THREADING_OPENMP;
    else return PyErr_Format(PyExc_ValueError, "set_cpu_threading: mode must be 'own' or "
                             "'openmp', got %R", mode);
    hg_status s = hg_cpu_set_threading(t);
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    Py_RETURN_NONE;
}

static PyObject* m_cpu_threading(PyObject* self, PyObject* unused) {
    hg_cpu_threading t;
    hg_status s = hg_cpu_get_threading(&t);
    if (s != HG_OK) return hgpy_raise_status(s, NULL);
    return PyUnicode_FromString(t == HG_CPU_THREADING_OPENMP ? "openmp" : "own");
}

static PyObject* m_status_string(PyObject* self, PyObject* code) {
    long c = PyLong_AsLong(code);
    if (c == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(hg_status_string((hg_status)c));
}

static PyObject* m_set_log_level(PyObject* self, PyObject* level) {
    long l = PyLong_AsLong(level);
    if (l == -1 && PyErr_Occurred()) return NULL;
    if (l < 0 || l >= HG_LOG_LEVEL_COUNT)
        return hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "log level must be 0..%d, got %ld",
                              HG_LOG_LEVEL_COUNT - 1, l);
    hg_log_set_level((hg_log_level)l);
    Py_RETURN_NONE;
}

static PyObject* m_get_log_level(PyObject* self, PyObject* unused) {
    return PyLong_FromLong((long)hg_log_get_level());
}

static PyObject* m_build_info(PyObject* self, PyObject* unused) {
    hg_build_info b;
    hg_build_info_get(&b);
    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s}", "version", b.version, "compiler", b.compiler,
                         "build_type", b.build_type, "features", b.features, "cpu_features",
                         hg_cpu_features());
}

// _check_status(code): raises the exception registered for a status (for tests of the mapping).
static PyObject* m_raise_status(PyObject* self, PyObject* args) {
    int code;
    const char* msg;
    if (!PyArg_ParseTuple(args, "is", &code, &msg)) return NULL;
    return hgpy_raise_msg((hg_status)code, "%s", msg);
}

static PyMethodDef module_methods[] = {
    {"_set_error_classes", hgpy_set_error_classes, METH_VARARGS,
     "_set_error_classes(mapping, base): status code -> exception class."},
    {"_set_log_handler", hgpy_set_log_handler, METH_O,
     "_set_log_handler(fn or None): fn(level, message) receives the library's log messages."},
    {"_set_log_level", m_set_log_level, METH_O, "_set_log_level(level 0..5)"},
    {"_get_log_level", m_get_log_level, METH_NOARGS, "_get_log_level() -> 0..5"},
    {"trace_start", m_trace_start, METH_O,
     "trace_start(path): record op calls, plan steps and kernel launches (hg_trace_start)"},
    {"trace_stop", m_trace_stop, METH_NOARGS, "trace_stop(): write the trace file (hg_trace_stop)"},
    {"trace_enabled", m_trace_enabled, METH_NOARGS, "trace_enabled() -> bool"},
    {"op_function", hgpy_op_function, METH_VARARGS,
     "op_function(kind, code, name, doc, traced_type, dispatch): an elementwise op of "
     "hologram.ops as a C callable"},
    {"_raise_status", m_raise_status, METH_VARARGS, "_raise_status(code, message)"},
    {"backend_query", m_backend_query, METH_O,
     "backend_query(name) -> dict(name, available, device_count, reason)"},
    {"set_cpu_threading", m_set_cpu_threading, METH_O,
     "set_cpu_threading('own' | 'openmp'): which threads run CPU executors' parallel parts "
     "(hg_cpu_set_threading)"},
    {"cpu_threading", m_cpu_threading, METH_NOARGS, "cpu_threading() -> 'own' | 'openmp'"},
    {"status_string", m_status_string, METH_O, "status_string(code) -> 'HG_ERR_...'"},
    {"build_info", m_build_info, METH_NOARGS, "build_info() -> dict"},
    {"_import_dlpack", (PyCFunction)(void (*)(void))hgpy_import_dlpack, METH_FASTCALL,
     "_import_dlpack(obj, executor) -> (Buffer, shape, strides, offset)"},
    {"_capsule_binary", (PyCFunction)(void (*)(void))hgpy_capsule_binary, METH_FASTCALL,
     "_capsule_binary(op, capsule_a, capsule_b, executor) -> DLPack capsule of the op's result"},
    {"_capsule_matmul", (PyCFunction)(void (*)(void))hgpy_capsule_matmul, METH_FASTCALL,
     "_capsule_matmul(capsule_a, capsule_b, executor) -> DLPack capsule of a @ b"},
    {"_capsule_addmm", (PyCFunction)(void (*)(void))hgpy_capsule_addmm, METH_FASTCALL,
     "_capsule_addmm(capsule_bias, capsule_a, capsule_b, executor) -> DLPack capsule of "
     "a @ b + bias"},
    {"_from_capsule", (PyCFunction)(void (*)(void))hgpy_from_capsule, METH_FASTCALL,
     "_from_capsule(capsule, executor) -> Tensor over an unused DLPack capsule's memory"},
    {"_wrap_buffer", (PyCFunction)(void (*)(void))hgpy_wrap_buffer, METH_FASTCALL,
     "_wrap_buffer(obj, executor) -> Buffer over obj's C-contiguous memory, or None"},
    {"_reset_bf16", hgpy_reset_bf16, METH_NOARGS,
     "_reset_bf16(): forget bf16's numpy dtype; the next use imports ml_dtypes again (tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "hologram._C", "C core of the hologram package.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

static struct PyModuleDef ops_def = {
    PyModuleDef_HEAD_INIT, "hologram._C.ops", "Flat ops of the product documents.", -1,
    hgpy_ops_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__C(void) {
    hgpy_errors_fork_init();
    if (hgpy_dtype_init()) return NULL;
    if (PyType_Ready(&HgExecutor_Type) < 0 || PyType_Ready(&HgBuffer_Type) < 0 ||
        PyType_Ready(&HgOpFunction_Type) < 0)
        return NULL;
    PyObject* m = PyModule_Create(&module_def);
    if (!m) return NULL;
    PyObject* ops = PyModule_Create(&ops_def);
    if (!ops || PyModule_AddObject(m, "ops", ops) < 0) goto fail;
    Py_INCREF(&HgExecutor_Type);
    if (PyModule_AddObject(m, "Executor", (PyObject*)&HgExecutor_Type) < 0) goto fail;
    Py_INCREF(&HgBuffer_Type);
    if (PyModule_AddObject(m, "Buffer", (PyObject*)&HgBuffer_Type) < 0) goto fail;
    if (PyType_Ready(&HgEvent_Type) < 0) goto fail;
    Py_INCREF(&HgEvent_Type);
    if (PyModule_AddObject(m, "Event", (PyObject*)&HgEvent_Type) < 0) goto fail;
    if (hgpy_tensor_types_init(m) < 0) goto fail;
    if (PyType_Ready(&HgGraph_Type) < 0 || PyType_Ready(&HgPlan_Type) < 0 ||
        PyType_Ready(&HgJitFunction_Type) < 0)
        goto fail;
    Py_INCREF(&HgJitFunction_Type);
    if (PyModule_AddObject(m, "JitFunction", (PyObject*)&HgJitFunction_Type) < 0) goto fail;
    Py_INCREF(&HgGraph_Type);
    if (PyModule_AddObject(m, "Graph", (PyObject*)&HgGraph_Type) < 0) goto fail;
    Py_INCREF(&HgPlan_Type);
    if (PyModule_AddObject(m, "Plan", (PyObject*)&HgPlan_Type) < 0) goto fail;
    if (PyModule_AddStringConstant(m, "__version__", hg_version()) < 0) goto fail;
    if (PyModule_AddIntConstant(m, "HEADER_VERSION_NUMBER", HG_VERSION_NUMBER) < 0) goto fail;
    if (PyModule_AddIntConstant(m, "LIBRARY_VERSION_NUMBER", hg_version_number()) < 0) goto fail;
    PyObject* names = PyTuple_New(HG_DTYPE_COUNT);
    if (!names) goto fail;
    for (int i = 0; i < HG_DTYPE_COUNT; i++)
        PyTuple_SET_ITEM(names, i, PyUnicode_FromString(hg_dtype_name((hg_dtype)i)));
    if (PyModule_AddObject(m, "dtype_names", names) < 0) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
