"""The instruction-count guard's Python cases, run by perf_guard.py under callgrind.

    python python_case.py SHIM.so

Each case is warmed up, then called once between the shim's hg_guard_begin/hg_guard_end
(callgrind_shim.c), which write one callgrind dump per case. `python_noop` measures the region
itself (the ctypes calls around an empty lambda): the other cases include that cost.
"""
import ctypes
import gc
import platform
import sys

import numpy as np

import hologram as hg


def main():
    shim = ctypes.CDLL(sys.argv[1])
    begin, end = shim.hg_guard_begin, shim.hg_guard_end
    end.argtypes = [ctypes.c_char_p]
    info = hg.build_info()
    # The key the stored counts belong to (cpu_features as valgrind shows the CPU to the library).
    print(f"toolchain: compiler={info['compiler']}; build_type={info['build_type']}; "
          f"features={info['features']}; cpu_features={info['cpu_features']}; "
          f"python={platform.python_version()}; numpy={np.__version__}", flush=True)
    ex = hg.Executor("cpu", num_threads=1)
    a1, b1, c1 = ex.allocate(1), ex.allocate(1), ex.allocate(1)
    ta, tb = hg.Tensor(a1), hg.Tensor(b1)
    tc = hg.Tensor(c1)
    vector_add, add = hg.ops.vector_add, hg.ops.add
    cases = {
        "python_noop": lambda: None,
        "python_vector_add_1": lambda: vector_add(ex, a1, b1, c1),   # the flat seed form
        "python_tensor_add_1": lambda: ta + tb,                      # a new result each call
        "python_ops_add_out_1": lambda: add(ta, tb, out=tc),
    }
    gc.disable()   # a collection inside a region would count its work
    for name, fn in cases.items():
        tag = name.encode()
        fn()
        fn()
        begin()
        fn()
        end(tag)
    gc.enable()


if __name__ == "__main__":
    main()
