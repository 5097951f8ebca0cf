"""The elementwise gradient formulas of the losses, clamp and dropout (and dropout itself) as
hologram.jit functions: each call runs one fused kernel (the graph compiler's elementwise
fusion; a plan per argument signature, traced once in ~50 us). Arguments and results are
hologram tensors; variants (optional weights, the result dtype) are separate functions, made
on first use. _grad_ops.py, _ops_loss.py and _aten/dropout.py call them."""
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


def gelu_grad(g, x, dt):
    """ATen's gelu_backward (the erf form) from x alone, in one kernel: g (Phi(x) + x phi(x)),
    computed in float32 for float16 / bfloat16 (as ATen) and rounded to dt. The C library's
    hg_activation_backward reads Phi(x) from the forward's output, which the traced eager
    gradients do not keep (recomputing it cost a second kernel)."""
    def make():
        half = dt not in ("f32", "f64")

        def gelu_grad(g, x):
            if half:
                g, x = hg.ops.cast(g, "f32"), hg.ops.cast(x, "f32")
            cdf = (hg.erf(x * _SQRT1_2) + 1.0) * 0.5
            pdf = hg.exp(x * x * -0.5) * _GELU_BETA
            r = g * (cdf + x * pdf)
            return hg.ops.cast(r, dt) if half else r
        return gelu_grad
    return _variant(("gelu_grad", dt), make)(g, x)


_SQRT1_2 = 0.70710678118654752440            # ATen's kAlpha: M_SQRT1_2
_GELU_BETA = 1.12837916709551257390 * _SQRT1_2 * 0.5   # kBeta: M_2_SQRTPI * M_SQRT1_2 * 0.5


def dropout_apply(x, u, p):
    """x / (1 - p) where u >= p, else 0: dropout with the uniform numbers u, and its gradient
    (the same numbers, regenerated from the seed, applied to g)."""
    def make():
        def dropout_apply(x, u):
            return hg.where(u >= p, x * (1.0 / (1.0 - p)), 0)
        return dropout_apply
    return _variant(("dropout", float.hex(float(p))), make)(x, u)


def dropout_mask_grad(g, mask, scale):
    """ATen's native_dropout_backward, g * (mask * scale), in one kernel: g * scale where kept,
    g * 0 where dropped (NaN from an infinite g, -0 from a negative one, as ATen's)."""
    def make():
        def dropout_mask_grad(g, mask):
            return hg.where(mask, g * scale, g * 0.0)
        return dropout_mask_grad
    return _variant(("dropout_mask_grad", float.hex(float(scale))), make)(g, mask)
