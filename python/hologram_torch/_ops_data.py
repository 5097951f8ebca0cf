"""The data ops of torch.ops.hologram: index_select / gather and their backward (index_add /
scatter_add into zeros), cat, stack, where, clamp: schema, implementation on hologram, fake,
and vmap rules. Registered on import of _ops (which re-exports them)."""
import torch
from torch.autograd.graph import increment_version

import hologram as hg

from . import _bridge as B
from ._ops import LIB, _cast, _define, _dim, _hg_args, _vmap_elementwise, _vmap_front, _vmap_loop

# ---- indexing: index_select / gather and their backward (index_add / scatter_add) --------------
def _check_index(fn, index, what="index"):
    B.check_tensor(index, what, fn)
    if index.dtype.is_floating_point or index.dtype == torch.bool:
        raise TypeError(f"{fn}: {what} must have an integer dtype (int64 or int32), got "
                        f"{index.dtype}")


def check_index_range(fn, index, size, dim, exc=IndexError, what="index"):
    """torch's rule for index values: each in [0, size). hologram's ops follow numpy's (a
    negative index counts from the end), so the torch ops check here first: one min/max pass
    over the index (hologram reads the indices on the host anyway). exc: torch's class for the
    op (IndexError; gather's is RuntimeError)."""
    if not index.numel():
        return
    lo, hi = index.aminmax()
    lo, hi = int(lo), int(hi)
    if lo < 0 or hi >= size:
        raise exc(f"{fn}: {what} {lo if lo < 0 else hi} is out of range for dim {dim} of size "
                  f"{size} (valid: 0..{size - 1}; negative indices are refused, as by torch)")


def _index_select_fake(x, dim, index, ex=0):
    shape = list(x.shape)
    if shape:
        shape[dim % len(shape)] = index.numel()
    return x.new_empty(shape)


def _index_select_impl(x, dim, index, ex=0):
    fn = "hologram_torch.index_select"
    B.check_tensor(x, "input", fn)
    _check_index(fn, index)
    if index.dim() > 1:
        raise ValueError(f"{fn}: index must be 0-d or 1-D, got {index.dim()}-D")
    if x.dim() == 0 and index.numel() != 1:
        raise ValueError(f"{fn}: an index into a 0-d input can have only 1 value, got "
                         f"{index.numel()}")
    d = _dim(fn, dim, x.dim())
    check_index_range(fn, index, x.shape[d] if x.dim() else 1, d)
    e, dev, (hx, hi) = _hg_args(fn, ex, x, index.reshape(-1))
    if x.dim() == 0:
        hx = hx.reshape((1,))
    return B.to_torch(hg.index_select(hx, d, hi)).reshape(_index_select_fake(x, dim, index).shape)


index_select = _define("index_select(Tensor input, int dim, Tensor index, int ex=0) -> Tensor",
                       _index_select_impl, _index_select_fake)


def _gather_fake(x, dim, index, ex=0):
    return x.new_empty(index.shape)


def _gather_impl(x, dim, index, ex=0):
    fn = "hologram_torch.gather"
    B.check_tensor(x, "input", fn)
    _check_index(fn, index)
    d = _dim(fn, dim, x.dim())
    check_index_range(fn, index, x.shape[d] if x.dim() else 1, d, RuntimeError)
    e, dev, (hx, hi) = _hg_args(fn, ex, x, index)
    return B.to_torch(hg.gather(hx, d, hi))


gather = _define("gather(Tensor input, int dim, Tensor index, int ex=0) -> Tensor", _gather_impl,
                 _gather_fake)


def _add_back_fake(g, dim, index, shape, scatter, ex=0):
    return g.new_empty(shape)


def _add_back_impl(g, dim, index, shape, scatter, ex=0):
    """Zeros of `shape` with g added at index along dim: index_add (scatter=False, index 1-D:
    the backward of index_select / embedding) or scatter_add (the backward of gather)."""
    fn = "hologram_torch.index_add_zeros"
    out = torch.zeros(shape, dtype=g.dtype, device=g.device)
    if not g.numel():
        return out
    e, dev, (hg_g, hi, ho) = _hg_args(fn, ex, g, index.reshape(-1) if not scatter else index, out)
    (hg.scatter_add if scatter else hg.index_add)(ho, dim, hi, hg_g)
    return out


index_add_zeros = _define("index_add_zeros(Tensor g, int dim, Tensor index, SymInt[] shape, "
                          "bool scatter, int ex=0) -> Tensor", _add_back_impl, _add_back_fake)


def embedding_grad(g, flat, shape, padding_idx=None, freq=False, ex=0):
    """The dense weight gradient of embedding: g's rows (one per index of flat) added into
    zeros of the weight's shape, each divided by its index's count (freq), the padding_idx row
    left at 0. Used by functional.embedding and ATen's embedding_dense_backward."""
    g = g.contiguous().reshape(flat.numel(), shape[1])
    if freq:
        g = embedding_freq_scale(g, flat, shape[0], ex)
    gw = index_add_zeros(g, 0, flat, list(shape), False, ex)
    if padding_idx is not None:
        gw[padding_idx] = 0
    return gw


def _index_select_vmap(info, in_dims, x, dim, index, ex=0):
    """A batched input: one call along the shifted dim. A batched index (embedding lookups of
    batched ids): one call with the elements' indices flattened, the batch then split out of
    the selected dim."""
    dx, di = in_dims[0], in_dims[2]
    nd = x.dim() - (dx is not None)
    if nd == 0 or (dx is not None and di is not None):
        return _vmap_loop(torch.ops.hologram.index_select, info, in_dims, (x, dim, index, ex))
    d = _dim("hologram_torch.index_select", dim, nd)
    if di is None:
        return torch.ops.hologram.index_select(x.movedim(dx, 0), d + 1, index, ex), 0
    idx = index.movedim(di, 0).reshape(info.batch_size, -1)
    out = torch.ops.hologram.index_select(x, d, idx.reshape(-1), ex)
    out = out.reshape(tuple(x.shape[:d]) + tuple(idx.shape) + tuple(x.shape[d + 1:]))
    return out.movedim(d, 0), 0


torch.library.register_vmap("hologram::index_select", _index_select_vmap, lib=LIB)


def _gather_vmap(info, in_dims, x, dim, index, ex=0):
    nd = x.dim() - (in_dims[0] is not None)
    if nd == 0:
        return _vmap_loop(torch.ops.hologram.gather, info, in_dims, (x, dim, index, ex))
    d = _dim("hologram_torch.gather", dim, nd)
    size = info.batch_size
    return torch.ops.hologram.gather(_vmap_front(x, in_dims[0], size), d + 1,
                                     _vmap_front(index, in_dims[2], size), ex), 0


torch.library.register_vmap("hologram::gather", _gather_vmap, lib=LIB)


def _add_back_vmap(info, in_dims, g, dim, index, shape, scatter, ex=0):
    """The gradients of index_select / embedding (index_add) and gather (scatter_add) per
    element: one call, a batched 1-D index offset by each element's slab of the added dim."""
    size, shape = info.batch_size, tuple(shape)
    if not shape:
        return _vmap_loop(torch.ops.hologram.index_add_zeros, info, in_dims,
                          (g, dim, index, list(shape), scatter, ex))
    d = _dim("hologram_torch.index_add_zeros", dim, len(shape))
    gb = _vmap_front(g, in_dims[0], size)
    if scatter or in_dims[2] is None:
        idx = _vmap_front(index, in_dims[2], size) if scatter else index
        return torch.ops.hologram.index_add_zeros(gb, d + 1, idx, [size] + list(shape), scatter,
                                                  ex), 0
    idx = index.movedim(in_dims[2], 0).reshape(size, -1)
    idx = (idx + torch.arange(size, device=idx.device).unsqueeze(1) * shape[d]).reshape(-1)
    gm = gb.movedim(0, d)   # (..., B, n, ...): the batch next to the added dim, then merged
    gm = gm.reshape(tuple(gm.shape[:d]) + (-1,) + tuple(gm.shape[d + 2:]))
    big = list(shape[:d]) + [size * shape[d]] + list(shape[d + 1:])
    out = torch.ops.hologram.index_add_zeros(gm, d, idx, big, False, ex)
    out = out.reshape(shape[:d] + (size, shape[d]) + shape[d + 1:])
    return out.movedim(d, 0), 0


torch.library.register_vmap("hologram::index_add_zeros", _add_back_vmap, lib=LIB)


# ---- embedding's options: max_norm's renorm (in place), scale_grad_by_freq's counts ---------
def _index_counts(hi, n, e, dt):
    """How often each of 0 .. n-1 occurs in the 1-D index hi, as dtype dt."""
    counts = hg.zeros((n,), dt, executor=e)
    hg.index_add(counts, 0, hi, hg.ones(tuple(hi.shape), dt, executor=e))
    return counts


def _row_norms(rows, p):
    """torch's Tensor.norm(p) of each row of rows (2-D), in f64: p-norms, inf / -inf the largest
    / smallest magnitude, 0 the count of nonzeros."""
    r = hg.cast(rows, "f64")
    if p == 2:
        return hg.sqrt(hg.sum(hg.multiply(r, r), axis=1))
    a = hg.abs(r)
    if p == float("inf"):
        return hg.max(a, axis=1)
    if p == float("-inf"):
        return hg.min(a, axis=1)
    if p == 0:
        return hg.sum(hg.cast(hg.not_equal(a, 0), "f64"), axis=1)
    if p == 1:
        return hg.sum(a, axis=1)
    return hg.power(hg.sum(hg.power(a, float(p)), axis=1), 1.0 / float(p))


def _renorm_fake(weight, indices, max_norm, norm_type, ex=0):
    return None


def _renorm_impl(weight, indices, max_norm, norm_type, ex=0):
    """torch.embedding_renorm_: each row of weight that indices name, with a norm (norm_type)
    above max_norm, scaled by max_norm / (norm + 1e-7), once however often it is named. As
    torch's: the norm rounded to weight's dtype, the scale computed in double, the product in
    float32 (float64 for f64 weights) rounded once. The rows are written as row + (-row) + new
    through index_add over the distinct indices (both adds exact; -0.0, the exact identity,
    where a row is not scaled), so a row is torch's product."""
    fn = "hologram_torch.embedding_renorm_"
    B.check_tensor(weight, "weight", fn, floats_only=True)
    _check_index(fn, indices, "input")
    if weight.dim() != 2:
        raise ValueError(f"{fn}: weight must be 2-D, got {list(weight.shape)}")
    check_index_range(fn, indices, weight.shape[0], 0, what="input")
    if not indices.numel():
        return
    e, dev, (hw, hi) = _hg_args(fn, ex, weight, indices.reshape(-1).unique())
    dt = hw.dtype_name
    rows = hg.index_select(hw, 0, hi)
    norm = hg.cast(hg.cast(_row_norms(rows, norm_type), dt), "f64")
    scaled = hg.greater(norm, max_norm)
    scale = hg.where(scaled, hg.divide(max_norm, hg.add(norm, 1e-7)), 1.0)
    ct = "f64" if dt == "f64" else "f32"
    new = hg.cast(hg.multiply(hg.cast(rows, ct), hg.cast(scale, ct).reshape((-1, 1))), dt)
    scaled = scaled.reshape((-1, 1))
    hg.index_add(hw, 0, hi, hg.where(scaled, hg.negative(rows), -0.0))
    hg.index_add(hw, 0, hi, hg.where(scaled, new, -0.0))
    increment_version(weight)


LIB.define("embedding_renorm_(Tensor(a!) weight, Tensor indices, float max_norm, "
           "float norm_type, int ex=0) -> ()")
for _key in ("CPU", "CUDA"):
    LIB.impl("embedding_renorm_", _renorm_impl, _key)
torch.library.register_fake("hologram::embedding_renorm_", _renorm_fake, lib=LIB)
embedding_renorm_ = torch.ops.hologram.embedding_renorm_


def _freq_fake(g, flat, num_weights, ex=0):
    return torch.empty_like(g, memory_format=torch.contiguous_format)


def _freq_impl(g, flat, num_weights, ex=0):
    """scale_grad_by_freq: each row of g (one per index in flat) divided by how often its index
    occurs in flat."""
    fn = "hologram_torch.embedding_freq_scale"
    e, dev, (hg_g, hi) = _hg_args(fn, ex, g, flat)
    counts = hg.take(_index_counts(hi, num_weights, e, hg_g.dtype_name), hi)
    return B.to_torch(hg.divide(hg_g, counts.reshape((-1, 1))))


embedding_freq_scale = _define("embedding_freq_scale(Tensor g, Tensor flat, int num_weights, "
                               "int ex=0) -> Tensor", _freq_impl, _freq_fake)
torch.library.register_vmap(
    "hologram::embedding_freq_scale",
    lambda info, in_dims, *args: _vmap_loop(torch.ops.hologram.embedding_freq_scale, info,
                                            in_dims, args), lib=LIB)


# ---- data: cat, stack, where, clamp ----------------------------------------------------------
def _cat_like(name, hg_fn, torch_fn):
    def fake(tensors, dim=0, ex=0):
        return torch_fn(list(tensors), dim)

    def impl(tensors, dim=0, ex=0):
        fn = f"hologram_torch.{name}"
        if not tensors:
            raise ValueError(f"{fn}: expected a non-empty list of tensors")
        for i, t in enumerate(tensors):
            B.check_tensor(t, f"tensors[{i}]", fn)
        rdt = tensors[0].dtype
        for t in tensors[1:]:
            rdt = torch.promote_types(rdt, t.dtype)
        e, dev, hs = _hg_args(fn, ex, *tensors)
        nd = tensors[0].dim() + (1 if name == "stack" else 0)
        d = _dim(fn, dim, nd)
        return B.to_torch(hg_fn([_cast(h, rdt) for h in hs], axis=d))

    op = _define(f"{name}(Tensor[] tensors, int dim=0, int ex=0) -> Tensor", impl, fake)

    def vmap_rule(info, in_dims, tensors, dim=0, ex=0):
        """Every tensor with the batch first (the unbatched ones expanded, views), the dim
        shifted past it: one call."""
        dims = in_dims[0]
        ts = [_vmap_front(t, d, info.batch_size) for t, d in zip(tensors, dims)]
        nd = ts[0].dim() - 1 + (name == "stack")   # stack adds a dim
        d = _dim(f"hologram_torch.{name}", dim, nd) if nd else 0
        return getattr(torch.ops.hologram, name)(ts, d + 1, ex), 0

    torch.library.register_vmap(f"hologram::{name}", vmap_rule, lib=LIB)
    return op


cat = _cat_like("cat", hg.concatenate, torch.cat)
stack = _cat_like("stack", hg.stack, torch.stack)


def _where_fake(cond, a, b, ex=0):
    shape = torch.broadcast_shapes(cond.shape, a.shape, b.shape)
    return a.new_empty(shape, dtype=torch.result_type(a, b))


def _where_impl(cond, a, b, ex=0):
    fn = "hologram_torch.where"
    if cond.dtype != torch.bool:
        raise TypeError(f"{fn}: condition must be a bool tensor, got {cond.dtype}")
    B.check_tensor(a, "input", fn)
    B.check_tensor(b, "other", fn)
    torch.broadcast_shapes(cond.shape, a.shape, b.shape)   # torch's error first
    rdt = torch.result_type(a, b)
    e, dev, (hc, ha, hb) = _hg_args(fn, ex, cond, a, b)
    return B.to_torch(hg.where(hc, _cast(ha, rdt), _cast(hb, rdt)))


where = _define("where(Tensor condition, Tensor input, Tensor other, int ex=0) -> Tensor",
                _where_impl, _where_fake)
_vmap_elementwise("where", 3)


def _clamp_fake(x, min=None, max=None, ex=0):   # noqa: A002 (torch's names)
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _clamp_impl(x, min=None, max=None, ex=0):   # noqa: A002
    fn = "hologram_torch.clamp"
    B.check_tensor(x, "input", fn)
    if min is None and max is None:
        raise ValueError(f"{fn}: at least one of min and max must be given")
    e, dev, (hx,) = _hg_args(fn, ex, x)
    return B.to_torch(hg.clip(hx, min, max))


clamp = _define("clamp(Tensor x, float? min=None, float? max=None, int ex=0) -> Tensor",
                _clamp_impl, _clamp_fake)
_vmap_elementwise("clamp", 1)
