"""hologram_torch.nn.convert: a model's layers computed by hologram, in place.

torch.nn's own classes (exact types) become their hologram_torch.nn counterpart. Any other leaf
module (a subclass of a torch layer, Hugging Face's Conv1D / LlamaRMSNorm / GELUActivation /
NewGELUActivation / SiLUActivation, timm's layers) is recognised by WHAT IT COMPUTES: its
parameters' shapes name the candidates (a linear map with the weight either way round, an
RMS / layer norm, a parameterless activation), and a candidate is taken only if the converted
module gives the module's own output on a probe input (float32, values from -12 to 12, under
no_grad, hooks not run). A class with a matching name that computes something else stays torch.
The converted module is the same object (parameters, buffers, hooks) with a subclass of its own
class whose forward is hologram's; it runs hologram for inputs of the dtype it was checked in
and its original forward for any other.
"""
import collections
import warnings

import torch

from . import _differentiable as A
from . import nn as N

# A probe's match: float32 rounding, not another function. Elementwise: each element (gelu's
# two forms differ by 3e-4); with a reduction (matmul, norms): against the largest element, as
# sums of thousands of terms in another order differ by more than 1e-5 where they cancel.
_TOL = dict(rtol=1e-5, atol=1e-6)
_REDUCING = ("linear", "linear_t", "rms_norm", "layer_norm")


class Summary:
    """What convert did, counted by class: ``replaced[class name]`` (-> what it now computes)
    and ``kept[(class name, reason)]``."""

    def __init__(self):
        self.replaced = collections.Counter()
        self.kept = collections.Counter()

    def kept_line(self):
        """The kept classes, counted: "4 Conv2d (no hologram counterpart), ..."."""
        return ", ".join(f"{n} {name} ({why})" for (name, why), n in sorted(self.kept.items()))

    def __str__(self):
        rep = ", ".join(f"{n} {name}" for name, n in sorted(self.replaced.items()))
        return (f"hologram_torch.nn.convert: replaced {sum(self.replaced.values())} layers"
                f"{': ' + rep if rep else ''}; kept torch's forward for "
                f"{sum(self.kept.values())}{': ' + self.kept_line() if self.kept else ''}")

    __repr__ = __str__


# ---- the forwards of converted foreign classes ------------------------------------------------
def _checked(fwd):
    """fwd for one input of the dtype the module was checked in; its own forward otherwise."""
    def forward(self, *args, **kw):
        if len(args) == 1 and not kw:
            x = args[0]
            if isinstance(x, torch.Tensor) and x.dtype is self._hg_dtype:
                return fwd(self, x)
        return self._hg_base.forward(self, *args, **kw)

    return forward


def _transposed_linear(self, x):
    """weight (in, out), as Hugging Face's Conv1D: x.view as its forward (the same refusals)."""
    y = A.linear(x.view(-1, x.size(-1)), self.weight.t(), self.bias, self._hg_ex)
    return y.view(x.size()[:-1] + (self.weight.shape[1],))


def _linear(self, x):
    return A.linear(x, self.weight, self.bias, self._hg_ex)


def _rms_norm(self, x):
    return A.rms_norm(x, self._hg_shape, self.weight, self._hg_eps, self._hg_ex)


def _layer_norm(self, x):
    return A.layer_norm(x, self._hg_shape, self.weight, self.bias, self._hg_eps, self._hg_ex)


_ACTIVATIONS = {   # what a parameterless module may compute -> hologram's forward
    "relu": lambda self, x: A.relu(x, self._hg_ex),
    "gelu": lambda self, x: A.gelu(x, "none", self._hg_ex),
    "gelu_tanh": lambda self, x: A.gelu(x, "tanh", self._hg_ex),
    "silu": lambda self, x: A.silu(x, self._hg_ex),
    "sigmoid": lambda self, x: A.sigmoid(x, self._hg_ex),
    "tanh": lambda self, x: A.tanh(x, self._hg_ex),
}
_FOREIGN = {"linear": _linear, "linear_t": _transposed_linear, "rms_norm": _rms_norm,
            "layer_norm": _layer_norm, **_ACTIVATIONS}
_EPS_NAMES = ("eps", "variance_epsilon", "epsilon")

_classes = {}


def _subclass(cls, kind):
    """cls with hologram's forward for kind (one class per (cls, kind)). For a subclass of a
    torch layer, kind names the hologram_torch.nn counterpart, whose forward it takes."""
    key = (cls, kind)
    if key not in _classes:
        if isinstance(kind, type):   # a hologram_torch.nn class
            bases, ns = (kind, cls), {}
        else:
            bases, ns = (N._HgModule, cls), {"forward": _checked(_FOREIGN[kind])}
        ns["_hg_base"] = cls   # the same name: repr and printed models do not change
        ns["__reduce_ex__"] = lambda self, proto: (_restore, (cls, kind), self.__getstate__())
        _classes[key] = type(cls.__name__, bases, ns)
    return _classes[key]


def _restore(cls, kind):
    """Unpickling (torch.save of a whole model, copy.deepcopy): the class is made again."""
    c = _subclass(cls, kind)
    return c.__new__(c)


# ---- recognising what a module computes -------------------------------------------------------
def _probe_values():
    g = torch.Generator().manual_seed(1234)
    return torch.cat([torch.linspace(-12, 12, 97), torch.randn(95, generator=g) * 3])


def _candidates(m):
    """[(kind, probe input, attributes to set)] for leaf module m, from its parameters' shapes."""
    params = dict(m.named_parameters(recurse=False))
    if any(True for _ in m.buffers(recurse=False)):
        return []   # state the forward may update (running statistics): not probed
    dt = next(iter(params.values())).dtype if params else torch.float32
    dev = next(iter(params.values())).device if params else None
    if not dt.is_floating_point:
        return []
    g = torch.Generator().manual_seed(99)
    if not params:
        return [(k, _probe_values().reshape(2, 96).to(dt), {}) for k in _ACTIVATIONS]
    w, b = params.get("weight"), params.get("bias")
    if w is None or set(params) - {"weight", "bias"}:
        return []
    eps = next((float(getattr(m, n)) for n in _EPS_NAMES
                if isinstance(getattr(m, n, None), (float, int))), None)

    def x(n):
        return (torch.randn(2, 3, n, generator=g) * 2 + 0.5).to(device=dev, dtype=dt)

    out = []
    if w.dim() == 2 and (b is None or (b.dim() == 1 and b.shape[0] == w.shape[0])):
        out.append(("linear", x(w.shape[1]), {}))   # weight (out, in), as torch.nn.Linear
    if w.dim() == 2 and (b is None or (b.dim() == 1 and b.shape[0] == w.shape[1])):
        out.append(("linear_t", x(w.shape[0]), {}))
    if w.dim() == 1 and eps is not None:
        shape = {"_hg_shape": (w.shape[0],), "_hg_eps": eps}
        if b is None:
            out.append(("rms_norm", x(w.shape[0]), shape))
        elif b.shape == w.shape:
            out.append(("layer_norm", x(w.shape[0]), shape))
    return out


def _counterpart_probe(m, target):
    """The probe input for m, an instance of a subclass of target's torch layer (None: not
    probed: randomness, indices, losses)."""
    g = torch.Generator().manual_seed(7)
    if isinstance(m, torch.nn.Linear):
        return torch.randn(2, 3, m.in_features, generator=g).to(m.weight.device, m.weight.dtype)
    if isinstance(m, (torch.nn.LayerNorm, torch.nn.RMSNorm)):
        w = m.weight if m.weight is not None else torch.empty(0)
        x = torch.randn((2,) + tuple(m.normalized_shape), generator=g) * 2 + 0.5
        return x.to(w.device, w.dtype)
    if target in (N.ReLU, N.GELU, N.SiLU, N.Sigmoid, N.Tanh, N.Softmax, N.LogSoftmax):
        return _probe_values().reshape(2, 96)
    return None


def _matches(m, x, want, reducing):
    with torch.no_grad():
        try:
            got = m.forward(x.clone())
        except Exception:   # the candidate cannot run this: not what m computes
            return False
    if not (isinstance(got, torch.Tensor) and got.shape == want.shape
            and got.dtype == want.dtype):
        return False
    if reducing:
        return bool((got - want).abs().max() <= _TOL["rtol"] * want.abs().max() + _TOL["atol"])
    return torch.allclose(got, want, **_TOL)


def _try(m, cls, newcls, x, attrs, reducing):
    """Converts m to newcls if it then computes what it computed on x; else leaves it. A
    module that writes into its input is left (the converted forward would not)."""
    xi = x.clone()
    with torch.no_grad():
        try:
            want = m.forward(xi)
        except Exception:
            return False
    if not isinstance(want, torch.Tensor) or not torch.equal(xi, x):
        return False
    m.__class__ = newcls
    for k, v in attrs.items():
        setattr(m, k, v)
    m._hg_dtype = x.dtype
    m._set_executor(None)
    if _matches(m, x, want, reducing):
        return True
    m.__class__ = cls
    for k in list(attrs) + ["_hg_dtype", "_hg_executor", "_hg_ex"]:
        m.__dict__.pop(k, None)
    return False


def _convert_one(m, ex):
    """(converted: bool, the reason it was kept or the kind it now computes)."""
    cls = type(m)
    target = N._COUNTERPARTS.get(cls)
    if target is not None:   # torch.nn's own class
        why = N._refusal(m)
        if why:
            return False, why
        m.__class__ = target   # a subclass holding the same state: the layer converts in place
        m._set_executor(ex)
        return True, cls.__name__
    for base, target in N._COUNTERPARTS.items():   # a subclass of a torch layer
        if isinstance(m, base):
            x = _counterpart_probe(m, target)
            if x is None or N._refusal(m):
                return False, N._refusal(m) or f"a subclass of torch.nn.{base.__name__} not probed"
            reducing = target not in (N.ReLU, N.GELU, N.SiLU, N.Sigmoid, N.Tanh)
            if _try(m, cls, _subclass(cls, target), x, {}, reducing):
                m._set_executor(ex)
                return True, base.__name__
            return False, f"computes something other than torch.nn.{base.__name__}"
    cands = _candidates(m)
    for kind, x, attrs in cands:
        if _try(m, cls, _subclass(cls, kind), x, attrs, kind in _REDUCING):
            m._set_executor(ex)
            return True, kind
    return False, ("computes none of hologram's layers (probed)" if cands
                   else "no hologram counterpart")


def convert(model, executor=None, *, backend=None, report=False):
    """Replaces, in place, the layers of model that hologram computes by hologram's: torch.nn's
    own classes that hologram_torch.nn has, and other classes found by what they compute
    (module docstring). Each layer keeps its parameters, buffers, hooks and mode (the very same
    Parameter objects, so an optimizer made before still updates them); only forward changes.
    Returns model, or with report=True a Summary (``.replaced`` / ``.kept`` counts by class).
    The layers it leaves are counted in one UserWarning."""
    ex, _ = N._take_executor((), {"executor": executor, "backend": backend})
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"hologram_torch.nn.convert: expected a torch.nn.Module, got "
                        f"{type(model).__name__}")
    summary = Summary()
    with torch.random.fork_rng(devices=[]):   # a probed forward that draws leaves no trace
        for m in list(model.modules()):
            _convert_into(summary, m, ex)
    if summary.kept:
        warnings.warn("hologram_torch.nn.convert: kept torch's forward for " + summary.kept_line(),
                      UserWarning, stacklevel=2)
    return summary if report else model


def _convert_into(summary, m, ex):
    if isinstance(m, N._HgModule) or type(m) is torch.nn.Identity:
        return
    if type(m) not in N._COUNTERPARTS and any(True for _ in m.children()):
        return   # a container: its leaves are converted
    name = type(m).__name__
    done, what = _convert_one(m, ex)
    if done:
        summary.replaced[name if name == what else f"{name} -> {what}"] += 1
    else:
        summary.kept[(name, what)] += 1
