"""numpy.matmul on the shapes of bench/ops_matmul_bench.c, for the side-by-side comparison in
docs/ops_linalg_losses.md: GFLOP/s best and median of `reps` calls into a preallocated out.
Thread count: OPENBLAS_NUM_THREADS (set it like HOLOGRAM_NUM_THREADS for the C run).

    python3 bench/ops_matmul_numpy.py [reps]
"""
import sys
import time

import numpy as np


def bench(m, k, n, dt, reps, trans=False):
    a = np.full((m, k), 0.5, dt)
    b = np.full((n, k), 0.25, dt).T if trans else np.full((k, n), 0.25, dt)
    c = np.empty((m, n), dt)
    np.matmul(a, b, out=c)  # warm-up
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        np.matmul(a, b, out=c)
        ts.append(time.perf_counter() - t)
    ts.sort()
    f = 2.0 * m * n * k
    print(f"numpy {np.dtype(dt).name:7s} {m:5d} x {k:5d} x {n:5d} {'b^T' if trans else 'b  '}  "
          f"best {f / ts[0] * 1e-9:7.1f} median {f / ts[len(ts) // 2] * 1e-9:7.1f} GFLOP/s")


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    for s in (256, 1024, 2048):
        r = (reps + 3) // 4 if s >= 2048 else reps
        bench(s, s, s, np.float32, r)
        bench(s, s, s, np.float32, r, True)
    bench(64, 4096, 4096, np.float32, reps)
    bench(64, 4096, 4096, np.float32, reps, True)
    bench(256, 256, 256, np.float64, reps)
    bench(1024, 1024, 1024, np.float64, (reps + 1) // 2)
    bench(1024, 1024, 1024, np.float64, (reps + 1) // 2, True)


if __name__ == "__main__":
    main()
