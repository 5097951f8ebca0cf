"""CUDA interop of the Python package on the CUDA backend's host emulation
(HOLOGRAM_CUDA_EMULATE=1, in a subprocess so the rest of the suite keeps its backends):
__dlpack_device__, DLPack export and zero-copy import of CUDA memory, __cuda_array_interface__,
device_ptr, advanced indexing of device memory and the error paths. Skipped when no host C++ compiler can build emulated kernels."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(r'''
    import numpy as np
    import hologram as hg

    ex = hg.Executor("cuda")
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = hg.asarray(host, executor=ex)
    assert a.__dlpack_device__() == (2, 0), a.__dlpack_device__()
    assert a.data_ptr == 0 and a.device_ptr != 0

    cai = a.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4"
    assert cai["strides"] == (16, 4) and cai["data"] == (a.device_ptr, False)
    assert cai["stream"] is None
    t = a.T
    assert t.__cuda_array_interface__["strides"] == (4, 16)
    assert t.__cuda_array_interface__["data"][0] == a.device_ptr

    class Producer:   # forces the capsule path (from_dlpack returns hologram Tensors as-is)
        def __init__(self, t):
            self.t = t
        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)
        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    b = hg.from_dlpack(Producer(a[1:]), executor=ex)          # zero-copy: same device memory
    assert b.shape == (2, 4) and b.device_ptr == a.device_ptr + 16
    np.testing.assert_array_equal(b.numpy(copy=True), host[1:])
    b.buffer.from_bytes(np.full(8, -1.0, dtype=np.float32).tobytes())   # writes reach a
    np.testing.assert_array_equal(a.numpy(copy=True)[1:], -np.ones((2, 4), np.float32))
    np.testing.assert_array_equal((b * 2.0).numpy(copy=True), -2 * np.ones((2, 4), np.float32))

    c = hg.from_dlpack(Producer(a.T))                          # no executor: the CUDA default
    assert c.executor.backend == "cuda" and c.executor is hg.default_cuda_executor(0)
    np.testing.assert_array_equal(c.numpy(copy=True), a.numpy(copy=True).T)

    # DLPack's stream argument (the spec's values; the consumer's stream waits for ours).
    for ok in (None, -1, 1, 2, 7):
        a.__dlpack__(stream=ok)
    for bad, exc in (({"dl_device": (1, 0)}, BufferError), ({"stream": "x"}, TypeError),
                     ({"stream": 0}, ValueError), ({"stream": -2}, ValueError),
                     ({"stream": 1 << 70}, ValueError)):
        try:
            a.__dlpack__(**bad)
        except exc:
            pass
        else:
            raise AssertionError(f"__dlpack__({bad}) did not raise {exc.__name__}")
    try:
        hg.from_dlpack(Producer(a), executor=hg.Executor("cpu"))
    except hg.errors.UnsupportedError as e:
        assert "CUDA memory of device 0" in str(e), e
    else:
        raise AssertionError("a CPU executor wrapped CUDA memory")
    cpu = hg.asarray(host, executor=hg.Executor("cpu"))
    assert not hasattr(cpu, "__cuda_array_interface__")

    # Streams: the emulation keeps the bookkeeping of any stream value (its work completes
    # before each call returns). from_dlpack hands the producer our stream; CAI names it.
    class Recorder(Producer):
        def __dlpack__(self, **kw):
            self.kw = kw
            return self.t.__dlpack__(**kw)
    class TorchLikeStream:
        cuda_stream = 0                                        # torch's default stream
    assert ex.stream == 0
    r = Recorder(a)
    hg.from_dlpack(r, executor=ex)
    assert "stream" in r.kw and r.kw["stream"] is None, r.kw   # own stream of the emulation
    ex.set_stream(0x4242)
    assert ex.stream == 0x4242
    hg.from_dlpack(r, executor=ex)
    assert r.kw["stream"] == 0x4242, r.kw
    assert a.__cuda_array_interface__["stream"] == 0x4242
    np.testing.assert_array_equal((a + 1.0).numpy(copy=True), a.numpy(copy=True) + 1.0)
    ex.set_stream(TorchLikeStream())
    assert ex.stream == 1                                      # the legacy default stream
    ev0, ev1 = hg.Event(ex), hg.Event(ex)
    ev0.record()
    s = (a * 3.0).sum()
    ev1.record()
    ev1.synchronize()
    assert ev1.query() and ev0.elapsed_time(ev1) >= 0.0
    np.testing.assert_allclose(float(s.numpy(copy=True)),
                               float((a.numpy(copy=True).astype(np.float64) * 3.0).sum()),
                               rtol=1e-6)
    ex.set_stream(None)
    assert ex.stream == 0 and a.__cuda_array_interface__["stream"] is None
    ex.synchronize()

    # Advanced indexing of device memory follows numpy: masks, several index arrays, mixed
    # with basic indices, on a strided view; assignment through them.
    base = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    d = hg.asarray(base, executor=ex)
    v = d[:, ::2]                                               # a strided view (3, 2, 5)
    hv = base[:, ::2]
    mask = hv > 17
    for key in [(mask,), (np.array([0, 2]), 1, np.array([4, 0])), (Ellipsis, np.array([True, False, True, False, True])),
                (hg.asarray(mask, executor=ex),), (np.zeros((3, 2, 5), bool),)]:
        got = v[key]
        assert got.executor is ex
        np.testing.assert_array_equal(got.numpy(copy=True), hv[tuple(k.numpy(copy=True) if hasattr(k, "numpy") else k for k in key)])
    v[mask] = -1.0
    v[np.array([0, 1]), np.array([1, 0]), 2] = np.array([7.0, 8.0], np.float32)
    want = base.copy()
    want[:, ::2][mask] = -1.0
    want[:, ::2][np.array([0, 1]), np.array([1, 0]), 2] = [7.0, 8.0]
    np.testing.assert_array_equal(d.numpy(copy=True), want)

    # The product documents' flat API where 'auto' picks the GPU: to_numpy() gives the values
    # (a copy of device memory; copy=False asks for a view, which device memory cannot give).
    auto = hg.Executor(backend="auto")
    assert auto.backend == "cuda", auto.backend
    bufs = [auto.allocate(1024, dtype=np.float32) for _ in range(3)]
    xa, xb = (np.random.default_rng(s).standard_normal(1024).astype(np.float32) for s in (1, 2))
    bufs[0].from_numpy(xa)
    bufs[1].from_numpy(xb)
    hg.ops.vector_add(auto, *bufs)
    np.testing.assert_array_equal(bufs[2].to_numpy(), xa + xb)
    bufs[2].to_numpy()[0] = 5.0                                 # a copy: the buffer is unchanged
    assert bufs[2].to_numpy()[0] == xa[0] + xb[0]
    try:
        bufs[2].to_numpy(copy=False)
    except hg.errors.UnsupportedError as e:
        assert "device memory" in str(e) and "copy=False" in str(e), e
    else:
        raise AssertionError("to_numpy(copy=False) of device memory did not raise")

    # New tensors stay on the CPU unless asked for elsewhere, GPU or not (torch's rule): the
    # same script works on both machines; HOLOGRAM_BACKEND moves the default.
    import os
    assert hg.default_executor() is hg.default_cpu_executor()
    z = hg.zeros(3) + hg.asarray(np.ones(3, np.float32)) + hg.arange(3)
    assert z.backend == "cpu" and z.numpy().tolist() == [1.0, 2.0, 3.0]
    os.environ["HOLOGRAM_BACKEND"] = "cuda"
    assert hg.default_executor().backend == "cuda" and hg.zeros(2).backend == "cuda"
    os.environ["HOLOGRAM_BACKEND"] = "tpu"
    try:
        hg.zeros(2)
    except hg.errors.InvalidArgumentError as e:
        assert "HOLOGRAM_BACKEND" in str(e) and "tpu" in str(e), e
    else:
        raise AssertionError("HOLOGRAM_BACKEND=tpu was accepted")
    del os.environ["HOLOGRAM_BACKEND"]
    assert hg.zeros(2).backend == "cpu"
    print("cuda interop ok")
''')


def test_cuda_interop_on_emulation(tmp_path):
    if not (shutil.which(os.environ.get("HOLOGRAM_CUDA_EMULATE_CXX", "c++")) or shutil.which("g++")):
        pytest.skip("no host C++ compiler for the CUDA emulation")
    env = dict(os.environ, HOLOGRAM_CUDA_EMULATE="1", HOLOGRAM_CACHE_DIR=str(tmp_path))
    env.pop("HOLOGRAM_BACKEND", None)   # 'auto' must find the (emulated) CUDA backend
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "cuda interop ok" in r.stdout


def test_emulation_with_a_relative_cache_dir(tmp_path):
    # HOLOGRAM_CACHE_DIR may be relative: kernels (and the precompiled header they include)
    # are found from any working directory.
    if not (shutil.which(os.environ.get("HOLOGRAM_CUDA_EMULATE_CXX", "c++")) or shutil.which("g++")):
        pytest.skip("no host C++ compiler for the CUDA emulation")
    code = ("import numpy as np, hologram as hg\n"
            "ex = hg.Executor('cuda')\n"
            "x = hg.asarray(np.arange(6, dtype=np.float32).reshape(2, 3), executor=ex)\n"
            "print(hg.ops.softmax(x * 2.0, axis=-1).numpy(copy=True).sum(axis=-1).round(5).tolist())\n")
    env = dict(os.environ, HOLOGRAM_CUDA_EMULATE="1", HOLOGRAM_CACHE_DIR="rel-cache")
    env.pop("HOLOGRAM_BACKEND", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "[1.0, 1.0]", r.stdout
    assert any(p.name.startswith("hgemu-pre-") for p in (tmp_path / "rel-cache").iterdir())
