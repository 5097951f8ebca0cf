// hologram._C.Graph and Plan: the graph API (hg_graph_*, hg_plan_*) for the tracer behind
// @hologram.jit (python/hologram/jit.py) and for users who build graphs by hand. Nodes are ints.
#include <string.h>
#include "hgpy.h"

typedef struct HgGraph {
    PyObject_HEAD
    hg_graph g;
} HgGraph;

static int graph_check(HgGraph* self) {
    if (!self->g.handle) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Graph used after destroy()");
        return -1;
    }
    return 0;
}

static PyObject* node_result(hg_status s, int32_t node, const char* what) {
    if (s != HG_OK) return hgpy_raise_status(s, what);
    return PyLong_FromLong(node);
}

static int get_i32(PyObject* o, int32_t* out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int32_t)v;
    return 0;
}

static int get_shape(PyObject* o, int64_t* shape, int32_t* nd) {
    PyObject* fast = PySequence_Fast(o, "shape must be a sequence of ints");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > HG_MAX_DIMS) {
        Py_DECREF(fast);
        hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "shape has %zd dims, at most %d", n, HG_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        shape[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (shape[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    *nd = (int32_t)n;
    Py_DECREF(fast);
    return 0;
}

static int get_scalar(PyObject* o, hg_scalar* s) {
    if (PyBool_Check(o)) *s = hg_scalar_b(o == Py_True);
    else if (PyLong_Check(o)) {
        long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) return -1;
        *s = hg_scalar_i(v);
    } else {
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) return -1;
        *s = hg_scalar_f(v);
    }
    return 0;
}

// --- Graph --------------------------------------------------------------------------------------
static int Graph_init(HgGraph* self, PyObject* args, PyObject* kwds) {
    if (!PyArg_ParseTuple(args, ":Graph")) return -1;
    if (self->g.handle) hg_graph_destroy(self->g);
    self->g.handle = 0;
    hg_status s = hg_graph_create(&self->g);
    if (s != HG_OK) {
        hgpy_raise_status(s, "Graph");
        return -1;
    }
    return 0;
}

static void Graph_dealloc(HgGraph* self) {
    if (self->g.handle) hg_graph_destroy(self->g);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* Graph_input(HgGraph* self, PyObject* args) {
    PyObject *dt_obj, *shape_obj;
    if (!PyArg_ParseTuple(args, "OO:input", &dt_obj, &shape_obj) || graph_check(self)) return NULL;
    hg_dtype dt;
    int64_t shape[HG_MAX_DIMS];
    int32_t nd, node;
    if (hgpy_dtype_from_object(dt_obj, &dt) || get_shape(shape_obj, shape, &nd)) return NULL;
    hg_status st_ = hg_graph_input(self->g, dt, nd, shape, &node);
    return node_result(st_, node, "Graph.input");
}

static PyObject* Graph_constant(HgGraph* self, PyObject* args) {
    PyObject *dt_obj, *v;
    if (!PyArg_ParseTuple(args, "OO:constant", &dt_obj, &v) || graph_check(self)) return NULL;
    hg_dtype dt;
    hg_scalar sc;
    int32_t node;
    if (hgpy_dtype_from_object(dt_obj, &dt) || get_scalar(v, &sc)) return NULL;
    hg_status st_ = hg_graph_constant(self->g, dt, sc, &node);
    return node_result(st_, node, "Graph.constant");
}

static PyObject* Graph_unary(HgGraph* self, PyObject* args) {
    int op, x, node;
    if (!PyArg_ParseTuple(args, "ii:unary", &op, &x) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_unary(self->g, (hg_unary_op)op, x, &node);
    return node_result(st_, node, "Graph.unary");
}

static PyObject* Graph_binary(HgGraph* self, PyObject* args) {
    int op, a, b, node;
    if (!PyArg_ParseTuple(args, "iii:binary", &op, &a, &b) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_binary(self->g, (hg_binary_op)op, a, b, &node);
    return node_result(st_, node, "Graph.binary");
}

static PyObject* Graph_binary_scalar(HgGraph* self, PyObject* args) {
    int op, a, first = 0, node;
    PyObject* v;
    if (!PyArg_ParseTuple(args, "iiO|p:binary_scalar", &op, &a, &v, &first) || graph_check(self))
        return NULL;
    hg_scalar sc;
    if (get_scalar(v, &sc)) return NULL;
    hg_status st_ = hg_graph_binary_scalar(self->g, (hg_binary_op)op, a, sc, first, &node);
    return node_result(st_, node, "Graph.binary_scalar");
}

static PyObject* Graph_where(HgGraph* self, PyObject* args) {
    int c, a, b, node;
    if (!PyArg_ParseTuple(args, "iii:where", &c, &a, &b) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_where(self->g, c, a, b, &node);
    return node_result(st_, node, "Graph.where");
}

static PyObject* Graph_fma(HgGraph* self, PyObject* args) {
    int a, b, c, node;
    if (!PyArg_ParseTuple(args, "iii:fma", &a, &b, &c) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_fma(self->g, a, b, c, &node);
    return node_result(st_, node, "Graph.fma");
}

static PyObject* Graph_cast(HgGraph* self, PyObject* args) {
    int x, node;
    PyObject* dt_obj;
    if (!PyArg_ParseTuple(args, "iO:cast", &x, &dt_obj) || graph_check(self)) return NULL;
    hg_dtype dt;
    if (hgpy_dtype_from_object(dt_obj, &dt)) return NULL;
    hg_status st_ = hg_graph_cast(self->g, x, dt, &node);
    return node_result(st_, node, "Graph.cast");
}

static PyObject* shape_op(HgGraph* self, PyObject* args, int reshape) {
    int x, node;
    PyObject* shape_obj;
    if (!PyArg_ParseTuple(args, "iO", &x, &shape_obj) || graph_check(self)) return NULL;
    int64_t shape[HG_MAX_DIMS];
    int32_t nd;
    if (get_shape(shape_obj, shape, &nd)) return NULL;
    hg_status s = reshape ? hg_graph_reshape(self->g, x, nd, shape, &node)
                          : hg_graph_expand(self->g, x, nd, shape, &node);
    return node_result(s, node, reshape ? "Graph.reshape" : "Graph.expand");
}
static PyObject* Graph_expand(HgGraph* self, PyObject* args) { return shape_op(self, args, 0); }
static PyObject* Graph_reshape(HgGraph* self, PyObject* args) { return shape_op(self, args, 1); }

// permute(x, perm)
static PyObject* Graph_permute(HgGraph* self, PyObject* args) {
    int x, node;
    PyObject* perm_obj;
    if (!PyArg_ParseTuple(args, "iO:permute", &x, &perm_obj) || graph_check(self)) return NULL;
    int64_t p64[HG_MAX_DIMS];
    int32_t nd, perm[HG_MAX_DIMS];
    if (get_shape(perm_obj, p64, &nd)) return NULL;
    for (int32_t i = 0; i < nd; i++) perm[i] = (int32_t)p64[i];
    hg_status s = hg_graph_permute(self->g, x, nd, perm, &node);
    return node_result(s, node, "Graph.permute");
}

static int slice_bound(PyObject* o, int64_t* out) {
    if (o == Py_None) { *out = HG_SLICE_NONE; return 0; }
    *out = PyLong_AsLongLong(o);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

// slice(x, axis, start, stop, step=1): start / stop may be None
static PyObject* Graph_slice(HgGraph* self, PyObject* args) {
    int x, axis, node;
    long long step = 1;
    PyObject *start_obj, *stop_obj;
    if (!PyArg_ParseTuple(args, "iiOO|L:slice", &x, &axis, &start_obj, &stop_obj, &step) ||
        graph_check(self))
        return NULL;
    int64_t start, stop;
    if (slice_bound(start_obj, &start) || slice_bound(stop_obj, &stop)) return NULL;
    hg_status s = hg_graph_slice(self->g, x, axis, start, stop, step, &node);
    return node_result(s, node, "Graph.slice");
}

// concat(nodes, axis)
static PyObject* Graph_concat(HgGraph* self, PyObject* args) {
    int axis, node = -1;
    PyObject* nodes_obj;
    if (!PyArg_ParseTuple(args, "Oi:concat", &nodes_obj, &axis) || graph_check(self)) return NULL;
    PyObject* fast = PySequence_Fast(nodes_obj, "nodes must be a sequence of node ids");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int32_t* ids = PyMem_Malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) { Py_DECREF(fast); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { PyMem_Free(ids); Py_DECREF(fast); return NULL; }
        ids[i] = (int32_t)v;
    }
    Py_DECREF(fast);
    hg_status s = n > INT32_MAX ? HG_ERR_INVALID_ARGUMENT
                                : hg_graph_concat(self->g, (int32_t)n, ids, axis, &node);
    PyMem_Free(ids);
    return node_result(s, node, "Graph.concat");
}

// reduce(op, x, axes or None, keepdims)
static PyObject* Graph_reduce(HgGraph* self, PyObject* args) {
    int op, x, keep = 0, node;
    PyObject* axes_obj;
    if (!PyArg_ParseTuple(args, "iiO|p:reduce", &op, &x, &axes_obj, &keep) || graph_check(self))
        return NULL;
    int32_t axes[HG_MAX_DIMS], naxes = 0;
    const int32_t* ap = NULL;
    if (axes_obj != Py_None) {
        int64_t a64[HG_MAX_DIMS];
        if (get_shape(axes_obj, a64, &naxes)) return NULL;
        for (int32_t i = 0; i < naxes; i++) axes[i] = (int32_t)a64[i];
        ap = axes;
    }
    hg_status st_ = hg_graph_reduce(self->g, (hg_reduce_op)op, x, naxes, ap, keep, &node);
    return node_result(st_, node, "Graph.reduce");
}

static PyObject* Graph_softmax(HgGraph* self, PyObject* args) {
    int x, axis, lg = 0, node;
    if (!PyArg_ParseTuple(args, "ii|p:softmax", &x, &axis, &lg) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_softmax(self->g, x, axis, lg, &node);
    return node_result(st_, node, "Graph.softmax");
}

static PyObject* Graph_norm_stat(HgGraph* self, PyObject* args) {
    int norm, which, node;
    if (!PyArg_ParseTuple(args, "ii:norm_stat", &norm, &which) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_norm_stat(self->g, norm, which, &node);
    return node_result(st_, node, "Graph.norm_stat");
}

static PyObject* Graph_norm(HgGraph* self, PyObject* args) {
    int x, nnorm, w, b, rms = 0, node;
    double eps;
    if (!PyArg_ParseTuple(args, "iiiid|p:norm", &x, &nnorm, &w, &b, &eps, &rms) ||
        graph_check(self))
        return NULL;
    hg_status st_ = hg_graph_norm(self->g, x, nnorm, w, b, eps, rms, &node);
    return node_result(st_, node, "Graph.norm");
}

static PyObject* Graph_matmul(HgGraph* self, PyObject* args) {
    int a, b, node;
    if (!PyArg_ParseTuple(args, "ii:matmul", &a, &b) || graph_check(self)) return NULL;
    hg_status st_ = hg_graph_matmul(self->g, a, b, &node);
    return node_result(st_, node, "Graph.matmul");
}

static PyObject* Graph_output(HgGraph* self, PyObject* arg) {
    int32_t node;
    if (get_i32(arg, &node) || graph_check(self)) return NULL;
    hg_status s = hg_graph_output(self->g, node);
    if (s != HG_OK) return hgpy_raise_status(s, "Graph.output");
    Py_RETURN_NONE;
}

// node_info(node) -> (dtype_name, shape)
static PyObject* Graph_node_info(HgGraph* self, PyObject* arg) {
    int32_t node, nd;
    if (get_i32(arg, &node) || graph_check(self)) return NULL;
    hg_dtype dt;
    int64_t shape[HG_MAX_DIMS];
    hg_status s = hg_graph_node_info(self->g, node, &dt, &nd, shape);
    if (s != HG_OK) return hgpy_raise_status(s, "Graph.node_info");
    PyObject* sh = PyTuple_New(nd);
    if (!sh) return NULL;
    for (int32_t i = 0; i < nd; i++) PyTuple_SET_ITEM(sh, i, PyLong_FromLongLong(shape[i]));
    return Py_BuildValue("(sN)", hg_dtype_name(dt), sh);
}

static PyObject* text_result(hg_status s, char* text, const char* what) {
    if (s != HG_OK) return hgpy_raise_status(s, what);
    PyObject* r = PyUnicode_FromString(text);
    hg_free(text);
    return r;
}

static PyObject* Graph_print(HgGraph* self, PyObject* unused) {
    if (graph_check(self)) return NULL;
    char* text = NULL;
    hg_status st = hg_graph_print(self->g, &text);
    return text_result(st, text, "Graph.print");
}

static PyObject* Graph_compile(HgGraph* self, PyObject* exobj) {
    if (graph_check(self)) return NULL;
    if (!PyObject_TypeCheck(exobj, &HgExecutor_Type))
        return PyErr_Format(PyExc_TypeError, "Graph.compile: expected a hologram.Executor, got "
                            "%.100s", Py_TYPE(exobj)->tp_name);
    HgExecutor* e = (HgExecutor*)exobj;
    if (e->closed) return hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Executor used after close()");
    hg_plan p;
    hg_status s;
    Py_BEGIN_ALLOW_THREADS
    s = hg_graph_compile(self->g, e->ex, &p);
    Py_END_ALLOW_THREADS
    if (s != HG_OK) return hgpy_raise_status(s, "Graph.compile");
    HgPlan* o = PyObject_New(HgPlan, &HgPlan_Type);
    if (!o) {
        hg_plan_destroy(p);
        return NULL;
    }
    o->p = p;
    o->ex = (HgExecutor*)Py_NewRef(exobj);
    o->ninputs = o->noutputs = 0;
    return (PyObject*)o;
}

static PyObject* Graph_destroy(HgGraph* self, PyObject* unused) {
    if (self->g.handle) hg_graph_destroy(self->g);
    self->g.handle = 0;
    Py_RETURN_NONE;
}

static PyMethodDef Graph_methods[] = {
    {"input", (PyCFunction)Graph_input, METH_VARARGS, "input(dtype, shape) -> node"},
    {"constant", (PyCFunction)Graph_constant, METH_VARARGS, "constant(dtype, value) -> node (0-d)"},
    {"unary", (PyCFunction)Graph_unary, METH_VARARGS, "unary(op, x) -> node"},
    {"binary", (PyCFunction)Graph_binary, METH_VARARGS, "binary(op, a, b) -> node"},
    {"binary_scalar", (PyCFunction)Graph_binary_scalar, METH_VARARGS,
     "binary_scalar(op, a, value, scalar_first=False) -> node"},
    {"where", (PyCFunction)Graph_where, METH_VARARGS, "where(cond, a, b) -> node"},
    {"fma", (PyCFunction)Graph_fma, METH_VARARGS, "fma(a, b, c) -> node"},
    {"cast", (PyCFunction)Graph_cast, METH_VARARGS, "cast(x, dtype) -> node"},
    {"expand", (PyCFunction)Graph_expand, METH_VARARGS, "expand(x, shape) -> node"},
    {"reshape", (PyCFunction)Graph_reshape, METH_VARARGS, "reshape(x, shape) -> node"},
    {"permute", (PyCFunction)Graph_permute, METH_VARARGS, "permute(x, perm) -> node (a view)"},
    {"slice", (PyCFunction)Graph_slice, METH_VARARGS,
     "slice(x, axis, start, stop, step=1) -> node (a view; start / stop may be None)"},
    {"concat", (PyCFunction)Graph_concat, METH_VARARGS, "concat(nodes, axis) -> node"},
    {"reduce", (PyCFunction)Graph_reduce, METH_VARARGS,
     "reduce(op, x, axes or None, keepdims=False) -> node"},
    {"softmax", (PyCFunction)Graph_softmax, METH_VARARGS, "softmax(x, axis, log=False) -> node"},
    {"norm", (PyCFunction)Graph_norm, METH_VARARGS,
     "norm(x, nnorm, weight, bias, eps, rms=False) -> node (weight/bias -1: none)"},
    {"norm_stat", (PyCFunction)Graph_norm_stat, METH_VARARGS,
     "norm_stat(norm, which) -> node: the mean (0) / rstd (1) of a layer norm node"},
    {"matmul", (PyCFunction)Graph_matmul, METH_VARARGS, "matmul(a, b) -> node"},
    {"output", (PyCFunction)Graph_output, METH_O, "output(node): mark as an output"},
    {"node_info", (PyCFunction)Graph_node_info, METH_O, "node_info(node) -> (dtype_name, shape)"},
    {"print", (PyCFunction)Graph_print, METH_NOARGS, "print() -> text of the graph"},
    {"compile", (PyCFunction)Graph_compile, METH_O, "compile(executor) -> Plan"},
    {"destroy", (PyCFunction)Graph_destroy, METH_NOARGS, "destroy(): release now"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject HgGraph_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram._C.Graph",
    .tp_basicsize = sizeof(HgGraph),
    .tp_dealloc = (destructor)Graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Graph(): a graph of tensor ops (docs/graph.md); compile(executor) -> Plan.",
    .tp_methods = Graph_methods,
    .tp_init = (initproc)Graph_init,
    .tp_new = PyType_GenericNew,
};

// --- Plan ---------------------------------------------------------------------------------------
static void Plan_dealloc(HgPlan* self) {
    if (self->p.handle && self->ex && !self->ex->destroyed) hg_plan_destroy(self->p);
    Py_CLEAR(self->ex);
    PyObject_Free(self);
}

// Tensors of a list argument into ts (borrowed views; the list keeps the objects alive).
static int tensor_list(PyObject* seq, const char* what, hg_tensor** ts, HgBuffer*** bases,
                       int32_t* n, int writable) {
    PyObject* fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    *ts = PyMem_Calloc((size_t)len + 1, sizeof **ts);
    *bases = PyMem_Calloc((size_t)len + 1, sizeof **bases);
    if (!*ts || !*bases) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject* o = PySequence_Fast_GET_ITEM(fast, i);
        if (!hgpy_is_tensor(o)) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_TypeError, "Plan.run: %s[%zd] must be a hologram.Tensor, got "
                         "%.100s", what, i, Py_TYPE(o)->tp_name);
            return -1;
        }
        HgTensor* t = (HgTensor*)o;
        if (hgpy_tensor_check(t)) {
            Py_DECREF(fast);
            return -1;
        }
        if (writable && t->base->readonly) {
            Py_DECREF(fast);
            hgpy_raise_msg(HG_ERR_INVALID_ARGUMENT, "Plan.run: %s[%zd] wraps read-only memory",
                           what, i);
            return -1;
        }
        (*ts)[i] = t->t;
        (*bases)[i] = t->base;
    }
    *n = (int32_t)len;
    Py_DECREF(fast);
    return 0;
}

int hgpy_plan_run_views(HgPlan* plan, int32_t ni, const hg_tensor* ti, HgBuffer* const* bi,
                        int32_t no, const hg_tensor* to, HgBuffer* const* bo, int64_t elems) {
    if (plan->ex->closed) {
        hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Plan.run: its Executor was closed");
        return -1;
    }
    hg_status s;
    if (elems >= HGPY_GIL_ELEMS) {
        for (int32_t i = 0; i < ni; i++) hgpy_buffer_hold(bi[i]);
        for (int32_t i = 0; i < no; i++) hgpy_buffer_hold(bo[i]);
        Py_BEGIN_ALLOW_THREADS
        s = hg_plan_run(plan->p, ni, ti, no, to);
        Py_END_ALLOW_THREADS
        for (int32_t i = 0; i < ni; i++) hgpy_buffer_unhold(bi[i]);
        for (int32_t i = 0; i < no; i++) hgpy_buffer_unhold(bo[i]);
    } else {
        s = hg_plan_run(plan->p, ni, ti, no, to);
    }
    if (s == HG_OK) return 0;
    hgpy_raise_status(s, "Plan.run");
    return -1;
}

// run(inputs, outputs): inputs in creation order, outputs (existing Tensors) in output order.
static PyObject* Plan_run(HgPlan* self, PyObject* args) {
    PyObject *ins, *outs;
    if (!PyArg_ParseTuple(args, "OO:run", &ins, &outs)) return NULL;
    if (self->ex->closed) return hgpy_raise_msg(HG_ERR_INVALID_HANDLE, "Plan.run: its Executor "
                                                "was closed");
    hg_tensor *ti = NULL, *to = NULL;
    HgBuffer **bi = NULL, **bo = NULL;
    int32_t ni = 0, no = 0;
    PyObject* r = NULL;
    if (tensor_list(ins, "inputs", &ti, &bi, &ni, 0) ||
        tensor_list(outs, "outputs", &to, &bo, &no, 1))
        goto done;
    int64_t elems = 0;
    for (int32_t i = 0; i < ni; i++) elems += hgpy_numel(&ti[i]);
    if (!hgpy_plan_run_views(self, ni, ti, bi, no, to, bo, elems)) r = Py_NewRef(Py_None);
done:
    PyMem_Free(ti);
    PyMem_Free(to);
    PyMem_Free(bi);
    PyMem_Free(bo);
    return r;
}

static PyObject* Plan_info(HgPlan* self, PyObject* unused) {
    hg_plan_info info;
    hg_status s = hg_plan_info_get(self->p, &info);
    if (s != HG_OK) return hgpy_raise_status(s, "Plan.info");
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:K}", "kernels", info.kernels, "library_calls",
                         info.library_calls, "nodes", info.nodes, "rewrites", info.rewrites,
                         "peak_bytes", (unsigned long long)info.peak_bytes);
}

static PyObject* Plan_print(HgPlan* self, PyObject* unused) {
    char* text = NULL;
    hg_status st = hg_plan_print(self->p, &text);
    return text_result(st, text, "Plan.print");
}

static PyObject* Plan_executor(HgPlan* self, void* c) { return Py_NewRef(self->ex); }

static PyMethodDef Plan_methods[] = {
    {"run", (PyCFunction)Plan_run, METH_VARARGS,
     "run(inputs, outputs): inputs in creation order, outputs (existing Tensors) in output "
     "order; shapes and dtypes must match the graph's."},
    {"info", (PyCFunction)Plan_info, METH_NOARGS,
     "info() -> dict(kernels, library_calls, nodes, rewrites, peak_bytes)"},
    {"print", (PyCFunction)Plan_print, METH_NOARGS, "print() -> text of the plan"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Plan_getset[] = {
    {"executor", (getter)Plan_executor, NULL, "The Executor the plan runs on.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject HgPlan_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hologram._C.Plan",
    .tp_basicsize = sizeof(HgPlan),
    .tp_dealloc = (destructor)Plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled graph (Graph.compile); immutable, may run from several threads.",
    .tp_methods = Plan_methods,
    .tp_getset = Plan_getset,
};
