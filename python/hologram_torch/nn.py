"""torch.nn layers that compute with hologram: ``hologram_torch.nn``.

Each class is a subclass of the torch.nn layer of the same name: the same constructor
arguments, parameters (plain ``nn.Parameter``s, initialised by torch's own code), ``state_dict``
keys and ``repr``, so optimizers, ``load_state_dict`` both ways and DDP work unchanged; only
``forward`` runs hologram. An executor may be given first (``Linear(ex, 512, 256)``, the product
documents' form), as ``executor=``, or as a backend name (``backend='cpu'``: an Executor of that
backend is made, with Executor's own error when the backend is not available here).
"""
import torch

import hologram as hg

from . import _differentiable as A
from . import _bridge as B
from . import functional as F

__all__ = ["Linear", "ReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "LayerNorm", "RMSNorm", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
           "BCEWithLogitsLoss", "Dropout", "Embedding", "convert", "Summary"]


def _take_executor(args, kw):
    """(executor id, the remaining positional arguments) from the accepted forms."""
    ex = kw.pop("executor", None)
    backend = kw.pop("backend", None)
    if args and isinstance(args[0], hg.Executor):
        if ex is not None:
            raise TypeError("executor given twice")
        ex, args = args[0], args[1:]
    if backend is not None:
        if ex is not None:
            raise TypeError("give either an executor or a backend name, not both")
        ex = hg.Executor(backend=backend)
    return ex, args


class _HgModule:
    """Holds the executor (a plain attribute: not a parameter or buffer, not in state_dict)."""

    def _set_executor(self, ex):
        self._hg_executor = ex
        self._hg_ex = B.executor_id(ex)

    @property
    def executor(self):
        """The Executor given at construction, or None (the tensors' device's default)."""
        return self._hg_executor


class Linear(_HgModule, torch.nn.Linear):
    """torch.nn.Linear(in_features, out_features, bias=True, device=None, dtype=None)."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, x):
        """The forward pass of the torch module, computed by hologram."""
        return A.linear(x, self.weight, self.bias, self._hg_ex)


def _activation(name, base, fn, inplace=False):
    """inplace: inplace=True is taken with torch's semantics (the result computed by hologram,
    then written into the input with torch's copy_: version counter, autograd and aliasing as
    torch's own in-place op; the backward reads only the result)."""
    class Act(_HgModule, base):
        def __init__(self, *args, **kw):
            ex, args = _take_executor(args, kw)
            super().__init__(*args, **kw)
            if getattr(self, "inplace", False) and not inplace:
                raise ValueError(f"hologram_torch.nn.{name}: inplace=True is not supported")
            self._set_executor(ex)

        def forward(self, x):
            """The forward pass of the torch module, computed by hologram."""
            if inplace and self.inplace:
                return x.copy_(fn(self, x))
            return fn(self, x)

    Act.__name__ = Act.__qualname__ = name
    Act.__doc__ = f"torch.nn.{name} computed by hologram."
    return Act


ReLU = _activation("ReLU", torch.nn.ReLU, lambda m, x: A.relu(x, m._hg_ex), inplace=True)
SiLU = _activation("SiLU", torch.nn.SiLU, lambda m, x: A.silu(x, m._hg_ex))
Sigmoid = _activation("Sigmoid", torch.nn.Sigmoid, lambda m, x: A.sigmoid(x, m._hg_ex))
Tanh = _activation("Tanh", torch.nn.Tanh, lambda m, x: A.tanh(x, m._hg_ex))
GELU = _activation("GELU", torch.nn.GELU,
                   lambda m, x: A.gelu(x, m.approximate, m._hg_ex))


def _softmax_dim(m, x):
    if m.dim is None:
        raise ValueError(f"hologram_torch.nn.{type(m).__name__}: dim=None (torch's implicit "
                         f"choice, deprecated there) is not supported; give dim")
    return m.dim


Softmax = _activation("Softmax", torch.nn.Softmax,
                      lambda m, x: A.softmax(x, _softmax_dim(m, x), m._hg_ex))
LogSoftmax = _activation("LogSoftmax", torch.nn.LogSoftmax,
                         lambda m, x: A.softmax(x, _softmax_dim(m, x), m._hg_ex, log=True))


class LayerNorm(_HgModule, torch.nn.LayerNorm):
    """torch.nn.LayerNorm(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True)."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, x):
        """The forward pass of the torch module, computed by hologram."""
        return A.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps,
                            self._hg_ex)


class RMSNorm(_HgModule, torch.nn.RMSNorm):
    """torch.nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True)."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, x):
        """The forward pass of the torch module, computed by hologram."""
        return A.rms_norm(x, self.normalized_shape, self.weight, self.eps, self._hg_ex)


class MSELoss(_HgModule, torch.nn.MSELoss):
    """torch.nn.MSELoss(reduction='mean')."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input, target):
        """The forward pass of the torch module, computed by hologram."""
        return A.mse_loss(input, target, self.reduction, self._hg_ex)


class CrossEntropyLoss(_HgModule, torch.nn.CrossEntropyLoss):
    """torch.nn.CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean',
    label_smoothing=0.0)."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input, target):
        """The forward pass of the torch module, computed by hologram."""
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing,
                               executor=self._hg_executor)


class NLLLoss(_HgModule, torch.nn.NLLLoss):
    """torch.nn.NLLLoss(weight=None, ignore_index=-100, reduction='mean')."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input, target):
        """The forward pass of the torch module, computed by hologram."""
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction, executor=self._hg_executor)


class BCELoss(_HgModule, torch.nn.BCELoss):
    """torch.nn.BCELoss(weight=None, reduction='mean')."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input, target):
        """The forward pass of the torch module, computed by hologram."""
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction, executor=self._hg_executor)


class BCEWithLogitsLoss(_HgModule, torch.nn.BCEWithLogitsLoss):
    """torch.nn.BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None)."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input, target):
        """The forward pass of the torch module, computed by hologram."""
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight,
                                                  executor=self._hg_executor)


class Dropout(_HgModule, torch.nn.Dropout):
    """torch.nn.Dropout(p=0.5, inplace=False): zeroes in training mode (hologram's generator,
    seeded from torch's: hologram_torch.functional.dropout), the identity in eval mode."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input):
        """The forward pass of the torch module, computed by hologram."""
        return F.dropout(input, p=self.p, training=self.training, inplace=self.inplace,
                         executor=self._hg_executor)


class Embedding(_HgModule, torch.nn.Embedding):
    """torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
    norm_type=2.0, scale_grad_by_freq=False, sparse=False, ...), computed by
    hologram_torch.functional.embedding."""

    def __init__(self, *args, **kw):
        ex, args = _take_executor(args, kw)
        super().__init__(*args, **kw)
        self._set_executor(ex)

    def forward(self, input):
        """The forward pass of the torch module, computed by hologram."""
        return F.embedding(input, self.weight, padding_idx=self.padding_idx,
                           max_norm=self.max_norm, norm_type=self.norm_type,
                           scale_grad_by_freq=self.scale_grad_by_freq, sparse=self.sparse,
                           executor=self._hg_executor)


_COUNTERPARTS = {torch.nn.Linear: Linear, torch.nn.ReLU: ReLU, torch.nn.GELU: GELU,
                 torch.nn.SiLU: SiLU, torch.nn.Sigmoid: Sigmoid, torch.nn.Tanh: Tanh,
                 torch.nn.Softmax: Softmax, torch.nn.LogSoftmax: LogSoftmax,
                 torch.nn.LayerNorm: LayerNorm, torch.nn.RMSNorm: RMSNorm,
                 torch.nn.Dropout: Dropout, torch.nn.Embedding: Embedding,
                 torch.nn.MSELoss: MSELoss, torch.nn.CrossEntropyLoss: CrossEntropyLoss,
                 torch.nn.NLLLoss: NLLLoss, torch.nn.BCELoss: BCELoss,
                 torch.nn.BCEWithLogitsLoss: BCEWithLogitsLoss}


def _refusal(m):
    """Why layer m keeps torch's forward (None: it can be converted)."""
    if getattr(m, "inplace", False) and not isinstance(m, (torch.nn.Dropout, torch.nn.ReLU)):
        return "inplace=True is not supported"
    if isinstance(m, (torch.nn.Softmax, torch.nn.LogSoftmax)) and m.dim is None:
        return "dim=None is not supported"
    if isinstance(m, torch.nn.Embedding) and (m.max_norm is not None or m.scale_grad_by_freq
                                              or m.sparse):
        return "max_norm, scale_grad_by_freq and sparse are not supported"
    return None


# convert (in place, the layers hologram computes; other classes by what they compute)
from ._convert import Summary, convert  # noqa: E402,F401
