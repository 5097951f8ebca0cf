"""Per-call overhead of hologram.ops.vector_add on 1 element vs numpy's np.add(..., out=).

Same process, interleaved rounds, best and median over all repeats (ns per call). Usage:
    python3 python/bench/overhead.py [--rounds 5] [--number 20000] [--repeat 15]
"""
import argparse
import statistics
import timeit

import numpy as np

import hologram as hg


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--number", type=int, default=20000)
    p.add_argument("--repeat", type=int, default=15)
    args = p.parse_args()

    ex = hg.Executor("cpu")
    a, b, c = ex.allocate(1), ex.allocate(1), ex.allocate(1)
    na, nb, nc = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    g = {"hg": hg, "ex": ex, "a": a, "b": b, "c": c, "np": np, "na": na, "nb": nb, "nc": nc,
         "add": hg.ops.vector_add, "npadd": np.add}
    cases = {
        "hg.ops.vector_add(ex, a, b, c)": "hg.ops.vector_add(ex, a, b, c)",
        "vector_add bound (add(ex,a,b,c,1))": "add(ex, a, b, c, 1)",
        "np.add(na, nb, out=nc)": "np.add(na, nb, out=nc)",
        "npadd bound (npadd(na,nb,out=nc))": "npadd(na, nb, out=nc)",
        "empty loop (baseline)": "pass",
    }
    res = {k: [] for k in cases}
    for _ in range(args.rounds):
        for name, stmt in cases.items():
            t = timeit.repeat(stmt, globals=g, number=args.number, repeat=args.repeat)
            res[name].extend(x / args.number * 1e9 for x in t)
    print(f"{'case':40s} {'best ns':>9s} {'median ns':>10s}")
    for name, v in res.items():
        print(f"{name:40s} {min(v):9.1f} {statistics.median(v):10.1f}")
    hb, nbst = min(res["hg.ops.vector_add(ex, a, b, c)"]), min(res["np.add(na, nb, out=nc)"])
    print(f"ratio hologram/numpy (best): {hb / nbst:.2f}")


if __name__ == "__main__":
    main()
