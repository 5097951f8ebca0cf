import pytest

import hologram as hg
from hologram import _C

BUILTIN = {
    100: ValueError, 101: ValueError, 102: ValueError, 103: TypeError, 104: ValueError,
    105: IndexError, 106: NotImplementedError, 200: ValueError, 201: ValueError, 202: ValueError,
    203: ValueError, 204: ValueError, 300: RuntimeError, 301: RuntimeError, 302: RuntimeError,
    400: MemoryError, 401: RuntimeError, 402: OSError, 499: RuntimeError,
}

NAMED = {
    100: hg.InvalidArgumentError, 102: hg.InvalidHandleError, 103: hg.DtypeError,
    104: hg.SizeMismatchError, 105: hg.OutOfRangeError, 106: hg.UnsupportedError,
    200: hg.ParseError, 300: hg.OutOfBoundsError, 400: hg.OutOfMemoryError,
    401: hg.BackendUnavailableError, 402: hg.HologramIOError, 499: hg.InternalError,
}


@pytest.mark.parametrize("code", sorted(BUILTIN))
def test_status_maps_to_class(code):
    with pytest.raises(hg.HologramError) as ei:
        _C._raise_status(code, f"message for {code}")
    e = ei.value
    assert isinstance(e, BUILTIN[code])
    if code in NAMED:
        assert type(e) is NAMED[code]
    assert e.status == code
    assert e.status_name == _C.status_string(code)
    assert e.status_name.startswith("HG_ERR_")
    assert str(e) == f"message for {code}"


def test_unknown_status_falls_back_to_group_or_base():
    with pytest.raises(hg.HologramError) as ei:
        _C._raise_status(777, "x")
    assert type(ei.value) is hg.HologramError


def test_library_message_is_carried():
    ex = hg.Executor("cpu")
    a = ex.allocate(4, "float32")
    b = ex.allocate(4, "int32")
    with pytest.raises(hg.DtypeError) as ei:
        hg.ops.vector_add(ex, a, b, a)
    msg = str(ei.value)
    assert "hg_vector_add" in msg and ("int32" in msg or "i32" in msg), msg
    assert ei.value.status == 103


def test_errors_module_exports():
    for name in ("HologramError", "InvalidArgumentError", "DtypeError", "OutOfMemoryError",
                 "BackendUnavailableError", "InvalidHandleError"):
        assert hasattr(hg, name)
        assert name in hg.errors.__all__
