# Type stub of hologram.jit.
from typing import Any, Callable, Dict, Generic, Optional, Tuple, TypeVar, overload

from typing_extensions import ParamSpec

from . import _C

_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["jit"]

class _Jitted(Generic[_P, _R]):
    # What @jit returns: at run time a hologram._C.JitFunction; calls keep fn's signature.
    fallbacks: int
    c_signatures: int
    cache: Dict[Tuple[Any, ...], Any]
    __name__: str
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R: ...
    def plans(self) -> Dict[Tuple[Any, ...], _C.Plan]: ...

@overload
def jit(fn: Callable[_P, _R], *, executor: Optional[_C.Executor] = ...) -> _Jitted[_P, _R]: ...
@overload
def jit(fn: None = ..., *,
        executor: Optional[_C.Executor] = ...) -> Callable[[Callable[_P, _R]], _Jitted[_P, _R]]: ...
