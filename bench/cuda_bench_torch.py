"""The hologram_torch section of bench/cuda_bench.py: the MLP training step of
bench/torch_peers.py (batch 256, 784 -> 1024 -> 1024 -> 10, GELU, LayerNorm, cross-entropy,
Adam) on CUDA tensors, the model built from hologram_torch.nn against the same model from
torch.nn, both starting from the same weights.

Variants: hologram_torch.nn with torch.optim.Adam ("ours") and with hologram_torch.optim.Adam
("ours_hg_adam"); torch.nn with torch's default Adam on CUDA (foreach, "torch") and
Adam(fused=True) ("torch_fused"). A step's time is the best, over `repeats` rounds, of `steps`
steps queued back to back and one device synchronize (torch.cuda.synchronize waits for every
stream of the device, hologram's included), per step. The first step's losses of "ours" and
"torch" are compared (same weights, same batch)."""
import os
import sys


def mlp_step(torch, repeats, steps=20, batch=256, device="cuda"):
    """The section's result: a dict with per-step times (ms), the ratios torch / ours and the
    first losses; {"skipped": reason} when it cannot run. device="cpu" runs the same code on
    CPU tensors (a check of the script where there is no GPU)."""
    if torch is None:
        return {"skipped": "no CUDA torch (torch missing, without CUDA, or the emulation)"}
    try:
        import hologram_torch as ht
    except Exception as e:   # e.g. a torch outside the supported range
        return {"skipped": f"hologram_torch does not import: {type(e).__name__}: {e}"}
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from cuda_timing import host_us
    from torch_peers import mlp, train_step

    torch.manual_seed(0)
    x = torch.randn(batch, 784, device=device)
    t = torch.randint(0, 10, (batch,), device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    torch.manual_seed(1)
    state = mlp(torch.nn).state_dict()
    variants = (("ours", ht.nn, "torch"), ("ours_hg_adam", ht.nn, "hg"),
                ("torch", torch.nn, "torch"), ("torch_fused", torch.nn, "fused"))
    models, losses = {}, {}
    for name, nn, optk in variants:
        m = mlp(nn).to(device)
        m.load_state_dict(state)
        if optk == "hg":
            opt = ht.optim.Adam(m.parameters(), lr=1e-3)
        else:
            opt = torch.optim.Adam(m.parameters(), lr=1e-3, fused=optk == "fused" or None)
        loss_fn = ht.nn.CrossEntropyLoss() if nn is ht.nn else torch.nn.CrossEntropyLoss()
        models[name] = (m, opt, loss_fn)
        with torch.no_grad():
            losses[name] = float(loss_fn(m(x), t))

    out = {"device": device, "batch": batch, "steps": steps, "first_loss_ours": losses["ours"],
           "first_loss_torch": losses["torch"],
           "loss_rel_diff": abs(losses["ours"] - losses["torch"]) / max(abs(losses["torch"]), 1e-30)}
    for name, _, _ in variants:
        step = train_step(*models[name], x, t)
        out[f"{name}_ms"] = host_us(step, steps, rounds=repeats, sync=sync) / 1e3
    out["torch_over_ours"] = out["torch_ms"] / out["ours_ms"]
    out["torch_over_ours_hg_adam"] = out["torch_ms"] / out["ours_hg_adam_ms"]
    out["torch_fused_over_ours_hg_adam"] = out["torch_fused_ms"] / out["ours_hg_adam_ms"]
    return out


def bmm_route(hg, torch, device="cuda"):
    """The library calls of hologram_torch's bmm and of its matmul on 4-D operands on CUDA
    tensors, from hg.profile (one gemm_strided_batched each is the batched route), and their
    largest difference from torch.bmm."""
    if torch is None:
        return {"skipped": "no CUDA torch (torch missing, without CUDA, or the emulation)"}
    try:
        import hologram_torch as ht
    except Exception as e:
        return {"skipped": f"hologram_torch does not import: {type(e).__name__}: {e}"}
    gen = torch.Generator(device=device).manual_seed(3)
    a = torch.randn(8, 64, 32, device=device, generator=gen)
    b = torch.randn(8, 32, 16, device=device, generator=gen)
    want = torch.bmm(a, b)
    out = {}
    for name, fn in (("functional.bmm", lambda: ht.functional.bmm(a, b)),
                     ("functional.matmul 4-D", lambda: ht.functional.matmul(
                         a.view(2, 4, 64, 32), b.view(2, 4, 32, 16)).view(8, 64, 16))):
        fn()
        with hg.profile() as prof:
            y = fn()
        calls = [e["name"] for e in prof.events
                 if e.get("cat") == "launch" and e["name"].startswith("gemm")]
        out[name] = {"calls": calls, "max_abs_err": float((y - want).abs().max())}
    return out
