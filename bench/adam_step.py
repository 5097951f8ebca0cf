#!/usr/bin/env python3
"""The cost of hologram_torch.optim.Adam's step per parameter: this tree's optimizer against
the python/hologram_torch/optim.py of other git revisions, interleaved in one process.

    python3 bench/adam_step.py [--params 100] [--size 16] [--rev 6d34121 --rev ed4ea7d]
                               [--mlp] [--no-torch] [--threads 2] [--repeats 15]

Default: one step of --params parameters of --size x --size f32 with their gradients, per
version, plus torch.optim.Adam (default and fused=True) on the same parameters. --mlp: the
whole training step of bench/torch_peers.py's MLP (batch 256, hologram modules) per version,
and torch.nn with torch's Adam and Adam(fused=True). Rounds alternate between the sides, each
round begun by another; best and median per step are printed. --no-torch: the versions only
(torch's OpenMP threads spin on after its steps and slow the next side on a loaded machine).
"""
import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import hologram as hg
import hologram_torch as ht
from torch_peers import mlp_setup, timed, train_step


def optim_at(rev, tmp):
    """hologram_torch.optim as of git revision rev (a module beside this tree's)."""
    src = subprocess.run(["git", "show", f"{rev}:python/hologram_torch/optim.py"],
                         capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    path = os.path.join(tmp, f"optim_{rev}.py")
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(f"hologram_torch.optim_{rev}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--params", type=int, default=100)
    p.add_argument("--size", type=int, default=16)
    p.add_argument("--rev", action="append", default=[])
    p.add_argument("--mlp", action="store_true")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=15)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    ex = hg.Executor("cpu", num_threads=args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        versions = {"this tree": ht.optim}
        versions.update((rev, optim_at(rev, tmp)) for rev in args.rev)
        steps = {}
        if args.mlp:
            x, t = torch.randn(256, 784), torch.randint(0, 10, (256,))
            sides = [(name, mod, ht.nn) for name, mod in versions.items()] + [
                ("torch.nn + torch.optim.Adam", "torch", torch.nn),
                ("torch.nn + Adam(fused=True)", "fused", torch.nn)][:0 if args.no_torch else 2]
            for name, mod, nn in sides:
                steps[name] = train_step(*mlp_setup(nn, mod, ex), x, t)
            what = "MLP training step, batch 256"
        else:
            sides = [(name, mod) for name, mod in versions.items()] + [
                ("torch.optim.Adam", None),
                ("torch.optim.Adam(fused=True)", "fused")][:0 if args.no_torch else 2]
            for name, mod in sides:
                torch.manual_seed(0)
                ps = [torch.nn.Parameter(torch.randn(args.size, args.size))
                      for _ in range(args.params)]
                for q in ps:
                    q.grad = torch.randn_like(q)
                steps[name] = (mod.Adam(ps, lr=1e-3, executor=ex) if hasattr(mod, "Adam") else
                               torch.optim.Adam(ps, lr=1e-3, fused=mod == "fused" or None)).step
            what = f"Adam step of {args.params} parameters of {args.size} x {args.size} f32"
        times = {name: [] for name in steps}
        order = list(steps)
        for r in range(args.repeats):
            # interleaved rounds, each begun by the next side (torch's OpenMP threads spin on
            # after its step and slow whatever runs next)
            for name in order[r % len(order):] + order[:r % len(order)]:
                times[name].append(timed(steps[name]))
    print(f"{what}, {args.threads} thread(s), best / median of {args.repeats} rounds, "
          f"{time.strftime('%Y-%m-%d')}")
    for name, ts in times.items():
        print(f"  {name:30s} {min(ts) * 1e6:9.1f} / {statistics.median(ts) * 1e6:9.1f} us")


if __name__ == "__main__":
    sys.exit(main())
