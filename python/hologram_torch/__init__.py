"""hologram_torch: hologram's kernels for PyTorch users.

    import torch, hologram as hg, hologram_torch as hg_torch
    ex = hg.Executor("cpu")
    z = hg_torch.functional.add(ex, torch.randn(1024), torch.randn(1024))   # or add(x, y)
    layer = hg_torch.nn.Linear(512, 256)        # a torch.nn.Linear whose forward is hologram's

``functional`` takes torch tensors and returns torch tensors (no copies in either direction),
with gradients; ``nn`` holds torch.nn layers computed by hologram; ``optim`` holds Adam and
AdamW whose update is hologram's; ``torch.compile(model, backend="hologram")`` runs compiled
graphs on hologram (``backend``; ``compile_report()`` says what ran where). Every op is registered in
torch's dispatcher as ``torch.ops.hologram.<name>`` with a fake implementation. See
docs/torch.md.
"""
SUPPORTED_TORCH = "2.11"   # the oldest torch release run (docs/torch.md, "Supported torch")

try:
    import torch
except ImportError as e:   # pragma: no cover - exercised by tests without torch
    raise ImportError(
        "hologram_torch needs PyTorch >= " + SUPPORTED_TORCH + " (pip install 'hologram[torch]'; "
        "for the CPU-only build: pip install torch --index-url "
        "https://download.pytorch.org/whl/cpu)") from e


def _version_tuple(v):
    parts = []
    for p in v.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


if _version_tuple(torch.__version__) < _version_tuple(SUPPORTED_TORCH):
    raise ImportError(f"hologram_torch needs PyTorch >= {SUPPORTED_TORCH}; this is "
                      f"{torch.__version__}")

from . import _ops, _grad_ops  # noqa: E402,F401  (registers torch.ops.hologram.*)
from . import functional, nn, optim  # noqa: E402
from ._bridge import executor_id  # noqa: E402,F401
from ._jit import jit  # noqa: E402
from . import backend  # noqa: E402

from ._threads import share_torch_threads  # noqa: E402
share_torch_threads()   # hologram's CPU parts on torch's OpenMP threads
backend.register()   # torch.compile(model, backend="hologram"), also without the entry point
compile_report = backend.last_report

__all__ = ["functional", "nn", "optim", "jit", "backend", "compile_report", "SUPPORTED_TORCH"]
