"""@hologram.jit: trace a function of tensors into the graph compiler once per input signature,
then run the compiled (fused, cached) plan.

    @hologram.jit
    def f(a, b, c):
        return hologram.ops.relu(a * b + c) * 0.5      # one fused kernel

    y = f(a, b, c)          # first call with these shapes/dtypes: trace + compile; later: run

The signature is (for each tensor argument: shape, dtype; the Executor; the values of Python
scalar arguments, which are baked in as constants). Tensors the function uses without receiving
them (globals, closures) become extra inputs bound on every call, so their current values are
used; they must be the same objects on later calls. Functions return a tensor, or a tuple/list of
tensors. Data-dependent Python control flow on tensor values cannot be traced.

What the graph compiler takes: elementwise ops (operators and hologram.ops functions), where,
clip, fma, cast/astype, reductions, softmax/log_softmax, matmul, reshape, broadcast_to. Anything
else (indexing, transposes, norms, losses, ...) makes the trace fail; the function then runs
eagerly from then on for that signature, with one warning (``f.fallbacks`` counts them).
"""

import functools
import numbers
import warnings

from . import _C
from ._fork import fork_safe_lock
from ._interop import asarray
from ._trace import Tracer, Traced, TraceError
from .tensor import Tensor

__all__ = ["jit"]


class _Compiled:
    __slots__ = ("plan", "captured", "outputs", "structure", "executor")


def _signature(args, ex):
    key = [id(ex)]
    for a in args:
        if type(a) is Tensor or isinstance(a, Tensor):
            key.append(("T", a.shape, a.dtype_name))
        elif isinstance(a, (bool, numbers.Number)):
            # floats by their bits: 0.0 and -0.0 (baked into the plan) differ
            key.append(("S", type(a).__name__, float.hex(a) if isinstance(a, float) else a))
        else:
            raise TypeError(f"jit: arguments must be Tensors or Python numbers, got "
                            f"{type(a).__name__}")
    return tuple(key)


def _as_operand(a, ex):
    """A Tensor or a Python number as it is; anything else (numpy arrays, lists) as a Tensor on
    ex (the call's executor; None: the default one)."""
    if type(a) is Tensor or type(a) in (int, float, bool) or isinstance(a, Tensor) or \
            isinstance(a, (bool, numbers.Number)):
        return a
    return asarray(a, executor=ex)


def jit(fn=None, *, executor=None):
    """Compile a function of tensors into a fused plan, once per input signature.

    Parameters
    ----------
    fn : callable
        Takes Tensors (and Python numbers, which become constants) and returns a Tensor or a
        tuple/list of Tensors. Also usable as ``@jit(executor=ex)``.
    executor : Executor, optional
        Where plans run (default: the executor of the first tensor argument); array arguments
        that are not Tensors (numpy arrays, lists) are converted onto it.

    Returns
    -------
    hologram._C.JitFunction
        Calls like ``fn``; ``.plans()`` gives the compiled plans, ``.fallbacks`` counts
        signatures that run eagerly (with one RuntimeWarning) because the trace failed.

    Examples
    --------
    >>> @hg.jit
    ... def f(a, b, c):
    ...     return hg.relu(a * b + c) * 0.5     # one fused kernel
    >>> f(hg.ones(3), hg.ones(3), hg.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    if fn is None:
        return lambda f: jit(f, executor=executor)

    cache = {}
    lock = fork_safe_lock()

    # The repeated call runs in C (_C.JitFunction: signature match, outputs, plan). This is
    # the rest: new signatures, arguments to convert (numpy arrays, lists, numpy scalars),
    # eager fallbacks. The dict read needs no lock (atomic under the GIL); the insert does.
    def slow(*args):
        # Array arguments are converted onto the executor of the Tensor arguments (a numpy
        # array beside a CUDA tensor is copied to the device, beside a CPU tensor it is viewed).
        ex = executor
        if ex is None:
            ex = next((a.executor for a in args if isinstance(a, Tensor)), None)
        targs = [_as_operand(a, ex) for a in args]
        if ex is None:
            ex = next((a.executor for a in targs if isinstance(a, Tensor)), None)
        if ex is None:
            return fn(*args)
        key = _signature(targs, ex)
        comp = cache.get(key)
        if comp is None:
            comp = _trace(fn, targs, ex)
            with lock:
                cache[key] = comp
            if comp == "eager":
                wrapper.fallbacks += 1
        if comp == "eager":
            return fn(*targs)
        wrapper._add(tuple(args), comp.plan, comp.captured, comp.outputs,
                     comp.structure)
        return _run(comp, targs)

    wrapper = _C.JitFunction(slow, executor)
    functools.update_wrapper(wrapper, fn)
    wrapper.fallbacks = 0
    wrapper.cache = cache

    def plans():
        """{signature: Plan} of the compiled signatures (plan.info(), plan.print())."""
        return {k: v.plan for k, v in cache.items() if v != "eager"}
    wrapper.plans = plans
    return wrapper


def _trace(fn, targs, ex):
    tr = Tracer()
    inputs = [tr.input(a.dtype_name, a.shape) if isinstance(a, Tensor) else a for a in targs]
    try:
        result = fn(*inputs)
        structure, outs = _flatten(result)
        for o in outs:
            if not isinstance(o, Traced) or o.tracer is not tr:
                raise TraceError("jit: the function must return traced tensors (computed from "
                                 "its arguments)")
            tr.graph.output(o.node)
        outputs = [(o.dtype_name, o.shape) for o in outs]
        plan = tr.graph.compile(ex)
    except (TraceError, AttributeError, TypeError) as e:
        warnings.warn(f"hologram.jit: {getattr(fn, '__name__', 'function')} runs eagerly for "
                      f"this signature: {e}", RuntimeWarning, stacklevel=3)
        return "eager"
    finally:
        tr.graph.destroy()
    comp = _Compiled()
    comp.plan = plan
    comp.captured = tr.captured
    comp.outputs = outputs
    comp.structure = structure
    comp.executor = ex
    return comp


def _flatten(result):
    if isinstance(result, (tuple, list)):
        return type(result), list(result)
    return None, [result]


def _run(comp, targs):
    ins = [a for a in targs if isinstance(a, Tensor)] + comp.captured
    outs = [_C.empty(comp.executor, shape, dt) for dt, shape in comp.outputs]
    comp.plan.run(ins, outs)
    s = comp.structure
    if s is None:
        return outs[0]
    if s is tuple or s is list:
        return s(outs)
    return s._make(outs) if hasattr(s, "_make") else s(outs)   # namedtuples
