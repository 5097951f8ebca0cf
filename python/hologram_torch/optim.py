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
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
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
        """One update of every parameter with a gradient; returns closure's loss if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        written, steps = [], []   # tensors updated in place; the step counters to advance
        try:
            self._step_groups(f"hologram_torch.optim.{type(self).__name__}.step", written, steps)
        finally:
            # Each counter once its update is done (a refused update changes nothing), in one
            # call. hologram writes through DLPack, which torch does not see: the written
            # tensors' version counters move as torch's in-place ops move them, so a graph that
            # saved a parameter before the step fails its backward ("modified by an inplace
            # operation") instead of using the new values silently.
            if steps:
                torch._foreach_add_(steps, 1.0)
            if written:
                increment_version(written)
        return loss

    def _step_groups(self, fn, written, steps):
        to_dlpack, from_capsule = torch._C._to_dlpack, _C._from_capsule
        floats, strided = B.FLOATS, torch.strided
        executors = {}   # device -> Executor
        for group in self.param_groups:
            b1, b2 = group["betas"]
            lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
            if isinstance(lr, torch.Tensor):
                lr = float(lr)
            ams, mx = group["amsgrad"], group["maximize"]
            dec = group.get("decoupled_weight_decay", self._decoupled_default)
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.layout is not strided or p.layout is not strided or \
                        p.dtype not in floats or g.dtype not in floats:
                    if g.is_sparse:
                        raise RuntimeError(f"{fn}: sparse gradients are not supported (as in "
                                           f"torch.optim.Adam; use torch.optim.SparseAdam)")
                    B.check_tensor(p, "a parameter", fn, floats_only=True)
                    B.check_tensor(g, "a gradient", fn, floats_only=True)
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
                dev = p.device
                ex = executors.get(dev)
                if ex is None:
                    ex = executors[dev] = B.executor_of(self._ex_id, dev, fn)
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
