"""The tracer behind @hologram.jit: while a jitted function runs for the first time with a given
input signature, its tensor arguments are Traced values, and every op on them (operators,
hologram.ops functions, a few methods) adds a node to a hologram Graph instead of running.
The graph is then compiled (canonicalized, fused, lowered) into a Plan that later calls run.
"""

import numbers
import threading

from . import _C
from ._dtypes import _dtype_name, weak_scalar_dtype
from .tensor import Tensor

_U = _C.unary_ops
_B = _C.binary_ops
_R = _C.reduce_ops
_state = threading.local()


class TraceError(NotImplementedError):
    """An op the graph compiler cannot take; @jit then runs the function eagerly."""


class Tracer:
    """One trace: the graph, its inputs and the captured tensors bound as extra inputs."""

    def __init__(self):
        self.graph = _C.Graph()
        self.captured = []      # Tensors used by the function but not passed to it
        self._captured_ids = {}

    def input(self, dtype_name, shape):
        return Traced(self, self.graph.input(dtype_name, tuple(shape)))

    def node(self, x):
        """The node of an operand: a Traced of this trace, or a captured Tensor."""
        if isinstance(x, Traced):
            if x.tracer is not self:
                raise TraceError("jit: a value from another trace was used")
            return x.node
        if isinstance(x, _C.Buffer):
            x = Tensor(x)
        if isinstance(x, Tensor):
            key = id(x)
            if key not in self._captured_ids:
                node = self.graph.input(x.dtype_name, x.shape)
                self._captured_ids[key] = node
                self.captured.append(x)
            return self._captured_ids[key]
        raise TraceError(f"jit: operand of type {type(x).__name__} cannot be traced (pass arrays "
                         "as arguments of the jitted function)")

    def wrap(self, node):
        return Traced(self, node)


def _active():
    return getattr(_state, "tracer", None)


def traced(x):
    return isinstance(x, Traced)


def _is_number(x):
    return isinstance(x, (bool, numbers.Integral, numbers.Real)) and not hasattr(x, "shape")


def _binary(tr, code, a, b):
    g = tr.graph
    if _is_number(b):
        return tr.wrap(g.binary_scalar(code, tr.node(a), b, False))
    if _is_number(a):
        return tr.wrap(g.binary_scalar(code, tr.node(b), a, True))
    return tr.wrap(g.binary(code, tr.node(a), tr.node(b)))


def _tracer_of(args):
    for a in args:
        if isinstance(a, Traced):
            return a.tracer
    raise TraceError("jit: no traced operand")


def _axes(axis):
    if axis is None:
        return None
    if isinstance(axis, numbers.Integral):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def trace_dispatch(kind, *args):
    """Adds the node for op `kind` (called by hologram.ops when an operand is Traced)."""
    tr = _tracer_of(args)
    g = tr.graph
    if kind == "unary":
        code, x = args
        return tr.wrap(g.unary(code, tr.node(x)))
    if kind == "binary":
        code, a, b = args
        return _binary(tr, code, a, b)
    if kind == "where":
        c, a, b = args

        def side(v, other):   # a number beside an operand: a constant of numpy's weak dtype
            if _is_number(v) and not _is_number(other):
                dt = g.node_info(tr.node(other))[0]
                return g.constant(weak_scalar_dtype(v, dt), v)
            return tr.node(v)
        return tr.wrap(g.where(tr.node(c), side(a, b), side(b, a)))
    if kind == "fma":
        a, b, c = args
        return tr.wrap(g.fma(tr.node(a), tr.node(b), tr.node(c)))
    if kind == "clip":
        x, lo, hi = args
        r = x
        if lo is not None:
            r = _binary(tr, _B["maximum"], r, lo)
        if hi is not None:
            r = _binary(tr, _B["minimum"], r, hi)
        return r
    if kind == "cast":
        x, dtype = args
        return tr.wrap(g.cast(tr.node(x), _dtype_name(dtype)))
    if kind == "reduce":
        code, x, axis, keepdims = args
        return tr.wrap(g.reduce(code, tr.node(x), _axes(axis), bool(keepdims)))
    if kind == "softmax":
        x, axis, log = args
        return tr.wrap(g.softmax(tr.node(x), int(axis), bool(log)))
    if kind == "matmul":
        a, b = args
        return tr.wrap(g.matmul(tr.node(a), tr.node(b)))
    raise TraceError(f"jit: {kind} is not supported in traced functions")


class Traced:
    """A value inside a traced function: a graph node with a dtype and a shape."""

    __slots__ = ("tracer", "node", "_info")
    __array_priority__ = 1000   # numpy defers to our reflected operators

    def __init__(self, tracer, node):
        self.tracer = tracer
        self.node = node
        self._info = None

    def _nodeinfo(self):
        if self._info is None:
            self._info = self.tracer.graph.node_info(self.node)
        return self._info

    @property
    def shape(self):
        return self._nodeinfo()[1]

    @property
    def dtype_name(self):
        return self._nodeinfo()[0]

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<traced node {self.node}: {self.dtype_name}{list(self.shape)}>"

    def __bool__(self):
        raise TraceError("jit: the truth value of a traced tensor is not known while tracing "
                         "(data-dependent Python control flow cannot be compiled)")

    def __len__(self):
        return self.shape[0]

    # operators
    def _bin(self, name, other, reflected=False):
        tr = self.tracer
        a, b = (other, self) if reflected else (self, other)
        return _binary(tr, _B[name], a, b)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("subtract", o)
    def __rsub__(self, o): return self._bin("subtract", o, True)
    def __mul__(self, o): return self._bin("multiply", o)
    def __rmul__(self, o): return self._bin("multiply", o, True)
    def __truediv__(self, o): return self._bin("divide", o)
    def __rtruediv__(self, o): return self._bin("divide", o, True)
    def __floordiv__(self, o): return self._bin("floor_divide", o)
    def __rfloordiv__(self, o): return self._bin("floor_divide", o, True)
    def __mod__(self, o): return self._bin("remainder", o)
    def __rmod__(self, o): return self._bin("remainder", o, True)
    def __pow__(self, o): return self._bin("power", o)
    def __rpow__(self, o): return self._bin("power", o, True)
    def __and__(self, o): return self._bin("bitwise_and", o)
    def __rand__(self, o): return self._bin("bitwise_and", o, True)
    def __or__(self, o): return self._bin("bitwise_or", o)
    def __ror__(self, o): return self._bin("bitwise_or", o, True)
    def __xor__(self, o): return self._bin("bitwise_xor", o)
    def __rxor__(self, o): return self._bin("bitwise_xor", o, True)
    def __lshift__(self, o): return self._bin("left_shift", o)
    def __rshift__(self, o): return self._bin("right_shift", o)
    def __lt__(self, o): return self._bin("less", o)
    def __le__(self, o): return self._bin("less_equal", o)
    def __gt__(self, o): return self._bin("greater", o)
    def __ge__(self, o): return self._bin("greater_equal", o)
    def __eq__(self, o): return self._bin("equal", o)  # noqa: E704
    def __ne__(self, o): return self._bin("not_equal", o)
    __hash__ = None

    def __matmul__(self, o): return trace_dispatch("matmul", self, o)
    def __rmatmul__(self, o): return trace_dispatch("matmul", o, self)

    def __neg__(self):
        return self.tracer.wrap(self.tracer.graph.unary(_U["neg"], self.node))

    def __pos__(self):
        return self

    def __abs__(self):
        return self.tracer.wrap(self.tracer.graph.unary(_U["abs"], self.node))

    def __invert__(self):
        op = "logical_not" if self.dtype_name == "bool" else "bitwise_not"
        return self.tracer.wrap(self.tracer.graph.unary(_U[op], self.node))

    # methods of Tensor that the graph can express
    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        shape = list(shape)
        if -1 in shape:
            known = 1
            for s in shape:
                if s != -1:
                    known *= s
            total = 1
            for s in self.shape:
                total *= s
            shape[shape.index(-1)] = total // known if known else 0
        return self.tracer.wrap(self.tracer.graph.reshape(self.node, tuple(shape)))

    def broadcast_to(self, shape):
        return self.tracer.wrap(self.tracer.graph.expand(self.node, tuple(shape)))

    def expand(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        return self.broadcast_to(shape)

    def astype(self, dtype, copy=True):
        return trace_dispatch("cast", self, dtype)

    def _red(self, name, axis, keepdims):
        return trace_dispatch("reduce", _R[name], self, axis, keepdims)

    def sum(self, axis=None, keepdims=False): return self._red("sum", axis, keepdims)
    def mean(self, axis=None, keepdims=False): return self._red("mean", axis, keepdims)
    def prod(self, axis=None, keepdims=False): return self._red("prod", axis, keepdims)
    def min(self, axis=None, keepdims=False): return self._red("min", axis, keepdims)
    def max(self, axis=None, keepdims=False): return self._red("max", axis, keepdims)
    def argmin(self, axis=None, keepdims=False): return self._red("argmin", axis, keepdims)
    def argmax(self, axis=None, keepdims=False): return self._red("argmax", axis, keepdims)
    def var(self, axis=None, keepdims=False): return self._red("var", axis, keepdims)
    def std(self, axis=None, keepdims=False): return self._red("std", axis, keepdims)
    def logsumexp(self, axis=None, keepdims=False): return self._red("logsumexp", axis, keepdims)
    def any(self, axis=None, keepdims=False): return self._red("any", axis, keepdims)
    def all(self, axis=None, keepdims=False): return self._red("all", axis, keepdims)

    def clip(self, lo=None, hi=None):
        return trace_dispatch("clip", self, lo, hi)

    def matmul(self, other):
        return trace_dispatch("matmul", self, other)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)   # protocol probes (numpy's __array_interface__, ...)
        raise TraceError(f"jit: Tensor.{name} is not supported in traced functions")
