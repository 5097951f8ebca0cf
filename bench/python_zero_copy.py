#!/usr/bin/env python3
"""The product documents' "zero-copy vs JSON serialization" comparison, measured honestly.

    python bench/python_zero_copy.py [--sizes 1000,10000,100000,1000000] [--repeats 7]

For each size, float32 data goes into a hologram Buffer and back out in three ways, in the same
run, best of `repeats`:
  - JSON: json.dumps(array.tolist()) -> json.loads -> Buffer.from_numpy (in), and
    Buffer.to_numpy().tolist() -> json.dumps -> json.loads (out): what the earlier
    implementation's buffer_copy_from_slice / buffer_to_vec did;
  - copy: Buffer.from_numpy(array) (one memcpy in) and Buffer.to_numpy(copy=True) (one out);
  - zero-copy: hologram.asarray(array) (wraps the array's memory) and Buffer.to_numpy()
    (a view), which cost the same for every size.
Prints a markdown table of microseconds and the JSON / zero-copy ratios.
"""
import argparse
import json
import time

import numpy as np

import hologram as hg


def best(fn, repeats):
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    ex = hg.Executor("cpu")
    print(f"zero-copy vs JSON, float32, hologram {hg.__version__}, numpy {np.__version__}, "
          f"{time.strftime('%Y-%m-%d')} (best of {args.repeats}; microseconds)\n")
    print("| elements | JSON in | JSON out | from_numpy (copy in) | to_numpy(copy=True) | "
          "asarray (zero-copy in) | to_numpy (zero-copy out) | JSON / copy (in) | "
          "JSON / zero-copy (in) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        data = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        buf = ex.allocate(n)

        def json_in():
            buf.from_numpy(np.asarray(json.loads(json.dumps(data.tolist())), np.float32))

        def json_out():
            json.loads(json.dumps(buf.to_numpy().tolist()))

        t_ji = best(json_in, args.repeats)
        t_jo = best(json_out, args.repeats)
        t_ci = best(lambda: buf.from_numpy(data), args.repeats)
        t_co = best(lambda: buf.to_numpy(copy=True), args.repeats)
        t_zi = best(lambda: hg.asarray(data, executor=ex), args.repeats)
        t_zo = best(buf.to_numpy, args.repeats)
        us = lambda t: f"{t * 1e6:.1f}"  # noqa: E731
        print(f"| {n} | {us(t_ji)} | {us(t_jo)} | {us(t_ci)} | {us(t_co)} | {us(t_zi)} | "
              f"{us(t_zo)} | {t_ji / t_ci:.0f}x | {t_ji / t_zi:.0f}x |")
        buf.free()


if __name__ == "__main__":
    main()
