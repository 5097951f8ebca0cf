"""hologram_torch names executors by ints across torch's dispatcher; its registry must not keep
every executor it has seen: closed ones are dropped (a loop that makes and closes an executor
per step kept all 10,000)."""
import gc
import weakref

import pytest
import torch

import hologram as hg
import hologram_torch as ht
from hologram_torch import _bridge


def test_closed_executors_are_not_kept():
    x = torch.arange(4, dtype=torch.float32)
    refs = []
    for i in range(2000):
        ex = hg.Executor("cpu")
        torch.testing.assert_close(ht.functional.add(x, x, executor=ex), x + x)
        ex.close()
        if i % 250 == 0:
            refs.append(weakref.ref(ex))
    del ex
    gc.collect()
    assert _bridge.registered_executors() <= 32
    assert all(r() is None for r in refs), "closed executors are still referenced"


def test_open_executors_stay_usable_across_sweeps():
    x = torch.ones(3)
    keep = [hg.Executor("cpu") for _ in range(3)]
    ids = [ht.executor_id(e) for e in keep]
    for _ in range(100):   # enough registrations to sweep several times
        e = hg.Executor("cpu")
        ht.executor_id(e)
        e.close()
    for e, i in zip(keep, ids):
        assert ht.executor_id(e) == i   # the same id: still registered
        torch.testing.assert_close(ht.functional.add(x, x, executor=e), x + x)
        e.close()


def test_a_dropped_executor_id_says_closed():
    e = hg.Executor("cpu")
    i = ht.executor_id(e)
    e.close()
    for _ in range(64):
        f = hg.Executor("cpu")
        ht.executor_id(f)
        f.close()
    with pytest.raises(hg.errors.InvalidHandleError, match="closed"):
        _bridge.executor_of(i, torch.device("cpu"), "add")
