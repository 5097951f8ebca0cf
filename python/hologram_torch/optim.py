"""Optimizers whose update runs on hologram: ``Adam`` and ``AdamW`` with torch.optim's
arguments, state and ``state_dict`` layout (a state dict loads into torch.optim.Adam / AdamW and
back). Each parameter's update is one call of the C library's ``hg_adam_step``: the whole
update in one pass over param, grad and the moments (threaded on the CPU), in the order and
roundings of torch.optim.Adam's per-tensor update.

    opt = hologram_torch.optim.Adam(model.parameters(), lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()
"""
import ctypes
import gc

import torch
from torch.autograd.graph import increment_version

from hologram import _C

from . import _bridge as B

__all__ = ["Adam", "AdamW"]


class Adam(torch.optim.Optimizer):
    """torch.optim.Adam computed by hologram (``decoupled_weight_decay=True``: AdamW).

    Arguments as torch.optim.Adam: ``lr``, ``betas``, ``eps``, ``weight_decay``, ``amsgrad``,
    ``maximize``, ``decoupled_weight_decay``; ``executor`` picks the hologram Executor (default:
    the one of the parameters' device). ``foreach`` and ``fused`` are accepted and ignored (the
    update is always one fused pass); ``capturable`` and ``differentiable`` are refused. Float
    parameters (f32, f64, f16, bf16) with dense gradients of the same dtype.
    """

    _decoupled_default = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, maximize=False, decoupled_weight_decay=None, foreach=None,
                 fused=None, capturable=False, differentiable=False, executor=None):
        name = type(self).__name__
        if isinstance(lr, torch.Tensor):
            lr = float(lr)
        _check_hyper(lr, betas, eps, weight_decay)
        if capturable or differentiable:
            raise ValueError(f"hologram_torch.optim.{name}: capturable and differentiable are "
                             f"not supported (the update is not recorded by autograd or CUDA "
                             f"graphs); use torch.optim.{name} for them")
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled_default
        self._ex_id = B.executor_id(executor)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach, fused=fused,
                        capturable=False, differentiable=False,
                        decoupled_weight_decay=bool(decoupled_weight_decay))
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:   # a torch.optim state dict may lack our keys
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", self._decoupled_default)

    @torch.no_grad()
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns closure's loss if given.
        All or nothing: every parameter, gradient, state entry and hyperparameter is checked
        before the first update, so a refused step (a sparse gradient, a mismatched state, ...)
        raises with every parameter and state as it was (torch.optim.Adam checks a group
        before updating it; here all groups are checked first)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        # The plan holds ~8 GC-tracked objects a parameter (the hologram views) from the checks
        # to the updates: counted as allocations, they would start collections that promote
        # them and then full collections of the process (1000 parameters: 4.2 -> 12-20 ms a
        # step). They all go by reference count when the step ends, so the collector is off
        # meanwhile (as timeit and subprocess do).
        gc_on = gc.isenabled()
        gc.disable()
        try:
            self._update(f"hologram_torch.optim.{type(self).__name__}.step")
        finally:
            if gc_on:
                gc.enable()
        return loss

    def _update(self, fn):
        """The checked plan (_plan), then its updates (_run)."""
        written, counters, steps = [], [], []   # see _run
        try:
            self._run(self._plan(fn), written, counters, steps)
        finally:
            # Each counter once its update is done. hologram writes through DLPack, which
            # torch does not see: the written tensors' version counters move as torch's
            # in-place ops move them, so a graph that saved a parameter before the step fails
            # its backward ("modified by an inplace operation") instead of using the new
            # values silently.
            for c in counters:
                c.value += 1.0   # rounded once to the counter's dtype, as torch's add
            if steps:
                torch._foreach_add_(steps, 1)   # an int: an integer counter stays one, as torch
            if written:
                increment_version(written)

    def _plan(self, fn):
        """[(group's hyperparameters, [(param, its state or None, hologram views of param,
        grad and the state's moments)])]: everything the update needs, checked; nothing
        written.

        Cheap on the common path (~0.5 us a parameter): the views the update needs anyway
        are made here, and what they carry is screened conservatively (dtype objects by
        identity, shapes, contiguous ranges apart). A parameter the screen does not pass
        goes through _check_exact, which raises torch's or our message for what is wrong, or
        returns where the screen was only too strict (a non-contiguous moment, say)."""
        to_dlpack, from_capsule = torch._C._to_dlpack, _C._from_capsule
        floats = B.FLOATS
        state_of = self.state.get   # makes no entry for a parameter not stepped yet
        executors = {}   # device -> Executor
        plan = []
        for group in self.param_groups:
            lr = group["lr"]
            lr = float(lr) if isinstance(lr, torch.Tensor) else lr
            ams = group["amsgrad"]
            _check_hyper(lr, group["betas"], group["eps"], group["weight_decay"])
            hyper = (lr, group["betas"], group["eps"], group["weight_decay"], ams,
                     group["maximize"],
                     group.get("decoupled_weight_decay", self._decoupled_default))
            items = []
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                dev = p.device
                ex = executors.get(dev)
                if ex is None:
                    ex = executors[dev] = B.executor_of(self._ex_id, dev, fn)
                state = state_of(p)
                # The views: each from_capsule refuses a device other than ex's, to_dlpack
                # a sparse tensor; a missing state entry raises KeyError (as torch's Adam)
                st = c = None
                try:
                    hs = [from_capsule(to_dlpack(p), ex), from_capsule(to_dlpack(g), ex)]
                    if state:
                        hs.append(from_capsule(to_dlpack(state["exp_avg"]), ex))
                        hs.append(from_capsule(to_dlpack(state["exp_avg_sq"]), ex))
                        if ams and "max_exp_avg_sq" in state:
                            hs.append(from_capsule(to_dlpack(state["max_exp_avg_sq"]), ex))
                        st = state["step"]
                        c = _counter(st)
                    failed = None
                except Exception as e:
                    failed = e
                if failed is None:
                    ok = p.dtype in floats and _screen(*hs)
                if failed is not None or not ok:
                    _check_exact(fn, p, g, state, ams)
                    if failed is not None:
                        raise failed
                if c is None and state:
                    _check_step(fn, st)
                items.append((p, state, ex, hs, st, c))
            plan.append((hyper, items))
        return plan

    def _run(self, plan, written, counters, steps):
        """The updates of a checked plan. Appends the tensors written (their autograd
        versions to move), the step counters to advance: ctypes views of float32/float64
        host counters (a torch op on a 0-d tensor costs ~1.3 us, a third of a small
        parameter's update), other counters as tensors."""
        to_dlpack, from_capsule = torch._C._to_dlpack, _C._from_capsule
        for (lr, (b1, b2), eps, wd, ams, mx, dec), items in plan:
            for p, state, ex, hs, st, c in items:
                if not state:
                    # torch's layout: a float32 0-d step tensor and moments like the parameter
                    state = self.state[p]
                    st = state["step"] = torch.tensor(0.0, dtype=torch.float32)
                    c = _counter(st)
                    for k in ("exp_avg", "exp_avg_sq"):
                        state[k] = torch.zeros_like(p, memory_format=torch.preserve_format)
                        hs.append(from_capsule(to_dlpack(state[k]), ex))
                if ams and len(hs) == 4:
                    vmax = state["max_exp_avg_sq"] = torch.zeros_like(
                        p, memory_format=torch.preserve_format)
                    hs.append(from_capsule(to_dlpack(vmax), ex))
                if c is None:
                    if not isinstance(st, torch.Tensor):   # a number from an old state dict
                        st = state["step"] = torch.tensor(float(st), dtype=torch.float32)
                    elif not st.is_cpu:
                        # torch's load_state_dict puts it on the parameter's device for a
                        # group with fused=True; a host counter is read without waiting on
                        # the device
                        st = state["step"] = st.to("cpu", torch.float32)
                    c = _counter(st)
                k = int(st.item() if c is None else c.value) + 1
                _C.adam_step(hs[0], hs[1], hs[2], hs[3], hs[4] if ams else None,
                             lr, b1, b2, eps, wd, k, dec, ams, mx)
                if c is None:
                    steps.append(st)   # torch's add moves its version
                else:
                    counters.append(c)
                    written.append(st)
                written += (p, state["exp_avg"], state["exp_avg_sq"])
                if ams:
                    written.append(state["max_exp_avg_sq"])


class AdamW(Adam):
    """torch.optim.AdamW computed by hologram: Adam with decoupled weight decay (default
    0.01), ``p *= 1 - lr * weight_decay`` before the update."""

    _decoupled_default = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, fused=None, capturable=False,
                 differentiable=False, executor=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True, foreach=foreach, fused=fused,
                         capturable=capturable, differentiable=differentiable,
                         executor=executor)


def _check_hyper(lr, betas, eps, weight_decay):
    """torch.optim.Adam's checks and messages; also what hg_adam_step refuses (each finite)."""
    for v, what in ((lr, "learning rate"), (eps, "epsilon value"),
                    (weight_decay, "weight_decay value")):
        if not 0.0 <= v < float("inf"):
            raise ValueError(f"Invalid {what}: {v}")
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


_MOMENTS = {False: ("exp_avg", "exp_avg_sq"), True: ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")}
_CTYPES = {torch.float32: ctypes.c_float, torch.float64: ctypes.c_double}


def _counter(st):
    """A ctypes view of a step counter that is one float32 / float64 element in host memory
    (torch's layout), else None. The caller keeps st alive while it uses the view."""
    if isinstance(st, torch.Tensor) and st.is_cpu and st.layout is torch.strided and \
            st.numel() == 1:
        ct = _CTYPES.get(st.dtype)
        if ct is not None:
            return ct.from_address(st.data_ptr())
    return None


def _screen(hp, g, m=None, v=None, x=None):
    """True when the views g (gradient), m, v, x (moments; None where the state has none yet)
    have param view hp's dtype and shape, and all are contiguous ranges apart: a conservative
    test of ~0.4 us, written out (a loop or map costs twice that). False sends the parameter
    to _check_exact. Equal ranges of n bytes are apart when their sorted starts are."""
    dt, shape, n = hp.dtype, hp.shape, hp.nbytes
    if not (g.dtype is dt and g.shape == shape and hp.is_contiguous and g.is_contiguous):
        return False
    if m is None:   # a first step: the moments are made like the parameter
        return not n or abs(hp.device_ptr - g.device_ptr) >= n
    if not (m.dtype is dt and v.dtype is dt and m.shape == shape and v.shape == shape and
            m.is_contiguous and v.is_contiguous):
        return False
    if x is None:
        a, b, c, d = sorted((hp.device_ptr, g.device_ptr, m.device_ptr, v.device_ptr))
        return not n or (b - a >= n and c - b >= n and d - c >= n)
    if not (x.dtype is dt and x.shape == shape and x.is_contiguous):
        return False
    a, b, c, d, e = sorted((hp.device_ptr, g.device_ptr, m.device_ptr, v.device_ptr,
                            x.device_ptr))
    return not n or (b - a >= n and c - b >= n and d - c >= n and e - d >= n)


def _check_step(fn, st):
    """Refuses a step counter that is neither a real number nor a one-element real tensor."""
    if isinstance(st, torch.Tensor):
        if st.layout is torch.strided and st.numel() == 1 and not st.is_complex():
            return
    elif isinstance(st, (int, float)) and not isinstance(st, bool):
        return
    got = (f"a {st.layout} {st.dtype} tensor of shape {list(st.shape)}"
           if isinstance(st, torch.Tensor) else f"a {type(st).__name__}")
    raise RuntimeError(f"{fn}: a parameter's step counter is {got}; expected a number or a "
                       f"one-element real tensor (torch's state layout)")


def _check_exact(fn, p, g, state, ams):
    """The exact checks of one parameter (the slow path of Adam._plan's screen): raises
    torch's message for a sparse gradient, ours for a dtype, shape, device or layout unlike
    the parameter's and for shared memory; returns where everything is right."""
    if g.is_sparse:
        raise RuntimeError(f"{fn}: Adam does not support sparse gradients, please consider "
                           f"SparseAdam instead (as torch.optim.Adam)")
    B.check_tensor(p, "a parameter", fn, floats_only=True)
    B.check_tensor(g, "a gradient", fn, floats_only=True)
    kept = tuple(k for k in _MOMENTS[ams] if k in state) if state else ()
    ts = [g] + [state[k] for k in kept]
    pdt, shape, dev = p.dtype, p.shape, p.device
    for t, what in zip(ts, ("gradient",) + kept):
        if not isinstance(t, torch.Tensor) or t.dtype is not pdt or t.shape != shape or \
                t.device != dev or t.layout is not torch.strided:
            _refuse_unlike(fn, p, t, what)
    _check_apart(fn, p, ts)


def _refuse_unlike(fn, p, t, what):
    got = (f"{t.dtype}, {t.layout}, shape {list(t.shape)}, {t.device}"
           if isinstance(t, torch.Tensor) else f"a {type(t).__name__}")
    raise RuntimeError(f"{fn}: a parameter ({p.dtype}, shape {list(p.shape)}, {p.device}) and "
                       f"its {what} ({got}) do not match; expected the parameter's dtype, shape "
                       f"and device")


def _span(t):
    """t's memory as [first byte, end) (the range hg_adam_step compares)."""
    lo = t.data_ptr()
    return lo, lo + (1 + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride()))) * \
        t.element_size()


def _check_apart(fn, p, ts):
    """The update reads the gradient while it writes the parameter and the moments: their
    memory ranges must not meet (all of p's shape, dtype and device, checked before)."""
    size = p.numel() * p.element_size()
    if not size:
        return
    ts = [p] + ts
    contiguous = True
    for t in ts:
        contiguous = contiguous and t.is_contiguous()
    if contiguous:   # the common case: each range is size bytes from its start
        starts = sorted([t.data_ptr() for t in ts])
        met = any(b - a < size for a, b in zip(starts, starts[1:]))
    else:   # sorted by start, only neighbours need comparing: a meets c only if it meets b
        spans = sorted([_span(t) for t in ts])
        met = any(b[0] < a[1] for a, b in zip(spans, spans[1:]))
    if met:
        raise RuntimeError(f"{fn}: a parameter of shape {list(p.shape)} shares memory with its "
                           f"gradient or state; expected separate tensors")
