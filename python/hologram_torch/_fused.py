"""The elementwise gradient formulas of the losses and clamp as
hologram.jit functions: each call runs one fused kernel (the graph compiler's elementwise
fusion; a plan per argument signature, traced once in ~50 us). Arguments and results are
hologram tensors; variants (optional weights, the result dtype) are separate functions, made
on first use. _grad_ops.py and _ops_loss.py call them (dropout is one library op,
hg.ops.dropout)."""
import struct

import hologram as hg
from hologram._fork import fork_safe_lock

# torch's eps of the binary cross-entropy gradient: 1e-12 as a float32 (9.9999999600e-13, also
# for f64 inputs; the exact 1e-12 differs from torch by 4e-9 relative where p is 0 or 1).
BCE_EPS = struct.unpack("f", struct.pack("f", 1e-12))[0]

_made = {}
_lock = fork_safe_lock()


def _variant(key, make):
    f = _made.get(key)
    if f is None:
        with _lock:
            f = _made.get(key)
            if f is None:
                f = _made[key] = hg.jit(make())
    return f


def fallbacks():
    """Traces that failed (run eagerly instead), over every variant made so far: 0 expected."""
    return sum(f.fallbacks for f in _made.values())


def bce_with_logits_grad(g, x, t, w, pw, n):
    """d/dx of w (-(pw t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))) =
    w ((pw t + 1 - t) sigmoid(x) - pw t), times g / n."""
    has_w, has_pw = w is not None, pw is not None   # (the closures keep no tensor alive)

    def make():
        def bce_with_logits_grad(g, x, t, n, *opt):
            s = hg.sigmoid(x)
            if has_pw:
                pt = opt[-1] * t
                r = (pt - t + 1) * s - pt
            else:
                r = s - t
            if has_w:
                r = r * opt[0]
            return r * (g / n)
        return bce_with_logits_grad
    f = _variant(("bcel", has_w, has_pw), make)
    return f(g, x, t, n, *[a for a in (w, pw) if a is not None])


def bce_grad(g, p, t, w, n, dt):
    """d/dp of -w (t log p + (1 - t) log(1 - p)) = w (p - t) / max(p (1 - p), eps), times
    g / n, in dtype dt."""
    has_w = w is not None

    def make():
        def bce_grad(g, p, t, n, *opt):
            r = (p - t) / hg.maximum(p * (1 - p), BCE_EPS)
            if has_w:
                r = r * opt[0]
            return hg.ops.cast(r * (g / n), dt)
        return bce_grad
    f = _variant(("bce", has_w, dt), make)
    return f(g, p, t, n, *([w] if w is not None else []))


def nll_grad(cls, t, wt, scale, dt):
    """-wt at the target's class (cls == t: class ids against targets, broadcast), 0
    elsewhere, times scale, in dtype dt."""
    def make():
        def nll_grad(cls, t, wt, scale):
            return hg.ops.cast(-(hg.ops.cast(cls == t, dt) * wt) * scale, dt)
        return nll_grad
    return _variant(("nll", dt), make)(cls, t, wt, scale)


def clamp_grad(g, x, lo, hi):
    """g where lo <= x <= hi (torch's clamp passes the gradient at the bounds), else 0; lo, hi
    0-d tensors of x's dtype or None."""
    has_lo, has_hi = lo is not None, hi is not None

    def make():
        def clamp_grad(g, x, *bounds):
            keep = None
            if has_lo:
                keep = x >= bounds[0]
            if has_hi:
                le = x <= bounds[-1]
                keep = le if keep is None else hg.logical_and(keep, le)
            return hg.where(keep, g, 0)
        return clamp_grad
    f = _variant(("clamp", has_lo, has_hi), make)
    return f(g, x, *[b for b in (lo, hi) if b is not None])


def clamp_tensor_grad(g, x, lo, hi):
    """clamp with tensor bounds, torch's rule: x gets g where lo <= x <= hi; lo where x < lo
    and lo < hi (equal bounds: none); hi where x > hi or hi < lo. (x's, lo's or None, hi's or
    None)."""
    has_lo, has_hi = lo is not None, hi is not None

    def make():
        def clamp_tensor_grad(g, x, *bounds):
            keep = take_lo = take_hi = None
            if has_lo:
                keep = x >= bounds[0]
                take_lo = x < bounds[0]
            if has_hi:
                le = x <= bounds[-1]
                keep = le if keep is None else hg.logical_and(keep, le)
                take_hi = x > bounds[-1]
                if has_lo:
                    take_lo = hg.logical_and(take_lo, bounds[0] < bounds[-1])
                    take_hi = hg.logical_or(take_hi, bounds[-1] < bounds[0])
            return tuple(hg.where(m, g, 0) for m in (keep, take_lo, take_hi) if m is not None)
        return clamp_tensor_grad
    f = _variant(("clamp_t", has_lo, has_hi), make)
    outs = list(f(g, x, *[b for b in (lo, hi) if b is not None]))
    gx = outs.pop(0)
    glo = outs.pop(0) if lo is not None else None
    ghi = outs.pop(0) if hi is not None else None
    return gx, glo, ghi
