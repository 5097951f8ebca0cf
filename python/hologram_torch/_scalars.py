"""torch's rules for Python numbers beside tensors, in one place (functional's arithmetic,
``where`` and ``clamp`` call these; the ops below them see only tensors).

A Python number is a "wrapped number": it takes part in promotion only by its kind (bool < int <
float), so ``torch.result_type(int8 tensor, 1000)`` is int8 and ``(int8 tensor, 2.5)`` the
default float dtype. Then it becomes an operand of that dtype in one of two ways, as torch:

- arithmetic (add, sub, mul, div): converted as a tensor is converted (``Tensor.to``):
  integers wrap (``add(int8, 1000)`` adds 1000 mod 256), floats round (inf beyond f16's range);
  true division of integers computes in the default float dtype, where the number keeps its
  value (``div(uint8 [6, 9], -3)`` is [-2, -3]);
- bounds and values (``where``, ``clamp``, ``alpha``): converted with torch's overflow check
  (``torch.tensor(v, dtype=...)``: RuntimeError "value cannot be converted to type int8 without
  overflow"; an unsigned dtype takes negatives down to -max, wrapped).
"""
import math
import numbers

import torch

from . import _bridge as B


def is_number(v):
    return isinstance(v, numbers.Number) and not isinstance(v, torch.Tensor)


LOW_FLOATS = (torch.float16, torch.bfloat16)


def compute_dtype(name, rdt, a, b, alpha=None):
    """The dtype arithmetic computes in before rounding to rdt. For a float16 / bfloat16 result
    torch's mul and div take a Python number in float32 and compute in float32 ("opmath"), so
    0 * 2**40 is 0, not 0 * inf; its add and sub convert the number to the tensor's dtype
    first. alpha: float32 (torch's fused a + alpha * b rounds once, within an ulp of this)."""
    if rdt in LOW_FLOATS and (alpha is not None or
                              (name in ("mul", "div") and (is_number(a) or is_number(b)))):
        return torch.float32
    return rdt


def checked_bound(v, dtype):
    """A number bound of a float dtype, with torch's overflow check (finite beyond the
    dtype's range: RuntimeError)."""
    if math.isfinite(v) and abs(v) > torch.finfo(dtype).max:
        raise RuntimeError(f"value cannot be converted to type {dtype} without overflow")
    return v


def arith_dtype(name, a, b):
    """The dtype add / sub / mul / div of a and b (tensors or numbers) compute in and return."""
    rdt = torch.result_type(a, b)
    if name == "div" and not (rdt.is_floating_point or rdt.is_complex):
        rdt = torch.get_default_dtype()   # true division, as torch.div
    return rdt


def check_sub(a, b):
    """torch refuses subtraction with a bool operand (tensor or Python bool)."""
    def is_bool(v):
        return v.dtype == torch.bool if isinstance(v, torch.Tensor) else isinstance(v, bool)

    if is_bool(a) and is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if is_bool(a) or is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


_INT_RANGE = {torch.int8: (-2 ** 7, 2 ** 7), torch.uint8: (0, 2 ** 8),
              torch.int16: (-2 ** 15, 2 ** 15), torch.int32: (-2 ** 31, 2 ** 31),
              torch.int64: (-2 ** 63, 2 ** 63)}


def wrapped(v, dtype, device):
    """The number v as an arithmetic operand of dtype (a 0-d tensor on device): torch's int64 /
    float64 / bool wrapped number converted to dtype, an integer wrapping as Tensor.to wraps
    (computed here: the direct conversion costs one tensor op less)."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = int(v)
        if not -2 ** 63 <= v < 2 ** 63:
            raise OverflowError("int too big to convert")   # torch's: no int64 wrapped number
        lo, hi = _INT_RANGE.get(dtype, (v, v + 1))
        if not lo <= v < hi:
            v = (v - lo) % (hi - lo) + lo
    return B.scalar(v, dtype, device)


def operands(fn, a, b, rdt=None, arith=True):
    """(a, b) with a Python number among them as a 0-d tensor of rdt (default: torch's
    result_type with the other operand); arith: wrapped as arithmetic converts, else with
    torch's overflow check. Tensors are returned as given (the ops promote them)."""
    if is_number(a) and isinstance(b, torch.Tensor):
        dt = rdt or torch.result_type(b, a)
        a = wrapped(a, dt, b.device) if arith else B.scalar(a, dt, b.device)
    if is_number(b) and isinstance(a, torch.Tensor):
        dt = rdt or torch.result_type(a, b)
        b = wrapped(b, dt, a.device) if arith else B.scalar(b, dt, a.device)
    B.check_tensor(a, "input", fn)
    B.check_tensor(b, "other", fn)
    return a, b


def alpha_operand(alpha, rdt, device):
    """add / sub's alpha as a 0-d tensor of the op's dtype rdt (None for 1), with torch's
    checks: no float alpha for an integer result, no bool alpha for a non-bool one."""
    integral = not (rdt.is_floating_point or rdt.is_complex)
    if isinstance(alpha, bool):
        if rdt != torch.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif integral and not isinstance(alpha, numbers.Integral):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if alpha == 1:
        return None
    return B.scalar(alpha, rdt, device)


def bound_dtype(x, bounds):
    """The dtype of clamp(x, *bounds) (numbers or tensors, None skipped): torch's promotion of
    all of them, numbers as wrapped numbers."""
    rdt = x.dtype
    for b in bounds:
        if b is not None:
            rdt = torch.promote_types(rdt, b.dtype if isinstance(b, torch.Tensor)
                                      else torch.result_type(x, b))
    return rdt
