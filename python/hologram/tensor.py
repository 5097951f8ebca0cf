"""hologram.Tensor: N-d strided views over Buffers with numpy-like behaviour.

The object, its attributes, the operators (+ - * / // % ** @, comparisons, & | ^ << >>, unary
-, +, abs, ~) and the view primitives are C (hologram._C.Tensor); this subclass adds indexing,
shape methods, reductions, conversion to numpy and the repr. Views never copy; ops allocate
their result on the inputs' Executor.
"""

import numbers
import operator

import numpy as np

from . import _C
from ._dtypes import _dtype_name, _is_bf16  # noqa: F401  (hologram.tensor's own names too)
from .errors import InvalidArgumentError, OutOfRangeError, UnsupportedError

__all__ = ["Tensor"]

_REDUCE = _C.reduce_ops   # name -> hg_reduce_op code
_UNARY = _C.unary_ops


def _shape_args(shape):
    """reshape(2, 3) and reshape((2, 3)) alike."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        return tuple(shape[0])
    return tuple(shape)


def _is_basic_index(k):
    return k is None or k is Ellipsis or isinstance(k, (slice, numbers.Integral, np.integer)) \
        and not isinstance(k, (bool, np.bool_))


class Tensor(_C.Tensor):
    """An N-d view of a Buffer's memory: ``shape``, ``dtype``, ``strides`` (in elements),
    ``offset``, ``buffer``, ``executor``. Create with ``hologram.tensor``, ``asarray``,
    ``zeros``/``ones``/``empty``/``full``/``arange``, ``from_dlpack`` or ``Tensor(buffer,
    shape)``."""

    __slots__ = ()

    # --- conversion -------------------------------------------------------------------------
    def numpy(self, copy=False):
        """The elements as a numpy array.

        Parameters
        ----------
        copy : bool, default False
            False: a zero-copy view of CPU memory (writes are visible both ways; the array keeps
            the memory alive). True: an independent copy (the only way for device memory).

        Returns
        -------
        numpy.ndarray
            Of dtype ``self.dtype``; bfloat16 tensors give ``ml_dtypes.bfloat16`` arrays when
            ml_dtypes is installed, else their raw bits as uint16.

        Raises
        ------
        UnsupportedError
            ``copy=False`` on device memory.

        Examples
        --------
        >>> hg.arange(3).numpy()
        array([0, 1, 2])
        """
        if self.data_ptr == 0 and self.size:
            if not copy:
                raise UnsupportedError(
                    f"numpy(): the Tensor is in {self.backend} device memory; numpy(copy=True) "
                    "copies it to the host")
            return self.contiguous()._host_copy()
        if not self.size and self.backend != "cpu":   # no elements, no device memory to view
            return np.empty(self.shape, dtype=self.dtype)
        item = self.itemsize
        arr = np.ndarray(self.shape, dtype=self.dtype, buffer=self.buffer,
                         offset=self.offset * item, strides=[s * item for s in self.strides])
        return arr.copy() if copy else arr

    to_numpy = numpy

    def _host_copy(self):
        out = np.empty(self.shape, dtype=self.dtype)
        out.reshape(-1).view(np.uint8)[:] = np.frombuffer(self.buffer.to_bytes(), np.uint8)[
            self.offset * self.itemsize:(self.offset + self.size) * self.itemsize]
        return out

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy(copy=bool(copy))
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("__array__: a dtype change needs a copy")
            arr = arr.astype(dtype)
        return arr

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy ufuncs on Tensors run as hologram ops (np.exp(t) is a Tensor); ufuncs and
        methods hologram lacks run in numpy on host views of the Tensors."""
        if method == "__call__" and set(kwargs) <= {"out"}:
            f = _ufunc_ops().get(ufunc.__name__)
            out = kwargs.get("out")
            if out is not None:
                out = out[0] if isinstance(out, tuple) and len(out) == 1 else out
            if f is not None and (out is None or isinstance(out, _C.Tensor)) and \
                    len(inputs) == ufunc.nin:
                return f(*inputs, out=out) if out is not None else f(*inputs)
        args = [_host_value(x) for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(_host_value(o) for o in kwargs["out"])
        return getattr(ufunc, method)(*args, **kwargs)

    def tolist(self):
        """The values as nested Python lists (bf16 as floats), as numpy.ndarray.tolist."""
        return self._values().tolist()

    def _values(self):
        """numpy values for display and tolist (bf16 shown as its float values)."""
        if self.dtype_name == "bf16":
            return self.astype("float32").numpy()
        return self.numpy()

    def __repr__(self):
        if self.buffer.freed:
            return f"<hologram.Tensor of a freed Buffer, shape={self.shape}>"
        body = np.array2string(self._values(), separator=", ", prefix="Tensor(")
        return f"Tensor({body}, dtype={self.dtype_name}, backend={self.backend})"

    __str__ = __repr__

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d Tensor")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d Tensor")
        for i in range(self.shape[0]):
            yield self._select(0, i)

    def __complex__(self):
        return complex(self.item())

    def __format__(self, spec):
        if self.ndim == 0 or self.size == 1:
            return format(self.item(), spec)
        return format(repr(self), spec)

    # --- shape ------------------------------------------------------------------------------
    def reshape(self, *shape):
        """A view when the strides allow it (numpy's rule), else a contiguous copy; -1 infers."""
        return self._reshape(_shape_args(shape))

    def view(self, *shape):
        """Alias of reshape (torch's name)."""
        return self.reshape(*shape)

    def flatten(self):
        """A 1-D copy (numpy.ndarray.flatten always copies)."""
        return self.copy().reshape(-1)

    def ravel(self):
        """1-D: a view when possible."""
        return self.reshape(-1)

    def transpose(self, *axes):
        """No axes: reverse the dims (numpy). A view."""
        if not axes:
            axes = tuple(range(self.ndim - 1, -1, -1))
        return self._permute(_shape_args(axes))

    def permute(self, *dims):
        """The dims in the given order (torch's name for transpose(*axes)). A view."""
        return self._permute(_shape_args(dims))

    @property
    def T(self):
        """The dims reversed (transpose()). A view."""
        return self.transpose()

    @property
    def mT(self):
        """Transpose of the last two dims."""
        if self.ndim < 2:
            raise ValueError("mT needs at least 2 dims")
        return self.swapaxes(-1, -2)

    def swapaxes(self, a, b):
        """Dims a and b exchanged. A view."""
        perm = list(range(self.ndim))
        a, b = _axis(a, self.ndim, "swapaxes"), _axis(b, self.ndim, "swapaxes")
        perm[a], perm[b] = perm[b], perm[a]
        return self._permute(tuple(perm))

    def squeeze(self, axis=None):
        """Without the size-1 dims (axis: only that dim or tuple of dims, which must be 1). A
        view."""
        if axis is None:
            return self._squeeze(None)
        # numpy: a 0-d tensor takes an int axis 0 / -1 (not in a tuple) and returns itself
        axes = _axes(axis, self.ndim if isinstance(axis, tuple) else max(self.ndim, 1),
                     "squeeze")
        if self.ndim == 0:
            return self._squeeze(None)
        t = self
        for a in sorted(axes, reverse=True):
            t = t._squeeze(a)
        return t

    def unsqueeze(self, axis):
        """A new size-1 dim at axis (numpy's expand_dims). A view."""
        return self._unsqueeze(axis)

    def expand_dims(self, axis):
        """numpy.expand_dims: size-1 dims at the axes (an int or tuple) of the result. A view."""
        axes = _axes(axis, self.ndim + (len(axis) if isinstance(axis, tuple) else 1),
                     "expand_dims")
        t = self
        for a in sorted(axes):
            t = t._unsqueeze(a)
        return t

    def broadcast_to(self, shape):
        """A read view with the given shape by numpy's broadcasting rules (stride 0 dims)."""
        return self._expand(tuple(shape) if not isinstance(shape, numbers.Integral) else (shape,))

    def expand(self, *shape):
        """broadcast_to with torch's spelling (expand(2, 3) or expand((2, 3)))."""
        return self._expand(_shape_args(shape))

    # --- copies and types -------------------------------------------------------------------
    def copy(self):
        """A C-contiguous copy."""
        return _C.cast(self, self.dtype_name)

    def clone(self):
        """A C-contiguous copy (torch's name for copy())."""
        return self.copy()

    def astype(self, dtype, copy=True):
        """Conversion (the ISA's cvt rules: float->int truncates and saturates, NaN->0).
        ``copy=False`` returns self when the dtype already matches."""
        if not copy and _dtype_name(dtype) == self.dtype_name:
            return self
        return _C.cast(self, dtype)

    def fill(self, value):
        """Sets every element to value (in place; returns None, as numpy)."""
        _C.fill(self, value)

    def fill_(self, value):
        """Sets every element to value in place and returns self (torch's form)."""
        _C.fill(self, value)
        return self

    def copy_(self, src):
        """self[...] = src (broadcast, converted to self's dtype); returns self."""
        _C.copy(self, src)
        return self

    def to(self, executor):
        """The same values on another Executor (a copy; self when it is already there)."""
        return _interop.to_executor(self, executor)

    def cpu(self):
        """The values on the default CPU executor (self when already on a CPU executor)."""
        return self.to(_interop.default_cpu_executor()) if self.backend != "cpu" else self

    # --- indexing ---------------------------------------------------------------------------
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if all(_is_basic_index(k) for k in key):
            return self._basic_index(key)
        return self._advanced_get(key)

    def __setitem__(self, key, value):
        if self.readonly:
            raise ValueError("assignment destination is read-only")
        if not isinstance(key, tuple):
            key = (key,)
        if all(_is_basic_index(k) for k in key):
            _C.copy(self._basic_index(key), value)
            return
        if self.data_ptr == 0 and self.size:
            # Device memory: numpy's assignment on a host copy of this view, written back (the
            # whole view crosses the bus twice; basic-index assignment above stays on the device).
            host = self.numpy(copy=True)
            host[_numpy_key(key)] = np.asarray(_host_value(value))
            _C.copy(self, _interop.asarray(host, executor=self.executor))
            return
        self.numpy()[_numpy_key(key)] = np.asarray(_host_value(value))

    def _basic_index(self, key):
        n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
        if n_real > self.ndim:
            raise IndexError(f"too many indices: {n_real} for a {self.ndim}-d Tensor")
        if sum(1 for k in key if k is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        t, dim = self, 0
        for k in key:
            if k is Ellipsis:
                dim += self.ndim - n_real
                continue
            if k is None:
                t = t._unsqueeze(dim)
                dim += 1
            elif isinstance(k, slice):
                t = t._slice(dim, k.start, k.stop, k.step)
                dim += 1
            else:
                t = t._select(dim, int(k))
        return t

    def _advanced_get(self, key):
        # One integer array on one axis, the others basic: index_select (stays on the device).
        adv = [i for i, k in enumerate(key) if not _is_basic_index(k)]
        if len(adv) == 1 and not any(k is Ellipsis or k is None for k in key):
            idx = key[adv[0]]
            idx_t = idx if isinstance(idx, _C.Tensor) else None
            arr = None if idx_t is not None else np.asarray(idx)
            if idx_t is not None and idx_t.dtype.kind in "iu" or \
                    arr is not None and arr.dtype.kind in "iu":
                before = self._basic_index(key[:adv[0]] + (slice(None),) * (len(key) - adv[0]))
                axis = sum(1 for k in key[:adv[0]] if isinstance(k, slice))
                if idx_t is None:
                    idx_t = _interop.asarray(arr.astype(np.int64), executor=self.executor)
                flat = idx_t.reshape(-1)
                out = _C.index_select(before, axis, flat)
                if idx_t.ndim != 1:
                    shp = out.shape
                    out = out.reshape(shp[:axis] + idx_t.shape + shp[axis + 1:])
                rest = key[adv[0] + 1:]
                if rest:
                    out = out[(slice(None),) * (axis + idx_t.ndim) + rest]
                return out
        # Boolean masks and several index arrays: numpy's rules (a copy, as numpy).
        if self.data_ptr == 0 and self.size:
            # Device memory: numpy's rules applied on the host to the element numbers (8 bytes
            # per element of this view), then one gather on the device.
            pos = np.arange(self.size, dtype=np.int64).reshape(self.shape)[_numpy_key(key)]
            flat = self.contiguous().reshape(-1)
            idx = _interop.asarray(pos.reshape(-1), executor=self.executor)
            return _C.index_select(flat, 0, idx).reshape(pos.shape)
        res = self.numpy()[_numpy_key(key)]
        return _interop.asarray(np.asarray(res), executor=self.executor, copy=True)

    # --- reductions -------------------------------------------------------------------------
    def _reduce(self, name, axis, keepdims, out=None, ddof=0, dtype=None):
        x = self if dtype is None else self.astype(dtype)
        return _C.reduce(_REDUCE[name], x, axis, keepdims, out, ddof)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """Sum over axis (None: all; int or tuple); bool and ints accumulate in (u)int64."""
        return self._reduce("sum", axis, keepdims, out, dtype=dtype)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """Mean over axis (None: all; int or tuple)."""
        return self._reduce("mean", axis, keepdims, out, dtype=dtype)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        """Product over axis (None: all; int or tuple)."""
        return self._reduce("prod", axis, keepdims, out, dtype=dtype)

    def min(self, axis=None, out=None, keepdims=False):
        """Minimum over axis (None: all; int or tuple); NaN propagates."""
        return self._reduce("min", axis, keepdims, out)

    def max(self, axis=None, out=None, keepdims=False):
        """Maximum over axis (None: all; int or tuple); NaN propagates."""
        return self._reduce("max", axis, keepdims, out)

    amin, amax = min, max

    def argmin(self, axis=None, out=None, keepdims=False):
        """Index of the minimum along axis (None: of the flattened tensor; first NaN wins)."""
        return self._reduce("argmin", axis, keepdims, out)

    def argmax(self, axis=None, out=None, keepdims=False):
        """Index of the maximum along axis (None: of the flattened tensor; first NaN wins)."""
        return self._reduce("argmax", axis, keepdims, out)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """Variance over axis with numpy's ddof (divisor n - ddof)."""
        return self._reduce("var", axis, keepdims, out, ddof, dtype=dtype)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """Standard deviation over axis with numpy's ddof."""
        return self._reduce("std", axis, keepdims, out, ddof, dtype=dtype)

    def logsumexp(self, axis=None, out=None, keepdims=False):
        """log(sum(exp(x))) over axis, without overflow."""
        return self._reduce("logsumexp", axis, keepdims, out)

    def any(self, axis=None, out=None, keepdims=False):
        """True where any element along axis is nonzero."""
        return self._reduce("any", axis, keepdims, out)

    def all(self, axis=None, out=None, keepdims=False):
        """True where every element along axis is nonzero."""
        return self._reduce("all", axis, keepdims, out)

    # --- a few elementwise methods (the rest: hologram.ops) -----------------------------------
    def clip(self, lo=None, hi=None, out=None):
        """Values limited to [lo, hi] (hologram.ops.clip)."""
        return ops.clip(self, lo, hi, out)

    def matmul(self, other):
        """self @ other (hologram.ops.matmul)."""
        return _C.matmul(self, other)

    def dot(self, other):
        """numpy.dot: a product when either is 0-d, matmul up to 2-D (or a 1-D other), else
        the sum over self's last axis and other's second-to-last (not matmul's batching)."""
        if not isinstance(other, _C.Tensor):
            other = _interop.asarray(other, executor=self.executor)
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        if other.ndim == 1 or (self.ndim <= 2 and other.ndim <= 2):
            return _C.matmul(self, other)
        nd, k = other.ndim, other.shape[-2]
        b = other._permute((nd - 2,) + tuple(range(nd - 2)) + (nd - 1,))
        a = self.reshape(int(np.prod(self.shape[:-1])), self.shape[-1])
        r = _C.matmul(a, b.reshape(k, int(np.prod(other.shape[:-2] + other.shape[-1:]))))
        return r.reshape(self.shape[:-1] + other.shape[:-2] + other.shape[-1:])

    def exp(self):
        """e^x elementwise (hologram.ops.exp)."""
        return _C.unary(_UNARY["exp"], self)

    def log(self):
        """Natural logarithm elementwise (hologram.ops.log)."""
        return _C.unary(_UNARY["log"], self)

    def sqrt(self):
        """Square root elementwise (hologram.ops.sqrt)."""
        return _C.unary(_UNARY["sqrt"], self)

    def round(self, decimals=0):
        """numpy.round: half to even at `decimals` decimal places (negative: tens, hundreds...).
        Floats as numpy computes it, in their own dtype: rint(x * 10^d) / 10^d, or
        rint(x / 10^-d) * 10^-d for d < 0. Integers and bool are unchanged for d >= 0; for
        d < 0 integers round in float64 (exact below 2^53) and come back in their dtype."""
        decimals = operator.index(decimals)
        rint = _UNARY["round"]
        is_float = self.dtype_name in ("f16", "bf16", "f32", "f64")
        if decimals == 0 or (not is_float and decimals > 0):
            return _C.unary(rint, self)
        if self.dtype_name == "bool":
            return self.copy()
        if not is_float:
            f = 10.0 ** -decimals
            return (_C.unary(rint, self.astype("float64") / f) * f).astype(self.dtype_name)
        if decimals > 0:
            f = 10.0 ** decimals
            return _C.unary(rint, self * f) / f
        f = 10.0 ** -decimals
        return _C.unary(rint, self / f) * f


def _axis(a, ndim, fn):
    """numpy's axis normalization: -ndim <= a < ndim, else an AxisError-like error."""
    a = operator.index(a)
    if not -ndim <= a < ndim:
        raise OutOfRangeError(f"{fn}: axis {a} is out of range for a tensor of {ndim} dims "
                              f"(valid: {-ndim}..{ndim - 1})", 105)
    return a % ndim


def _axes(axis, ndim, fn):
    """An int or tuple of axes, normalized; a repeated axis raises (numpy)."""
    axes = [_axis(a, ndim, fn) for a in (axis if isinstance(axis, tuple) else (axis,))]
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError(f"{fn}: repeated axis in {axis}", 100)
    return axes


def _numpy_key(key):
    out = []
    for k in key:
        if isinstance(k, _C.Tensor):
            out.append(k.numpy() if k.data_ptr or not k.size else k.numpy(copy=True))
        else:
            out.append(k)
    return tuple(out)


def _host_value(v):
    if isinstance(v, _C.Tensor):
        return v.numpy() if v.data_ptr else v.numpy(copy=True)
    if isinstance(v, _C.Buffer):
        return v.to_numpy()
    return v


_UFUNCS = None


def _ufunc_ops():
    """numpy ufunc name -> hologram.ops function (built on first use)."""
    global _UFUNCS
    if _UFUNCS is None:
        _UFUNCS = ops.numpy_ufuncs()
    return _UFUNCS


_C._set_tensor_class(Tensor)


# The constructors (_interop) and the ops build Tensors, and Tensor's methods call them: they
# are imported once Tensor exists, here, the one import below the top of the module.
from . import _interop, ops  # noqa: E402
