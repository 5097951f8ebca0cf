"""The real-model zoo (bench/torch_model_zoo.py: the MNIST CNN of pytorch/examples, resnet18 and
mobilenet_v3_small from torchvision's code, transformers' GPT-2, BERT and Llama from small
configs, an MLP) through hologram_torch against torch eager (issue 34).

Each model runs through `hologram_torch.nn.convert` and through
`torch.compile(model, backend="hologram")` (fullgraph=True where the model allows it: all seven
do, checked with torch's own aot_eager backend, with which every compile case here passes), in
eval (no_grad) and in training (forward, backward, an SGD step, and again): the first call is on
one input, the comparison on a new one; outputs within 1e-4 and gradients within 1e-3 of eager
f32, relative to the largest magnitude of eager's tensor (rel_err; errors and grad_errors for
tensors that are mathematically zero). Training runs with dropout 0 so that the two sides are
comparable; with each model's own dropout, two training calls on the same input must differ
(dropout drawn fresh each call)."""
import os
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
ht = pytest.importorskip("hologram_torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from torch_model_zoo import (MODELS, build, copy_model, errors, grad_errors,  # noqa: E402
                             inputs_to, output_tensor, rel_err)

OUT_TOL, GRAD_TOL = 1e-4, 1e-3
HF = {"gpt2", "bert", "llama"}


def _need(name):
    if name in HF:
        pytest.importorskip("transformers")


def _convert(model, name):
    with warnings.catch_warnings():   # convert names the layers it keeps; not what is tested
        warnings.simplefilter("ignore")
        return ht.nn.convert(model)


def _compile(model, name):
    torch._dynamo.reset()   # each case compiles its own model afresh
    return torch.compile(model, backend="hologram", fullgraph=MODELS[name].fullgraph)


PATHS = {"convert": _convert, "compile": _compile}
CASES = [(path, name) for path in PATHS for name in MODELS]
IDS = [f"{path}-{name}" for path, name in CASES]


@pytest.mark.parametrize("name", list(MODELS))
def test_zoo_builders_are_deterministic_and_match_float64(name):
    _need(name)
    model, make_inputs, loss_fn = build(name, seed=0)
    again, other = build(name, seed=0).model, build(name, seed=1).model
    for (k, p), q, r in zip(model.state_dict().items(), again.state_dict().values(),
                            other.state_dict().values()):
        assert torch.equal(p, q), k
    assert any(not torch.equal(p, r) for p, r in zip(model.parameters(), other.parameters()))
    x = make_inputs(1)
    assert all(torch.equal(v, make_inputs(1)[k]) for k, v in x.items())
    model.eval()
    with torch.no_grad():
        got = output_tensor(model(**x))
        want = output_tensor(copy_model(model, torch.float64)(**inputs_to(x, torch.float64)))
    assert got.dtype == torch.float32 and want.dtype == torch.float64
    assert torch.isfinite(got).all() and rel_err(got, want) <= 1e-4
    assert torch.isfinite(loss_fn(model(**x), x))


@pytest.mark.parametrize("path,name", CASES, ids=IDS)
def test_eval_matches_eager(path, name):
    _need(name)
    ref, make_inputs, _ = build(name)
    ref.eval()
    model = PATHS[path](copy_model(ref), name)
    with torch.no_grad():
        model(**make_inputs(0))   # the first call (compiles) on another input
        x = make_inputs(1)
        got, want = output_tensor(model(**x)), output_tensor(ref(**x))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert rel_err(got, want) <= OUT_TOL


def _train_step(model, opt, loss_fn, x):
    opt.zero_grad(set_to_none=True)
    out = model(**x)
    loss = loss_fn(out, x)
    loss.backward()
    opt.step()
    return output_tensor(out).detach(), loss.detach()


@pytest.mark.parametrize("path,name", CASES, ids=IDS)
def test_train_matches_eager(path, name):
    _need(name)
    ref, make_inputs, loss_fn = build(name, dropout=0.0)
    ref.train()
    mine = copy_model(ref)
    model = PATHS[path](mine, name)
    # A real step after the first call: the second must see the updated weights.
    opts = [torch.optim.SGD(m.parameters(), lr=0.01) for m in (ref, mine)]
    for seed in (0, 1):   # the second call, on a new input, after a step, is compared
        x = make_inputs(seed)
        got, got_loss = _train_step(model, opts[1], loss_fn, x)
        want, want_loss = _train_step(ref, opts[0], loss_fn, x)
    assert got.shape == want.shape and rel_err(got, want) <= OUT_TOL
    assert rel_err(got_loss, want_loss) <= OUT_TOL
    errs = grad_errors(mine, ref)
    assert errs and all(e is None or e <= GRAD_TOL for e in errs.values()), errs
    def stats(m):   # batch norm's running statistics
        return {k: b for k, b in m.named_buffers() if b.is_floating_point()}
    errs = errors(stats(mine), stats(ref))
    assert all(e <= OUT_TOL for e in errs.values()), errs


DROPOUT_CASES = [(path, name) for path, name in CASES if MODELS[name].has_dropout]


@pytest.mark.parametrize("path,name", DROPOUT_CASES, ids=[f"{p}-{n}" for p, n in DROPOUT_CASES])
def test_train_dropout_is_drawn_fresh_each_call(path, name):
    _need(name)
    zoo = build(name)
    model = PATHS[path](zoo.model.train(), name)
    x = zoo.make_inputs(1)
    plain_model = build(name, dropout=0.0).model.train()   # the same weights
    with torch.no_grad():
        outs = [output_tensor(model(**x)) for _ in range(3)]
        plain = output_tensor(plain_model(**x))
    assert all(torch.isfinite(o).all() for o in outs)
    assert not torch.equal(outs[0], outs[1]) and not torch.equal(outs[1], outs[2])
    # Dropout on, not something else: each differs from the same model without dropout.
    assert all(rel_err(o, plain) > OUT_TOL for o in outs)
