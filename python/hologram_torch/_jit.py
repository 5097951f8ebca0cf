"""hologram_torch.jit: hologram.jit (the graph compiler's fusion) for functions of torch tensors."""
import functools

import torch

import hologram as hg

from . import _bridge as B


def jit(fn=None, *, executor=None):
    """Decorator: ``fn`` is written with hologram ops and operators (``hg.relu(a * b + c)``) and
    runs as hologram.jit runs it (its elementwise chain fused into one kernel, plans cached per
    signature); torch tensor arguments are wrapped without copies (they must all be on one
    device), and a hologram result comes back as a torch tensor (tuples element by element).
    Forward only: an argument that requires grad raises (use hologram_torch.functional for
    gradients). ``executor``: where it runs (default: the executor of the tensors' device)."""
    if fn is None:
        return lambda f: jit(f, executor=executor)
    compiled = hg.jit(fn, executor=executor)
    ex_id = B.executor_id(executor)

    @functools.wraps(fn)
    def wrapper(*args):
        name = f"hologram_torch.jit({getattr(fn, '__name__', 'fn')})"
        if torch._C._is_tracing():
            raise RuntimeError(f"{name}: torch.jit.trace cannot record it (the fused kernel "
                               f"runs outside torch's dispatcher: the trace would freeze its "
                               f"result as a constant); trace hologram_torch.functional calls")
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        for t in tensors:
            B.check_tensor(t, "an argument", name)
            if t.requires_grad and torch.is_grad_enabled():
                raise RuntimeError(f"{name}: an argument requires grad; jit functions are "
                                   f"forward only (use hologram_torch.functional, or "
                                   f"torch.no_grad())")
        ex = B.executor_of(ex_id, B.same_device(name, *tensors), name) if tensors else executor
        out = compiled(*[B.to_hg(a, ex) if isinstance(a, torch.Tensor) else a for a in args])
        if isinstance(out, tuple):
            return tuple(B.to_torch(o) if isinstance(o, hg.Tensor) else o for o in out)
        return B.to_torch(out) if isinstance(out, hg.Tensor) else out

    return wrapper
