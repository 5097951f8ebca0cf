#!/usr/bin/env python3
"""hologram_torch's eager gradients (and the calls without) in this tree against another git
revision's python/ packages: fw+bw of single ops, 1-element add, a small MLP step (64x256,
Linear-GELU-LayerNorm-Linear, cross_entropy), an MLP step on an explicit executor, and the first
step of a fresh process.

    python3 bench/eager_grad_ab.py [--rev fe453e5] [--rounds 15] [--threads 1] [--cpu-time]
                                   [--cases add1,gelu,mlp_step]

Two worker processes (the other revision's python/ from `git archive`, with this tree's built
hologram/_C*.so: valid while the C library did not change between the two) run the cases in
rounds that alternate between them, each round begun by the other side; best per case, µs.
--cpu-time times with the process's CPU time (time.process_time), which a shared machine's load
disturbs less than the wall clock (the worker threads' time counts too). The first step is
wall time of fresh processes, alternating.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

W = r'''
import sys, time, json, os
t0 = time.perf_counter()
import torch
torch.set_num_threads(int(os.environ.get("THREADS", "2")))
import hologram as hg
import hologram_torch as ht
F = ht.functional
clock = time.process_time if os.environ.get("CLOCK") == "cpu" else time.perf_counter
def timed(fn, min_s=0.02):
    fn(); n = 1
    while True:
        t = clock()
        for _ in range(n): fn()
        t = clock() - t
        if t >= min_s or n >= 1 << 20: return t / n
        n *= 4
torch.manual_seed(0)
def mlp(ex=None):
    torch.manual_seed(1)
    m = torch.nn.Sequential(ht.nn.Linear(256, 256), ht.nn.GELU(), ht.nn.LayerNorm(256),
                            ht.nn.Linear(256, 10))
    if ex is not None:
        for mod in m: mod._set_executor(ex)
    return m
x = torch.randn(64, 256); t = torch.randint(0, 10, (64,))
lossf = ht.nn.CrossEntropyLoss()
def step_of(m):
    def f():
        for p in m.parameters(): p.grad = None
        lossf(m(x), t).backward()
    return f
m0 = mlp()
s0 = time.perf_counter(); step_of(m0)(); first = time.perf_counter() - s0
cases = {}
cases["mlp_step"] = step_of(m0)
exe = hg.Executor("cpu")
cases["mlp_step_ex"] = step_of(mlp(exe))
a1 = torch.ones(1); b1 = torch.ones(1); ag = torch.ones(1, requires_grad=True)
cases["add1"] = lambda: F.add(a1, b1)
cases["add1_grad"] = lambda: F.add(ag, b1)
X = torch.randn(64, 512, requires_grad=True); G = torch.randn(64, 512)
W_ = torch.randn(512, requires_grad=True); B_ = torch.randn(512, requires_grad=True)
Wl = torch.randn(512, 512, requires_grad=True); Bl = torch.randn(512, requires_grad=True)
Y = torch.randn(64, 512, requires_grad=True)
T = torch.randint(0, 512, (64,))
def fb(fn):
    def f():
        X.grad = None
        fn().backward(G)
    return f
cases["gelu"] = fb(lambda: F.gelu(X))
cases["layer_norm"] = fb(lambda: F.layer_norm(X, (512,), W_, B_))
cases["softmax"] = fb(lambda: F.softmax(X, -1))
cases["mul"] = fb(lambda: F.mul(X, Y))
cases["linear"] = fb(lambda: F.linear(X, Wl, Bl))
cases["relu"] = fb(lambda: F.relu(X))
x1 = torch.ones(4, requires_grad=True); y1 = torch.ones(4, requires_grad=True); g1 = torch.ones(4)
def fb1(fn):
    def f():
        x1.grad = None; y1.grad = None
        fn().backward(g1)
    return f
cases["mul_s"] = fb1(lambda: F.mul(x1, y1))
cases["add_s"] = fb1(lambda: F.add(x1, y1))
cases["gelu_s"] = fb1(lambda: F.gelu(x1))
cases["tanh_s"] = fb1(lambda: F.tanh(x1))
cases["softmax_s"] = fb1(lambda: F.softmax(x1, 0))
cases["cross_entropy"] = lambda: F.cross_entropy(X, T).backward()
L1 = ht.nn.Linear(256, 256); L2 = ht.nn.Linear(256, 10)
h = torch.randn(64, 256, requires_grad=True); h10 = torch.randn(64, 10, requires_grad=True)
def lin1():
    for p in L1.parameters(): p.grad = None
    L1(x).sum().backward()
def lin2():
    for p in L2.parameters(): p.grad = None
    h.grad = None
    L2(h).sum().backward()
cases["lin1"] = lin1; cases["lin2"] = lin2
cases["sum_only"] = lambda: h.sum().backward()
cases["ce_m"] = lambda: lossf(h10, t).backward()
print(json.dumps({"first_step": first, "import": s0 - t0}), flush=True)
for line in sys.stdin:
    name = line.strip()
    print(json.dumps({name: timed(cases[name])}), flush=True)
'''

def spawn(path, threads, cpu):
    env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS=str(threads), THREADS=str(threads),
               CLOCK="cpu" if cpu else "wall")
    return subprocess.Popen([sys.executable, "-c", W], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rev", default="fe453e5")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cpu-time", action="store_true")
    p.add_argument("--firsts", type=int, default=2)
    p.add_argument("--cases", default="add1,add1_grad,add_s,mul_s,gelu_s,tanh_s,softmax_s,gelu,"
                   "layer_norm,softmax,mul,linear,cross_entropy,ce_m,lin1,lin2,mlp_step,"
                   "mlp_step_ex")
    a = p.parse_args()
    tmp = tempfile.mkdtemp()
    try:
        arch = subprocess.run(["git", "-C", ROOT, "archive", a.rev, "python"], check=True,
                              capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=arch, check=True)
        for so in glob.glob(os.path.join(ROOT, "python", "hologram", "_C*.so")):
            shutil.copy(so, os.path.join(tmp, "python", "hologram"))
        run(a, os.path.join(tmp, "python"), os.path.join(ROOT, "python"))
    finally:
        shutil.rmtree(tmp)


def run(a, base, here):
    names = a.cases.split(",")
    firsts, procs = {base: [], here: []}, {}
    for r in range(max(a.firsts, 1)):
        for side in ((base, here) if r % 2 == 0 else (here, base)):
            w = spawn(side, a.threads, a.cpu_time)
            firsts[side].append(json.loads(w.stdout.readline())["first_step"])
            if side in procs:
                procs[side].stdin.close()
                procs[side].wait()
            procs[side] = w
    best = {side: {n: float("inf") for n in names} for side in (base, here)}
    for r in range(a.rounds):
        for n in names:
            for side in ((base, here) if r % 2 == 0 else (here, base)):
                w = procs[side]
                w.stdin.write(n + "\n")
                w.stdin.flush()
                best[side][n] = min(best[side][n], json.loads(w.stdout.readline())[n])
    print(f"{'case':16s} {a.rev + ' (us)':>14s} {'this tree':>10s} {'ratio':>6s}")
    fb, fh = min(firsts[base]), min(firsts[here])
    print(f"{'first_step':16s} {fb * 1e6:14.0f} {fh * 1e6:10.0f} {fh / fb:6.2f}")
    for n in names:
        b, h = best[base][n], best[here][n]
        print(f"{n:16s} {b * 1e6:14.2f} {h * 1e6:10.2f} {h / b:6.2f}")
    for w in procs.values():
        w.stdin.close()
        w.wait()


if __name__ == "__main__":
    main()
