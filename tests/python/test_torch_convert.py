"""hologram_torch.nn.convert on real models (Hugging Face transformers' GPT-2, BERT and Llama
built from small configs, random weights) and on classes it must recognise by what they compute,
not by name: outputs and gradients against eager torch on a new input, the summary's counts."""
import copy
import math
import warnings

import pytest

torch = pytest.importorskip("torch")
import hologram_torch as ht  # noqa: E402

N = ht.nn


def _convert(model, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return N.convert(model, report=True, **kw)


def _close_rel(a, b, rel, floor=0.0):
    """max |a - b| <= rel * max |b| (+ floor: for gradients that are 0 in exact arithmetic)."""
    err, scale = (a - b).abs().max().item(), b.abs().max().item()
    assert err <= rel * scale + floor, (err, scale)


def _hf_models(p=0.0):
    """name -> (make, replaced, kept): the summary's counts; p: every dropout probability."""
    tr = pytest.importorskip("transformers")
    gpt2 = lambda: tr.GPT2LMHeadModel(tr.GPT2Config(  # noqa: E731
        n_layer=2, n_embd=64, n_head=4, vocab_size=100, n_positions=32, resid_pdrop=p,
        embd_pdrop=p, attn_pdrop=p, bos_token_id=0, eos_token_id=0))
    bert = lambda: tr.BertModel(tr.BertConfig(  # noqa: E731
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
        vocab_size=100, max_position_embeddings=32, hidden_dropout_prob=p,
        attention_probs_dropout_prob=p))
    llama = lambda: tr.LlamaForCausalLM(tr.LlamaConfig(  # noqa: E731
        num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=100, max_position_embeddings=32, bos_token_id=0,
        eos_token_id=0, attention_dropout=p))
    return {
        "gpt2": (gpt2, {"Conv1D -> linear_t": 8, "NewGELUActivation -> gelu_tanh": 2,
                        "LayerNorm": 5, "Dropout": 7, "Embedding": 2, "Linear": 1}, {}),
        "bert": (bert, {"Linear": 13, "GELUActivation -> gelu": 2, "LayerNorm": 5,
                        "Dropout": 7, "Embedding": 3, "Tanh": 1}, {}),
        "llama": (llama, {"Linear": 15, "LlamaRMSNorm -> rms_norm": 5,
                          "SiLUActivation -> silu": 2, "Embedding": 1},
                  {("LlamaRotaryEmbedding", "no hologram counterpart"): 1}),
    }


def _out(o):
    return o.logits if hasattr(o, "logits") else o.last_hidden_state


@pytest.mark.parametrize("name", ["gpt2", "bert", "llama"])
def test_transformers_models_convert_and_match_eager(name):
    make, replaced, kept = _hf_models()[name]
    torch.manual_seed(0)
    ref = make()
    model = copy.deepcopy(ref)
    summary = _convert(model)
    assert dict(summary.replaced) == replaced, summary
    assert dict(summary.kept) == kept, summary
    assert str(summary).startswith(f"hologram_torch.nn.convert: replaced "
                                   f"{sum(replaced.values())} layers")
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(0, 100, (2, 12), generator=g)   # a new input
    for mode in ("eval", "train"):
        getattr(ref, mode)()
        getattr(model, mode)()
        want, got = _out(ref(ids)), _out(model(ids))
        _close_rel(got, want, 1e-4)
    ref.zero_grad()
    model.zero_grad()
    w = torch.randn(want.shape, generator=g)
    (want * w).sum().backward()
    (got * w).sum().backward()
    # BERT's key bias has a zero gradient in exact arithmetic (softmax ignores a constant per
    # row): both sides are rounding noise there, measured against the model's gradient scale
    top = max(p.grad.abs().max().item() for p in ref.parameters() if p.grad is not None)
    for (pn, p), (qn, q) in zip(ref.named_parameters(), model.named_parameters()):
        assert pn == qn
        if p.grad is None:
            assert q.grad is None, pn
            continue
        _close_rel(q.grad, p.grad, 1e-3, floor=1e-6 * top)


@pytest.mark.parametrize("name", ["gpt2", "bert", "llama"])
def test_converted_transformers_compile_in_training_fullgraph(name):
    """torch.compile(fullgraph=True, aot_eager) of the converted models in training mode, dropout
    0.1 everywhere (hologram's Dropout layers; the attention's own dropout is torch's): one
    graph, a fresh mask per call, eager's values and gradients under the same manual_seed."""
    make = _hf_models(p=0.1)[name][0]
    torch.manual_seed(0)
    model = make()
    _convert(model)
    model.train()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    ids = torch.randint(0, 100, (2, 12), generator=torch.Generator().manual_seed(3))
    torch.manual_seed(1)
    got = _out(compiled(ids))
    assert not torch.equal(_out(compiled(ids)), got)
    torch.manual_seed(1)
    want = _out(model(ids))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    params = [p for p in model.parameters() if p.requires_grad]
    g_c = torch.autograd.grad(got.square().mean(), params, allow_unused=True)
    g_e = torch.autograd.grad(want.square().mean(), params, allow_unused=True)
    for a, b, p in zip(g_c, g_e, params):   # an unused parameter: None, or zeros compiled
        a = torch.zeros_like(p) if a is None else a
        b = torch.zeros_like(p) if b is None else b
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-7)


# ---- recognised by what they compute: look-alikes of transformers' and timm's classes ---------
class Conv1D(torch.nn.Module):   # transformers.pytorch_utils.Conv1D
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = torch.nn.Parameter(torch.randn(nx, nf) * 0.1)
        self.bias = torch.nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(size_out)


class LlamaRMSNorm(torch.nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(hidden_size) + 0.5)
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class NewGELUActivation(torch.nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                               (input + 0.044715 * torch.pow(input, 3.0))))


class GELUTanh(torch.nn.Module):   # timm's (and transformers') F.gelu(approximate='tanh')
    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


class TimmLayerNorm(torch.nn.LayerNorm):   # timm.layers.LayerNorm: torch's layer norm
    def forward(self, x):
        return torch.nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias,
                                              self.eps)


# impostors: the names above (or a torch base class), something else computed
class GemmaLikeRMSNorm(LlamaRMSNorm):
    def forward(self, hidden_states):
        h = hidden_states.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return (h * (1.0 + self.weight)).to(hidden_states.dtype)


class QuickGELU(torch.nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class ClippedGELU(torch.nn.Module):
    def forward(self, x):
        return torch.clip(torch.nn.functional.gelu(x), -10, 10)


class InplaceRelu(torch.nn.Module):   # relu's values, but written into the input
    def forward(self, x):
        return x.relu_()


class ShiftedLinear(torch.nn.Linear):
    def forward(self, x):
        return super().forward(x) + 1


def test_recognised_by_what_they_compute_not_by_name():
    torch.manual_seed(3)
    impostors = {"LlamaRMSNorm": type("LlamaRMSNorm", (GemmaLikeRMSNorm,), {}),
                 "NewGELUActivation": type("NewGELUActivation", (QuickGELU,), {}),
                 "GELUActivation": type("GELUActivation", (ClippedGELU,), {})}
    model = torch.nn.ModuleList([
        Conv1D(6, 4), LlamaRMSNorm(6), NewGELUActivation(), GELUTanh(), TimmLayerNorm(6),
        impostors["LlamaRMSNorm"](6), impostors["NewGELUActivation"](),
        impostors["GELUActivation"](), ShiftedLinear(6, 6), torch.nn.ReLU(inplace=True),
        InplaceRelu()])
    ref = copy.deepcopy(model)
    summary = _convert(model)
    assert dict(summary.replaced) == {
        "Conv1D -> linear_t": 1, "LlamaRMSNorm -> rms_norm": 1,
        "NewGELUActivation -> gelu_tanh": 1, "GELUTanh -> gelu_tanh": 1,
        "TimmLayerNorm -> LayerNorm": 1, "ReLU": 1}, summary
    assert dict(summary.kept) == {
        ("LlamaRMSNorm", "computes none of hologram's layers (probed)"): 1,
        ("NewGELUActivation", "computes none of hologram's layers (probed)"): 1,
        ("GELUActivation", "computes none of hologram's layers (probed)"): 1,
        ("ShiftedLinear", "computes something other than torch.nn.Linear"): 1,
        ("InplaceRelu", "computes none of hologram's layers (probed)"): 1}, summary
    for m, r in zip(model, ref):   # isinstance of its own class, the same repr
        assert isinstance(m, type(r)) and repr(m) == repr(r)
    assert [isinstance(m, N._HgModule) for m in model] == [True] * 5 + [False] * 4 + [True,
                                                                                       False]
    x = torch.randn(3, 5, 4) * 4   # a new input
    h = model[0](x)
    torch.testing.assert_close(h, ref[0](x), rtol=1e-5, atol=1e-5)
    for m, r in zip(list(model)[1:9], list(ref)[1:9]):
        torch.testing.assert_close(m(h), r(h), rtol=1e-5, atol=1e-5)
    # gradients through the converted Conv1D and RMSNorm
    xg = x.clone().requires_grad_()
    xr = x.clone().requires_grad_()
    model[1](model[0](xg)).square().sum().backward()
    ref[1](ref[0](xr)).square().sum().backward()
    torch.testing.assert_close(xg.grad, xr.grad, rtol=1e-4, atol=1e-5)
    for a, b in zip(list(model[0].parameters()) + list(model[1].parameters()),
                    list(ref[0].parameters()) + list(ref[1].parameters())):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)


def test_other_dtypes_take_the_original_forward():
    """A foreign class is checked in its parameters' dtype; other inputs run its own forward
    (LlamaRMSNorm computes bfloat16 inputs in float32 and returns the weight's dtype)."""
    torch.manual_seed(4)
    norm, act = LlamaRMSNorm(8), NewGELUActivation()
    ref_norm, ref_act = copy.deepcopy(norm), copy.deepcopy(act)
    _convert(torch.nn.Sequential(norm, act))
    x = torch.randn(3, 8, dtype=torch.bfloat16)
    assert torch.equal(norm(x), ref_norm(x)) and norm(x).dtype == torch.float32
    assert torch.equal(act(x), ref_act(x))
    x64 = torch.randn(3, 8, dtype=torch.float64)
    assert torch.equal(act(x64), ref_act(x64))


def test_relu_inplace_keeps_torchs_semantics():
    """ReLU(inplace=True): hologram computes, the result is written into the input (torch's
    copy_): the same tensor returned, its version bumped, gradients as torch's relu_."""
    torch.manual_seed(5)
    ours = _convert(torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(inplace=True)))
    assert dict(ours.replaced) == {"Linear": 1, "ReLU": 1}
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(inplace=True))
    ref = copy.deepcopy(model)
    N.convert(model)
    x = torch.randn(5, 4)
    t = torch.randn(5, 6)
    v = t._version
    assert model[1](t) is t and t._version > v and (t >= 0).all()
    y, yr = model(x), ref(x)
    torch.testing.assert_close(y, yr)
    y.square().sum().backward()
    yr.square().sum().backward()
    for a, b in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(a.grad, b.grad)
    leaf = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        model[1](leaf)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ref[1](leaf)


def test_convert_leaves_torchs_generator_alone_and_is_idempotent():
    class Noisy(torch.nn.Module):   # a parameterless module that draws: probed, kept
        def forward(self, x):
            return x + torch.rand_like(x)

    model = torch.nn.Sequential(torch.nn.Linear(3, 3), Noisy(), NewGELUActivation())
    torch.manual_seed(8)
    state = torch.random.get_rng_state()
    summary = _convert(model)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert dict(summary.kept) == {("Noisy", "computes none of hologram's layers (probed)"): 1}
    again = _convert(model)
    assert not again.replaced and dict(again.kept) == dict(summary.kept)
    with pytest.warns(UserWarning, match=r"kept torch's forward for 1 Noisy \(computes none"):
        assert N.convert(model) is model


def test_converted_foreign_classes_pickle_and_copy():
    """torch.save of a whole converted model and copy.deepcopy rebuild the converted classes."""
    import io
    torch.manual_seed(6)
    model = torch.nn.Sequential(Conv1D(5, 4), LlamaRMSNorm(5), NewGELUActivation(),
                                TimmLayerNorm(5))
    _convert(model)
    x = torch.randn(2, 4)
    want = model(x)
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    for other in (torch.load(buf, weights_only=False), copy.deepcopy(model)):
        assert [type(m) for m in other] == [type(m) for m in model]
        assert all(isinstance(m, N._HgModule) for m in other)
        torch.testing.assert_close(other(x), want)
    assert model[1](hidden_states=x[:, :1].expand(2, 5).contiguous()).shape == (2, 5)


def test_wide_layers_are_recognised():
    """Probes of layers of real widths (GPT-2 small's Conv1D 768 -> 3072 and back, a 4096-wide
    RMSNorm): sums of thousands of terms in another order still match."""
    torch.manual_seed(9)
    model = torch.nn.Sequential(Conv1D(3072, 768), Conv1D(768, 3072), LlamaRMSNorm(4096),
                                torch.nn.Linear(4096, 64))
    for conv in model[:2]:
        torch.nn.init.normal_(conv.weight, std=0.02)
    summary = _convert(model)
    assert dict(summary.replaced) == {"Conv1D -> linear_t": 2, "LlamaRMSNorm -> rms_norm": 1,
                                      "Linear": 1}, summary
    assert not summary.kept
