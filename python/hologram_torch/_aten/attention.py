"""scaled_dot_product_attention: ATen's CPU flash op (``_scaled_dot_product_flash_attention_for_cpu``,
what F.scaled_dot_product_attention becomes on CPU tensors) as hologram's fused attention
(hg_scaled_dot_product_attention: a block of query rows' scores at a time, never the whole
attention matrix), in inference and training graphs. Its second output, the logsumexp that
ATen's backward op reads, is written only where the graph reads it, in ATen's layout (0 for a
query that attends no key, as ATen); the backward op
(``_scaled_dot_product_flash_attention_for_cpu_backward``) is hologram's fused backward
(hg_scaled_dot_product_attention_backward: the probabilities recomputed from that logsumexp,
one task per key/value head). Dropout must be 0."""
import math
import operator

import torch

from hologram import _C

from .. import _bridge as B
from .. import _ops
from .common import Lowering, args_of, tensors_ok

aten = torch.ops.aten


def _lse_used(node):
    """Whether a user of the node reads output 1 (the logsumexp)."""
    return any(u.args[1] != 0 and u.users for u in node.users)


def _sdpa(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None,
          _layout=None):
    e, dev, (hq, hk, hv, hm) = _ops._hg_args("aten._scaled_dot_product_flash_attention_for_cpu",
                                             0, query, key, value, attn_mask)
    shape = tuple(query.shape[:-1]) + (value.shape[-1],)
    out_stride, lse_stride = _layout or (None, None)
    if out_stride is None:   # ATen's result follows the query's layout: the FakeTensor's strides
        out, out_h = B.empty_pair(shape, query.dtype, e)
    else:
        out = torch.empty_strided(shape, out_stride, dtype=query.dtype, device=dev)
        out_h = B.to_hg(out, e)
    lse = lse_h = None
    if lse_stride is not None:
        lse = torch.empty_strided(shape[:-1], lse_stride, dtype=query.dtype, device=dev)
        lse_h = B.to_hg(lse, e)
    _C.scaled_dot_product_attention(hq, hk, hv, hm, bool(is_causal),
                                    math.nan if scale is None else float(scale), out_h, lse_h)
    return out, lse


def _specialize(node):
    """_sdpa writing into the strides ATen's results have (from the node's FakeTensors), the
    logsumexp only where the graph reads it."""
    out, lse = node.meta["val"][:2]
    layout = (None if out.is_contiguous() else tuple(out.stride()),
              tuple(lse.stride()) if _lse_used(node) else None)
    if layout == (None, None):
        return _sdpa

    def sdpa_strided(*args, **kwargs):
        return _sdpa(*args, _layout=layout, **kwargs)
    return sdpa_strided


_sdpa.specialize = _specialize


def _all_args(node):
    """The node's arguments in the schema's order, the defaults args_of leaves out filled."""
    vals = args_of(node)
    for arg in node.target._schema.arguments[len(vals):]:
        vals.append(arg.default_value if arg.has_default_value() else None)
    return vals


def _options_ok(q, dropout_p, is_causal, mask, scale):
    """What both attention ops take: no dropout, a bool or q-dtype strided mask on q's device,
    a finite scale, not a mask with is_causal (ATen's own refusal)."""
    return (float(dropout_p) == 0.0 and
            (mask is None or (isinstance(mask, torch.Tensor) and
                              mask.dtype in (torch.bool, q.dtype) and mask.device == q.device
                              and mask.layout == torch.strided)) and
            (scale is None or math.isfinite(float(scale))) and
            not (mask is not None and is_causal))


def _sdpa_accepts(node):
    q, k, v, dropout_p, is_causal, mask, scale = _all_args(node)
    val = node.meta.get("val")
    return (tensors_ok((q, k, v)) and q.dim() == 4 and k.dim() == 4 and v.dim() == 4 and
            isinstance(val, (tuple, list)) and
            all(isinstance(t, torch.Tensor) for t in val[:2]) and val[1].dtype == q.dtype and
            _options_ok(q, dropout_p, is_causal, mask, scale))


def _sdpa_bw(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, *,
             attn_mask=None, scale=None, _strides=None):
    e, dev, hs = _ops._hg_args("aten._scaled_dot_product_flash_attention_for_cpu_backward", 0,
                               grad_out, query, key, value, out, logsumexp, attn_mask)
    grads, hgrads = [], []
    for t, stride in zip((query, key, value), _strides or (None, None, None)):
        if stride is None:   # ATen's gradients: contiguous, or the strides the graph recorded
            g, h = B.empty_pair(tuple(t.shape), t.dtype, e)
        else:
            g = torch.empty_strided(tuple(t.shape), stride, dtype=t.dtype, device=dev)
            h = B.to_hg(g, e)
        grads.append(g)
        hgrads.append(h)
    _C.scaled_dot_product_attention_backward(*hs, bool(is_causal),
                                             math.nan if scale is None else float(scale),
                                             *hgrads)
    return tuple(grads)


def _specialize_bw(node):
    """_sdpa_bw writing into the strides of the node's FakeTensors."""
    vals = node.meta["val"][:3]
    strides = tuple(None if v.is_contiguous() else tuple(v.stride()) for v in vals)
    if strides == (None, None, None):
        return _sdpa_bw

    def sdpa_bw_strided(*args, **kwargs):
        return _sdpa_bw(*args, _strides=strides, **kwargs)
    return sdpa_bw_strided


_sdpa_bw.specialize = _specialize_bw


def _sdpa_bw_accepts(node):
    go, q, k, v, o, lse, dropout_p, is_causal, mask, scale = _all_args(node)
    res = node.meta.get("val")
    return (tensors_ok((go, q, k, v, o)) and all(t.dim() == 4 for t in (go, q, k, v, o)) and
            isinstance(lse, torch.Tensor) and lse.dtype == q.dtype and lse.device == q.device and
            isinstance(res, (tuple, list)) and _options_ok(q, dropout_p, is_causal, mask, scale))


# --- grouped key / value heads -----------------------------------------------------------------
_RESHAPES = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def _call(n, *targets):
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and n.target in targets


def _skip_whole_slices(n):
    """n with slices that keep their whole dim (x[:, :] of repeat_kv's indexing) looked
    through."""
    while _call(n, aten.slice.Tensor):
        x = n.args[0]
        dim, start, end, step = (list(n.args[1:]) + [0, None, None, 1][len(n.args) - 1:])[:4]
        size = x.meta["val"].shape[dim]
        if start not in (0, None) or step != 1 or (end is not None and end < size):
            return n
        n = x
    return n


def _grouped_source(rep):
    """The tensor x of (B, Hkv, S, D) that rep = repeat_kv(x, r) repeats (Hugging Face's
    x[:, :, None].expand(B, Hkv, r, S, D).reshape(B, Hkv * r, S, D): head h of rep is head
    h // r of x), else None."""
    n = rep
    if _call(n, *_RESHAPES):
        n = n.args[0]
    if _call(n, aten.clone.default):
        n = n.args[0]
    if not _call(n, aten.expand.default):
        return None
    sizes = list(n.args[1])
    u = _skip_whole_slices(n.args[0])
    if not (_call(u, aten.unsqueeze.default) and u.args[1] == 2):
        return None
    x = _skip_whole_slices(u.args[0])
    xv, rv = x.meta.get("val"), rep.meta.get("val")
    if not (isinstance(xv, torch.Tensor) and isinstance(rv, torch.Tensor) and xv.dim() == 4 and
            rv.dim() == 4 and len(sizes) == 5):
        return None
    b, h, s, d = xv.shape
    r = sizes[2]
    ok = (type(r) is int and r >= 1 and sizes[:2] == [b, h] and sizes[3:] == [s, d] and
          tuple(rv.shape) == (b, h * r, s, d))
    return x if ok else None


def _erase_unread(graph, nodes):
    """Erases the call nodes of `nodes` that nothing reads, then those of their inputs that
    nothing reads then, and so on."""
    work, erased = list(nodes), set()
    while work:
        n = work.pop()
        if n in erased or n.users or n.op != "call_function":
            continue
        work.extend(n.all_input_nodes)
        graph.erase_node(n)
        erased.add(n)


def ungroup_kv_heads(gm):
    """FX pass: the attention op reads grouped keys and values (fewer heads than the query,
    each shared by a run of query heads) directly, instead of the copies repeat_kv makes of
    them (a clone per layer and operand); only where the table lowers the op then (hologram's
    kernel takes grouped heads, ATen's op does not). Returns how many operands it changed."""
    graph, made = gm.graph, 0
    for node in list(graph.nodes):
        if not _call(node, aten._scaled_dot_product_flash_attention_for_cpu.default):
            continue
        args = list(node.args)
        new = [_grouped_source(a) if i in (1, 2) else None for i, a in enumerate(args[:3])]
        if new[1] is None and new[2] is None:
            continue
        old = args[1:3]
        node.args = tuple(a if i not in (1, 2) or new[i] is None else new[i]
                          for i, a in enumerate(args))
        if not _sdpa_accepts(node):
            node.args = tuple(args)
            continue
        made += sum(x is not None for x in new)
        _erase_unread(graph, old)   # the copies nothing reads now
    if made:
        graph.lint()
        gm.recompile()
    return made


_SQUEEZES = (aten.squeeze.dims, aten.squeeze.dim)


def _summed_over_group(grad, x):
    """The node that sums grad (a gradient of rep = repeat_kv(x, r), (B, Hkv * r, S, D)) back
    to x's shape as AOTAutograd writes repeat_kv's backward: view (B, Hkv, r, S, D), sum over
    dim 2 (kept), squeeze dim 2; else None."""
    b, h, s, d = x.meta["val"].shape
    users = list(grad.users)
    if len(users) != 1 or not _call(users[0], *_RESHAPES):
        return None
    view = users[0]
    rv = view.meta.get("val")
    if not isinstance(rv, torch.Tensor) or rv.dim() != 5 or tuple(rv.shape[:2]) != (b, h) or \
            tuple(rv.shape[3:]) != (s, d) or len(view.users) != 1:
        return None
    total = next(iter(view.users))
    if not (_call(total, aten.sum.dim_IntList) and list(total.args[1]) in ([2], [-3]) and
            (total.args[2] if len(total.args) > 2 else total.kwargs.get("keepdim", False)) and
            "dtype" not in total.kwargs and len(total.users) == 1):
        return None
    sq = next(iter(total.users))
    dims = sq.args[1] if len(sq.args) > 1 else None
    if not (_call(sq, *_SQUEEZES) and dims in (2, -3, [2], [-3])):
        return None
    return sq


def ungroup_kv_heads_joint(gm):
    """ungroup_kv_heads on AOTAutograd's joint (forward and backward) graph, before the
    partition: there the repeated keys / values are also what the backward op reads, so they
    are saved (a copy per layer and operand in the training forward) and the backward op's
    gradients for them are summed back over each group (a view and a sum per operand). Where
    the backward op reads the same copies and its gradient for each is summed exactly as
    repeat_kv's backward does, both ops take the grouped tensor and the backward op's gradient
    is that sum (hologram's backward sums over the query heads that read a key / value head).
    Returns how many operands it changed."""
    graph, made = gm.graph, 0
    bw_op = aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    for node in list(graph.nodes):
        if not _call(node, aten._scaled_dot_product_flash_attention_for_cpu.default):
            continue
        for i in (1, 2):
            rep = node.args[i]
            x = _grouped_source(rep)
            if x is None:
                continue
            bws = [u for u in rep.users if u is not node]
            if not bws or not all(_call(u, bw_op) and u.args[i + 1] is rep and
                                  u.args[1] is node.args[0] and
                                  all(a is not rep for j, a in enumerate(u.args) if j != i + 1)
                                  for u in bws):
                continue
            sums = []
            for u in bws:
                gets = [g for g in u.users if _call(g, operator.getitem) and g.args[1] == i]
                sq = _summed_over_group(gets[0], x) if len(gets) == 1 else None
                if sq is None:
                    break
                sums.append((u, gets[0], sq))
            if len(sums) != len(bws):
                continue
            xv = x.meta["val"]
            args, saved = list(node.args), [(u, u.args, u.meta["val"]) for u in bws]
            node.args = tuple(x if j == i else a for j, a in enumerate(args))
            for u, get, sq in sums:
                vals = list(u.meta["val"])
                vals[i] = sq.meta["val"]
                u.args = tuple(x if j == i + 1 else a for j, a in enumerate(u.args))
                u.meta["val"] = tuple(vals) if isinstance(u.meta["val"], tuple) else vals
            if not _sdpa_accepts(node) or not all(_sdpa_bw_accepts(u) for u, _, _ in sums) or \
                    tuple(xv.shape) != tuple(sums[0][2].meta["val"].shape):
                node.args = tuple(args)
                for u, a, v in saved:
                    u.args, u.meta["val"] = a, v
                continue
            for u, get, sq in sums:
                get.meta["val"] = sq.meta["val"]
                sq.replace_all_uses_with(get)
            made += 1
            _erase_unread(graph, [rep] + [sq for _, _, sq in sums])   # copies and sums
    if made:
        graph.lint()
        gm.recompile()
    return made


ENTRIES = {
    aten._scaled_dot_product_flash_attention_for_cpu.default: Lowering(_sdpa, _sdpa_accepts),
    aten._scaled_dot_product_flash_attention_for_cpu_backward.default: Lowering(
        _sdpa_bw, _sdpa_bw_accepts),
}
