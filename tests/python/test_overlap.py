"""numpy's overlap rule (docs/python.md, "Overlapping memory"): an op whose output shares memory
with an input computes as if every input were read before anything is written. Each case builds
the same views (slices, transposes, reversed dims, broadcast rows) over one memory on both sides
and compares the whole memory afterwards with numpy doing the same on its own copy. On the CPU
an operand is either a view of one hologram Tensor or a separate hg.asarray of the numpy view
(two wraps of the same memory); on a device run (HG_TEST_BACKEND) views of one device Tensor."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hologram as hg
from conformance_helpers import settings_n
from conftest import TEST_BACKEND

ON_CPU = TEST_BACKEND == "cpu"
TRANSFORMS = ["id", "T", "rev0", "rev1", "rev01"]


def square(a, spec, n):
    """An (n, n) view of the (2n, 2n) memory a: a block at (r0, c0), then a transform."""
    r0, c0, tf = spec
    v = a[r0:r0 + n, c0:c0 + n]
    return {"id": v, "T": v.T, "rev0": v[::-1], "rev1": v[:, ::-1], "rev01": v[::-1, ::-1]}[tf]


def line(a, spec, n):
    """A 1-D view of n elements: part of a row or of a column, maybe reversed."""
    k, start, col, rev = spec
    v = a[start:start + n, k] if col else a[k, start:start + n]
    return v[::-1] if rev else v


def tall(a, spec, n):
    """A (2n, n) view: columns c0.. of every row, maybe reversed."""
    c0, tf = spec
    v = a[:, c0:c0 + n]
    return {"id": v, "rev0": v[::-1], "rev1": v[:, ::-1]}[tf]


def squares(n):
    return st.tuples(st.integers(0, n), st.integers(0, n), st.sampled_from(TRANSFORMS))


def lines(n):
    return st.tuples(st.integers(0, 2 * n - 1), st.integers(0, n), st.booleans(), st.booleans())


ELEMENTWISE = {   # name: (hologram, numpy, number of inputs)
    "negative": (hg.negative, np.negative, 1), "floor": (hg.floor, np.floor, 1),
    "sqrt": (hg.sqrt, np.sqrt, 1), "exp": (hg.exp, np.exp, 1),
    "add": (hg.add, np.add, 2), "subtract": (hg.subtract, np.subtract, 2),
    "multiply": (hg.multiply, np.multiply, 2), "maximum": (hg.maximum, np.maximum, 2),
    "floor_divide": (hg.floor_divide, np.floor_divide, 2),
}
INPLACE = ["+=", "-=", "*=", "/="]


class Memory:
    """The (2n, 2n) memory on both sides: numpy's own copy R, and hologram's (the numpy array B
    wrapped zero-copy on the CPU, a device Tensor on a device run)."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.B = rng.integers(-4, 5, size=(2 * n, 2 * n)).astype(np.float64)
        self.R = self.B.copy()
        self.T = hg.asarray(self.B, copy=False) if ON_CPU else hg.asarray(self.B)

    def operand(self, view_fn, spec, n, separate):
        """(hologram operand, numpy operand) of the same view."""
        r = view_fn(self.R, spec, n)
        if ON_CPU and separate:   # another wrap of the same memory
            return hg.asarray(view_fn(self.B, spec, n), copy=False), r
        return view_fn(self.T, spec, n), r

    def check(self):
        got = self.B if ON_CPU else self.T.numpy()
        np.testing.assert_allclose(got, self.R, rtol=1e-14, atol=0, equal_nan=True)


@st.composite
def cases(draw, kinds):
    n = draw(st.integers(1, 9))
    return {"n": n, "seed": draw(st.integers(0, 2**32 - 1)), "kind": draw(st.sampled_from(kinds)),
            "specs": [draw(squares(n)) for _ in range(3)], "line": draw(lines(n)),
            "line2": draw(lines(n)), "tall": (draw(st.integers(0, n)),
                                              draw(st.sampled_from(["id", "rev0", "rev1"]))),
            "sep": [draw(st.booleans()) for _ in range(3)], "same": draw(st.integers(0, 3)),
            "broadcast": draw(st.booleans())}


def operands(m, c, nin):
    """Inputs and out as square views; 'same' 0 makes out exactly input 0's view (in place);
    'broadcast' makes the last input a row view broadcast against the others."""
    n = c["n"]
    outspec = c["specs"][0] if c["same"] == 0 else c["specs"][2]
    ins = [m.operand(square, c["specs"][i], n, c["sep"][i]) for i in range(nin)]
    if c["broadcast"] and nin == 2:
        ins[1] = m.operand(line, c["line"], n, c["sep"][1])
    out = m.operand(square, outspec, n, c["sep"][2] and c["same"] != 0)
    return ins, out


@settings_n(150)
@given(c=cases(sorted(ELEMENTWISE)))
def test_elementwise_out(c):
    m = Memory(c["n"], c["seed"])
    hf, nf, nin = ELEMENTWISE[c["kind"]]
    ins, (ho, no) = operands(m, c, nin)
    with np.errstate(all="ignore"):
        nf(*[r for _, r in ins], out=no)
        hf(*[h for h, _ in ins], out=ho)
    m.check()


@settings_n(100)
@given(c=cases(["where", "clip", "copy"] + INPLACE +
               ["setitem", "setitem_shift", "setitem_rows", "index_add"]))
def test_where_clip_inplace_setitem(c):
    m = Memory(c["n"], c["seed"])
    n, kind = c["n"], c["kind"]
    ins, (ho, no) = operands(m, c, 2)
    (ha, na), (hb, nb) = ins
    if kind == "where":
        cond = np.random.default_rng(c["seed"]).random((n, n)) < 0.5
        np.copyto(no, np.where(cond, na, nb))   # numpy's where has no out
        hg.where(hg.asarray(cond), ha, hb, out=ho)
    elif kind == "clip":
        np.clip(na, nb, None, out=no)
        hg.clip(ha, hb, None, out=ho)
    elif kind == "copy":
        np.copyto(no, na)
        hg.ops.copy(ha, out=ho)
    elif kind == "setitem":
        no[...] = nb
        ho[...] = hb
    elif kind == "setitem_shift":   # a shifted block of out from a shifted block of the input
        no[1:] = na[:-1]
        ho[1:] = ha[:-1]
    elif kind == "setitem_rows":   # rows chosen by an index array (distinct: no write order)
        idx = np.random.default_rng(c["seed"]).permutation(n)
        no[idx] = na
        ho[idx] = ha
    elif kind == "index_add":   # numpy.add.at: repeated rows add up
        idx = np.random.default_rng(c["seed"]).integers(0, n, size=n)
        np.add.at(no, idx, na)
        hg.ops.index_add(ho, 0, hg.asarray(idx), ha)
    else:   # in-place operators
        with np.errstate(all="ignore"):
            exec(f"no {kind} nb", {}, {"no": no, "nb": nb})
        exec(f"ho {kind} hb", {}, {"ho": ho, "hb": hb})
    m.check()


@settings_n(100)
@given(c=cases(["sum", "max", "matmul", "take", "concatenate"]))
def test_reduce_matmul_take_concatenate(c):
    m = Memory(c["n"], c["seed"])
    n, kind = c["n"], c["kind"]
    ins, (ho, no) = operands(m, dict(c, broadcast=False), 2)
    (ha, na), (hb, nb) = ins
    if kind in ("sum", "max"):
        axis = c["seed"] % 2
        ho, no = m.operand(line, c["line"], n, c["sep"][2])
        getattr(np, kind)(na, axis=axis, out=no)
        getattr(hg, kind)(ha, axis=axis, out=ho)
    elif kind == "matmul":
        np.matmul(na, nb, out=no)
        hg.matmul(ha, hb, out=ho)
    elif kind == "take":
        ha, na = m.operand(line, c["line"], n, c["sep"][0])
        ho, no = m.operand(line, c["line2"], n, c["sep"][2])
        idx = np.random.default_rng(c["seed"]).integers(0, n, size=n)
        np.take(na, idx, out=no)
        hg.take(ha, hg.asarray(idx), out=ho)
    else:
        ho, no = m.operand(tall, c["tall"], n, c["sep"][2])
        # numpy's concatenate copies the inputs one by one (a later input reads what an earlier
        # one wrote); hologram reads every input first, as the rule says: numpy on copies.
        np.concatenate([na.copy(), nb.copy()], axis=0, out=no)
        hg.concatenate([ha, hb], axis=0, out=ho)
    m.check()


@pytest.mark.host_memory
def test_issue_cases():
    """The reported cases: separate wraps of one numpy array were not seen as overlapping."""
    rng = np.random.default_rng(0)
    M = rng.random((17, 17))
    want = M + M.T
    t = hg.asarray(M)
    t += hg.asarray(M.T)
    np.testing.assert_array_equal(M, want)
    M = rng.random((8, 8)) * 10
    want = np.floor(M[::-1])
    hg.floor(hg.asarray(M[::-1]), out=hg.asarray(M))
    np.testing.assert_array_equal(M, want)
    a = np.arange(20.0)
    idx = np.arange(9)[::-1].copy()
    want = np.take(a[:9], idx)
    hg.take(hg.asarray(a[:9]), hg.asarray(idx), out=hg.asarray(a[1:10]))
    np.testing.assert_array_equal(a[1:10], want)
    # The same through views of one Tensor (these were refused before).
    t = hg.asarray(np.arange(16.0).reshape(4, 4))
    ref = np.arange(16.0).reshape(4, 4)
    t += t.T
    ref += ref.T
    np.testing.assert_array_equal(t.numpy(), ref)
