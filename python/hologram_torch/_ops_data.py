"""The data ops of torch.ops.hologram: index_select / gather and their backward (index_add /
scatter_add into zeros), cat, stack, where, clamp: schema, implementation on hologram, fake,
and vmap rules. Registered on import of _ops (which re-exports them)."""
import torch

import hologram as hg

from . import _bridge as B
from ._ops import LIB, _cast, _define, _dim, _hg_args, _vmap_elementwise, _vmap_front, _vmap_loop

# ---- indexing: index_select / gather and their backward (index_add / scatter_add) --------------
def _check_index(fn, index, what="index"):
    B.check_tensor(index, what, fn)
    if index.dtype.is_floating_point or index.dtype == torch.bool:
        raise TypeError(f"{fn}: {what} must have an integer dtype (int64 or int32), got "
                        f"{index.dtype}")


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
