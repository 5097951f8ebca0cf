"""Seven real models, nobody's here, for measuring hologram_torch (issue 34): builders with random
weights, deterministic by seed, in configs small enough for a step well under a second on 2 cores.

    from torch_model_zoo import MODELS, build
    model, make_inputs, loss_fn = build("gpt2", seed=0)
    out = model(**make_inputs(1)); loss_fn(out, make_inputs(1)).backward()

Inputs are keyword arguments (`model(**make_inputs(seed))`): Hugging Face models take several.
`loss_fn(outputs, inputs)` gives a scalar; `output_tensor(outputs)` the tensor to compare
(a ModelOutput's logits). `dropout=0.0` builds a model whose train mode is deterministic (the
tests compare gradients that way); the default is each model's own dropout.

- mnist_cnn: the pytorch/examples MNIST `Net` (conv 1->32->64 3x3, max-pool, dropout 0.25/0.5,
  fc 9216->128->10, log_softmax, nll_loss), batch 32 of 1x28x28.
- resnet18, mobilenet_v3_small: written here from torchvision's code (PyPI's torchvision is a
  CUDA build that does not import with the CPU torch): the same modules, layer order, in-place
  ReLU/Hardswish and weight init; 1000 classes, batch 2 of 3x64x64, cross-entropy.
- gpt2, bert, llama: transformers' GPT2LMHeadModel, BertForMaskedLM and LlamaForCausalLM from
  small configs (in MODELS[name].config), the default attention implementation (sdpa), batch 4
  of 64 tokens from a vocabulary of 1024; next-token / masked-token cross-entropy. BERT's inputs
  carry an attention mask with padding at the end of two rows.
- mlp: Linear 784->1024->1024->10 with ReLU, batch 128, cross-entropy.
"""
import copy
from functools import partial
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn


class ZooModel(NamedTuple):
    model: nn.Module
    make_inputs: Callable   # seed -> dict of keyword arguments of model
    loss_fn: Callable       # (outputs, inputs) -> scalar tensor


def output_tensor(out):
    """The tensor of a model's output to compare: itself, or a ModelOutput's logits."""
    return out if isinstance(out, torch.Tensor) else out.logits


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def rel_err(a, b, floor=0.0):
    """max |a - b| / max(max |b|, floor) (b: the reference): an error relative to the tensor's
    scale, meaningful where single elements are near zero. floor: the scale below which b counts
    as zero (see grad_errors)."""
    a, b = a.detach().double(), b.detach().double()
    return ((a - b).abs().max() / b.abs().max().clamp_min(max(floor, 1e-30))).item()


def errors(got, want):
    """{name: rel_err(got[name], want[name])} for dicts of tensors (None where both are None,
    inf where one is). A tensor that is mathematically zero (a batch norm's bias followed by
    another train-mode batch norm, BERT's key biases under softmax, the running mean of a
    zero-mean input) holds rounding noise, ~1e-9 of the largest of its kind where the smallest
    real ones are > 1e-3 of it: it is compared at a scale of 1e-4 of the largest of want."""
    top = max((w.abs().max().item() for w in want.values() if w is not None), default=0.0)
    out = {}
    for k, w in want.items():
        g = got[k]
        if g is None or w is None:
            out[k] = None if g is None and w is None else float("inf")
        else:
            out[k] = rel_err(g, w, 1e-4 * top)
    return out


def grad_errors(model, ref):
    """errors of model's parameter gradients against ref's (same parameter names)."""
    return errors({k: p.grad for k, p in model.named_parameters()},
                  {k: p.grad for k, p in ref.named_parameters()})


# ---- pytorch/examples mnist/main.py, class Net (verbatim but for the dropout arguments) ----

class MnistNet(nn.Module):
    def __init__(self, p1=0.25, p2=0.5):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(p1)
        self.dropout2 = nn.Dropout(p2)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


# ---- torchvision/models/resnet.py: ResNet with BasicBlock (resnet18) ----

def _conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = _conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = _conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


# ---- torchvision/models/mobilenetv3.py (and ops/misc.py): mobilenet_v3_small ----

def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, cin, cout, kernel_size=3, stride=1, groups=1, norm_layer=None,
                 activation_layer=nn.ReLU):
        layers = [nn.Conv2d(cin, cout, kernel_size, stride, (kernel_size - 1) // 2,
                            groups=groups, bias=norm_layer is None)]
        if norm_layer is not None:
            layers.append(norm_layer(cout))
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class InvertedResidual(nn.Module):
    def __init__(self, cin, kernel, expanded, cout, use_se, use_hs, stride, norm_layer):
        super().__init__()
        self.use_res_connect = stride == 1 and cin == cout
        act = nn.Hardswish if use_hs else nn.ReLU
        layers = []
        if expanded != cin:
            layers.append(Conv2dNormActivation(cin, expanded, 1, norm_layer=norm_layer,
                                               activation_layer=act))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel, stride, groups=expanded,
                                           norm_layer=norm_layer, activation_layer=act))
        if use_se:
            layers.append(SqueezeExcitation(expanded, _make_divisible(expanded // 4, 8)))
        layers.append(Conv2dNormActivation(expanded, cout, 1, norm_layer=norm_layer,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result += x
        return result


# (input, kernel, expanded, output, SE, hardswish, stride) of mobilenet_v3_small, width 1.0
_MOBILENET_V3_SMALL = [
    (16, 3, 16, 16, True, False, 2), (16, 3, 72, 24, False, False, 2),
    (24, 3, 88, 24, False, False, 1), (24, 5, 96, 40, True, True, 2),
    (40, 5, 240, 40, True, True, 1), (40, 5, 240, 40, True, True, 1),
    (40, 5, 120, 48, True, True, 1), (48, 5, 144, 48, True, True, 1),
    (48, 5, 288, 96, True, True, 2), (96, 5, 576, 96, True, True, 1),
    (96, 5, 576, 96, True, True, 1)]


class MobileNetV3(nn.Module):
    def __init__(self, num_classes=1000, last_channel=1024, dropout=0.2):
        super().__init__()
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        layers = [Conv2dNormActivation(3, 16, 3, 2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        layers += [InvertedResidual(*cfg, norm_layer=norm_layer) for cfg in _MOBILENET_V3_SMALL]
        layers.append(Conv2dNormActivation(96, 576, 1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(576, last_channel), nn.Hardswish(inplace=True),
            nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


# ---- the builders ----

def _image_inputs(shape, classes):
    def make_inputs(seed):
        g = _gen(seed)
        return {"x": torch.randn(*shape, generator=g),
                "target": torch.randint(0, classes, (shape[0],), generator=g)}
    return make_inputs


def _call_x(model_cls):
    """model_cls with forward(x, target=None): the target rides along with the inputs so that
    every model takes model(**inputs); it is the loss's, not the forward's."""
    class WithTarget(model_cls):
        def forward(self, x, target=None):
            return super().forward(x)
    WithTarget.__name__ = WithTarget.__qualname__ = model_cls.__name__
    return WithTarget


def _ce(out, inputs):
    return F.cross_entropy(output_tensor(out), inputs["target"])


def build_mnist_cnn(dropout=None):
    model = _call_x(MnistNet)(*((0.25, 0.5) if dropout is None else (dropout, dropout)))
    return ZooModel(model, _image_inputs((32, 1, 28, 28), 10),
                    lambda out, inputs: F.nll_loss(out, inputs["target"]))


def build_resnet18(dropout=None):
    return ZooModel(_call_x(ResNet)(), _image_inputs((2, 3, 64, 64), 1000), _ce)


def build_mobilenet_v3_small(dropout=None):
    model = _call_x(MobileNetV3)(dropout=0.2 if dropout is None else dropout)
    return ZooModel(model, _image_inputs((2, 3, 64, 64), 1000), _ce)


def build_mlp(dropout=None):
    model = _call_x(nn.Sequential)(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                                   nn.ReLU(), nn.Linear(1024, 10))
    return ZooModel(model, _image_inputs((128, 784), 10), _ce)


VOCAB, BATCH, SEQ = 1024, 4, 64


def _token_inputs(mask=False, token_types=False):
    def make_inputs(seed):
        g = _gen(seed)
        inputs = {"input_ids": torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)}
        if mask:   # the last 8 and 16 tokens of rows 1 and 3 are padding
            m = torch.ones(BATCH, SEQ, dtype=torch.long)
            m[1, -8:] = 0
            m[3, -16:] = 0
            inputs["attention_mask"] = m
        if token_types:
            inputs["token_type_ids"] = (torch.arange(SEQ) >= SEQ // 2).long().expand(BATCH, SEQ)
        return inputs
    return make_inputs


def _next_token_loss(out, inputs):
    logits = output_tensor(out)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                           inputs["input_ids"][:, 1:].reshape(-1))


def _masked_token_loss(out, inputs):
    """Cross-entropy at every 7th position of the unpadded tokens, against the input token."""
    logits, ids = output_tensor(out), inputs["input_ids"]
    pick = (torch.arange(ids.shape[1]) % 7 == 0) & inputs["attention_mask"].bool()
    return F.cross_entropy(logits[pick], ids[pick])


GPT2_CONFIG = dict(vocab_size=VOCAB, n_positions=128, n_embd=256, n_layer=4, n_head=4)
BERT_CONFIG = dict(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                   intermediate_size=1024, max_position_embeddings=128)
LLAMA_CONFIG = dict(vocab_size=VOCAB, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)


def build_gpt2(dropout=None):
    import transformers
    drop = {} if dropout is None else dict(resid_pdrop=dropout, embd_pdrop=dropout,
                                           attn_pdrop=dropout)
    cfg = transformers.GPT2Config(**GPT2_CONFIG, use_cache=False, bos_token_id=VOCAB - 1,
                                  eos_token_id=VOCAB - 1, **drop)
    return ZooModel(transformers.GPT2LMHeadModel(cfg), _token_inputs(), _next_token_loss)


def build_bert(dropout=None):
    import transformers
    drop = {} if dropout is None else dict(hidden_dropout_prob=dropout,
                                           attention_probs_dropout_prob=dropout)
    cfg = transformers.BertConfig(**BERT_CONFIG, **drop)
    return ZooModel(transformers.BertForMaskedLM(cfg), _token_inputs(mask=True, token_types=True),
                    _masked_token_loss)


def build_llama(dropout=None):
    import transformers
    # Llama's only dropout is attention_dropout, 0.0 by default (as in the released models).
    cfg = transformers.LlamaConfig(**LLAMA_CONFIG, use_cache=False,
                                   attention_dropout=0.0 if dropout is None else dropout)
    return ZooModel(transformers.LlamaForCausalLM(cfg), _token_inputs(), _next_token_loss)


class Spec(NamedTuple):
    builder: Callable
    config: str             # what the builder makes, for tables and JSON
    has_dropout: bool       # dropout active in train mode by default
    fullgraph: bool         # torch.compile(fullgraph=True) traces it in one graph


MODELS = {
    "mnist_cnn": Spec(build_mnist_cnn, "pytorch/examples MNIST Net, batch 32x1x28x28", True, True),
    "resnet18": Spec(build_resnet18, "torchvision resnet18 (written here), batch 2x3x64x64", False,
                     True),
    "mobilenet_v3_small": Spec(build_mobilenet_v3_small,
                               "torchvision mobilenet_v3_small (written here), batch 2x3x64x64",
                               True, True),
    "gpt2": Spec(build_gpt2, f"GPT2LMHeadModel {GPT2_CONFIG}, batch {BATCH}x{SEQ}", True, True),
    "bert": Spec(build_bert, f"BertForMaskedLM {BERT_CONFIG}, batch {BATCH}x{SEQ}, padded mask",
                 True, True),
    "llama": Spec(build_llama, f"LlamaForCausalLM {LLAMA_CONFIG}, batch {BATCH}x{SEQ}", False,
                  True),
    "mlp": Spec(build_mlp, "MLP 784-1024-1024-10 ReLU, batch 128", False, True),
}


def build(name, seed=0, dropout=None):
    """MODELS[name]'s model with weights drawn from seed (torch's global generator is restored
    after), its make_inputs and loss_fn. dropout: None, the model's own; a float, every dropout
    probability of the model (0.0: train mode is deterministic)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        zoo = MODELS[name].builder(dropout)
    return zoo


def copy_model(model, dtype=None):
    """A deep copy of model (the same weights), converted to dtype if given."""
    m = copy.deepcopy(model)
    return m if dtype is None else m.to(dtype)


def inputs_to(inputs, dtype):
    """inputs with their floating-point tensors converted to dtype."""
    return {k: v.to(dtype) if v.is_floating_point() else v for k, v in inputs.items()}


__all__ = ["MODELS", "ZooModel", "Spec", "build", "output_tensor", "rel_err", "errors",
           "grad_errors", "copy_model", "inputs_to"]
