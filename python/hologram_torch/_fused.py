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
