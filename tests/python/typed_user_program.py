"""A user program written against hologram's public API with full annotations: test_typing.py
type-checks it with mypy --strict against the installed stubs (and runs it, so the annotations
it relies on are true at run time too)."""
from typing import List, Tuple

import numpy as np
import numpy.typing as npt

import hologram as hg


def flat_api() -> List[float]:
    with hg.Executor(backend="cpu") as ex:
        a: hg.Buffer = ex.allocate(8, dtype=np.float32)
        b = ex.allocate(8, dtype="f32")
        c = ex.allocate(8)
        a.from_numpy(np.arange(8, dtype=np.float32))
        b.fill(2.0)
        hg.ops.vector_add(ex, a, b, c)
        hg.ops.scalar_mul(ex, c, c, 0.5, n=4)
        total: float = hg.ops.reduce_sum(ex, c, ex.allocate(1))
        out: npt.NDArray[np.float32] = c.to_numpy(copy=True)
        name: str = ex.backend + c.dtype_name
        assert name and total > 0
        return [float(v) for v in out]


def tensors() -> Tuple[hg.Tensor, float]:
    x = hg.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = hg.ops.softmax(x * 2 - 1, axis=-1)
    z = hg.zeros((3, 4), hg.bfloat16).astype("f32") + hg.ones((4,))
    w: hg.Tensor = (x @ x.T).sum(axis=1, keepdims=True)
    v = hg.where(x > 3, x, 0.0).reshape(-1)[::2]
    r = hg.randn(2, 3) if hg.is_cuda_available() else hg.rand((2, 3), dtype=np.float64)
    shape: Tuple[int, ...] = (y + z + w).shape
    arr: npt.NDArray[np.generic] = v.numpy()
    assert len(shape) == 2 and arr.ndim == 1 and r.ndim == 2
    return hg.exp(hg.matmul(x, x.T)).max(), float(y.mean())


@hg.jit
def chain(a: hg.Tensor, b: hg.Tensor, c: hg.Tensor) -> hg.Tensor:
    return hg.relu(a * b + c) * 0.5


def traced() -> int:
    a = hg.tensor([1.0, -2.0, 3.0])
    got: hg.Tensor = chain(a, a, a)
    assert got.tolist() == [1.0, 1.0, 6.0]
    return len(chain.plans()) + chain.fallbacks


def profiled() -> str:
    with hg.profile() as prof:
        hg.add(hg.ones(4), 1)
    return prof.table(limit=3)


def errors() -> str:
    try:
        hg.Executor("no-such-backend")
    except hg.InvalidArgumentError as e:
        return e.status_name or ""
    return ""


if __name__ == "__main__":
    print(flat_api(), tensors(), traced(), profiled().splitlines()[0], errors())
