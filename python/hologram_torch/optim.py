"""Optimizers whose update runs on hologram: ``Adam`` and ``AdamW`` with torch.optim's
arguments, state and ``state_dict`` layout (a state dict loads into torch.optim.Adam / AdamW and
back). Each parameter's update is one call of the C library's ``hg_adam_step``: the whole
update in one pass over param, grad and the moments (threaded on the CPU), in the order and
roundings of torch.optim.Adam's per-tensor update.

    opt = hologram_torch.optim.Adam(model.parameters(), lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()
"""
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
        fn = f"hologram_torch.optim.{type(self).__name__}.step"
        plan = self._plan(fn)
        written, steps = [], []   # tensors updated in place; the step counters to advance
        try:
            self._run(plan, written, steps)
        finally:
            # Each counter once its update is done, in one call. hologram writes through
            # DLPack, which torch does not see: the written tensors' version counters move as
            # torch's in-place ops move them, so a graph that saved a parameter before the step
            # fails its backward ("modified by an inplace operation") instead of using the new
            # values silently.
            if steps:
                torch._foreach_add_(steps, 1.0)
            if written:
                increment_version(written)
        return loss

    def _plan(self, fn):
        """[(group's hyperparameters, [(param, grad, executor)])]: everything the update
        needs, checked; nothing written."""
        floats, strided = B.FLOATS, torch.strided
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
                if g.is_sparse:
                    raise RuntimeError(f"{fn}: Adam does not support sparse gradients, please "
                                       f"consider SparseAdam instead (as torch.optim.Adam)")
                if g.layout is not strided or p.layout is not strided or \
                        p.dtype not in floats or g.dtype not in floats:
                    B.check_tensor(p, "a parameter", fn, floats_only=True)
                    B.check_tensor(g, "a gradient", fn, floats_only=True)
                state = self.state.get(p)
                kept = tuple(k for k in _MOMENTS[ams] if k in state) if state else ()
                ts = [g] + [state[k] for k in kept]
                pdt, shape, dev = p.dtype, p.shape, p.device
                for t, what in zip(ts, ("gradient",) + kept):
                    if t.dtype is not pdt or t.shape != shape or t.device != dev or \
                            t.layout is not strided:
                        _refuse_unlike(fn, p, t, what)
                _check_apart(fn, p, ts)
                ex = executors.get(dev)
                if ex is None:
                    ex = executors[dev] = B.executor_of(self._ex_id, dev, fn)
                items.append((p, g, ex))
            plan.append((hyper, items))
        return plan

    def _run(self, plan, written, steps):
        to_dlpack, from_capsule = torch._C._to_dlpack, _C._from_capsule
        for (lr, (b1, b2), eps, wd, ams, mx, dec), items in plan:
            for p, g, ex in items:
                state = self.state[p]
                if len(state) == 0:
                    # torch's layout: a float32 0-d step tensor and moments like the parameter
                    state["step"] = torch.tensor(0.0, dtype=torch.float32)
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p,
                                                           memory_format=torch.preserve_format)
                if ams and "max_exp_avg_sq" not in state:
                    state["max_exp_avg_sq"] = torch.zeros_like(
                        p, memory_format=torch.preserve_format)
                st = state["step"]
                if not isinstance(st, torch.Tensor):   # a number from an old state dict
                    st = state["step"] = torch.tensor(float(st), dtype=torch.float32)
                elif not st.is_cpu:
                    # torch's load_state_dict puts it on the parameter's device for a group
                    # with fused=True; a host counter is read without waiting on the device
                    st = state["step"] = st.to("cpu", torch.float32)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                vmax = state["max_exp_avg_sq"] if ams else None
                _C.adam_step(from_capsule(to_dlpack(p), ex), from_capsule(to_dlpack(g), ex),
                             from_capsule(to_dlpack(m), ex), from_capsule(to_dlpack(v), ex),
                             None if vmax is None else from_capsule(to_dlpack(vmax), ex),
                             lr, b1, b2, eps, wd, int(st.item()) + 1, dec, ams, mx)
                steps.append(st)
                written += (p, m, v)
                if vmax is not None:
                    written.append(vmax)


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


def _refuse_unlike(fn, p, t, what):
    raise RuntimeError(f"{fn}: a parameter ({p.dtype}, shape {list(p.shape)}, {p.device}) and "
                       f"its {what} ({t.dtype}, {t.layout}, shape {list(t.shape)}, {t.device}) do "
                       f"not match; expected the parameter's dtype, shape and device")


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
