# The declaration of every op the Python package binds: one record per _C function, read by
# tools/opdecl/gen_ops.py (docs/contributing.md "Adding an op"). Edit here, then run
#     python3 tools/opdecl/gen_ops.py          # rewrites the generated files
# `--check` (ctest op_decl_check, and the Python build) fails on any file that disagrees.
#
# A record:
#   name     the _C function (hologram._C.<name>); the binding is f_<name> in python/src/<src>.c
#   src      "tensor_ops" or "tensor_data_ops": the C file that binds it
#   c        the C prototypes it calls, as include/hologram/ops.h writes them (checked there)
#   args     the binding's arguments in order, "name: kind = default" (kinds: gen_ops.KINDS).
#            Every scalar has a default: the value None stands for. The first `nreq` are
#            required positionally all the same (default: the args before the first default).
#   variant  (flag, C function, name in messages): a bool argument that picks the second
#            C function, as softmax(log=True) runs hg_log_softmax
#   body     "generated": gen_ops.py writes f_<name>; "custom": written by hand in <src>.c,
#            which takes its argument names, defaults and docstring from the generated header
#   py       the hologram.ops functions on it: "name(params)" where a param is
#            `name[: stub type][=[default]]`; a bare `=` takes the binding argument's default
#            and a default may name another record's (`=rms_norm.eps`). `->hg_fn` after the
#            parenthesis names the C function it reaches when that is not the first.
#            Checked against ops.py (names, order, defaults) and ops.pyi (names, types).
#   py_impl  {py name: the ops.py function that holds its signature} for dispatchers
#            written as f(*args, **kw) (the flat forms) and functions made by a factory
#            ("outer.inner"); None: no ops.py check, stub only
#   doc      the docs page whose generated table lists it ("" for none); dtypes, computes:
#            that table's columns (computes: one text, or one per C function)
OPS = [
    # --- elementwise ---------------------------------------------------------------------------
    dict(name="unary", src="tensor_ops", body="custom", doc="",
         c=["hg_unary(hg_unary_op op, const hg_tensor* x, hg_tensor* out)"],
         args=["op: unary_op", "x: tensor", "out: out = None"]),
    dict(name="binary", src="tensor_ops", body="custom", doc="",
         c=["hg_binary(hg_binary_op op, const hg_tensor* a, const hg_tensor* b, hg_tensor* out)",
            "hg_binary_scalar(hg_binary_op op, const hg_tensor* a, hg_scalar s, int scalar_first, "
            "hg_tensor* out)"],
         args=["op: binary_op", "a: operand", "b: operand", "out: out = None"]),
    dict(name="where", src="tensor_ops", body="generated", doc="ops",
         dtypes="any (cond: nonzero = true)", computes="`cond ? a : b`, broadcast",
         c=["hg_where(const hg_tensor* cond, const hg_tensor* a, const hg_tensor* b, "
            "hg_tensor* out)"],
         args=["cond: tensor", "a: tensor", "b: tensor", "out: out = None"],
         py=["where(cond, a, b, out=)"]),
    dict(name="fma", src="tensor_ops", body="generated", doc="ops",
         dtypes="numeric", computes="`a*b + c`, floats rounded once",
         c=["hg_fma(const hg_tensor* a, const hg_tensor* b, const hg_tensor* c, hg_tensor* out)"],
         args=["a: tensor", "b: tensor", "c: tensor", "out: out = None"],
         py=["fma(a, b, c, out=)"]),
    dict(name="clip", src="tensor_ops", body="custom", doc="ops",
         dtypes="numeric", computes=["`minimum(maximum(x, lo), hi)`, lo/hi tensors or None",
                                     "the same with number bounds (weak promotion)"],
         c=["hg_clip(const hg_tensor* x, const hg_tensor* lo, const hg_tensor* hi, "
            "hg_tensor* out)",
            "hg_clip_scalar(const hg_tensor* x, hg_scalar lo, hg_scalar hi, hg_tensor* out)"],
         args=["x: tensor", "lo: operand? = None", "hi: operand? = None", "out: out = None"],
         py=["clip(x, lo=, hi=, out=)"]),
    dict(name="cast", src="tensor_ops", body="custom", doc="ops", fn="astype",
         dtypes="any", computes="conversion with the ISA's cvt rules",
         c=["hg_cast(const hg_tensor* x, hg_dtype dtype, hg_tensor* out)"],
         args=["x: tensor", "dtype: dtype", "out: out = None"],
         py=["cast(x, dtype, out=)"]),
    # --- reductions, softmax, norms ------------------------------------------------------------
    dict(name="reduce", src="tensor_ops", body="custom", doc="ops_reductions",
         dtypes="numeric (result dtypes below)",
         computes=["sum mean prod min max argmin argmax var std logsumexp any all over axes",
                   "variance with numpy's ddof", "standard deviation with numpy's ddof"],
         c=["hg_reduce(hg_reduce_op op, const hg_tensor* x, int32_t naxes, const int32_t* axes, "
            "int keepdims, hg_tensor* out)",
            "hg_var(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims, "
            "double ddof, hg_tensor* out)",
            "hg_std(const hg_tensor* x, int32_t naxes, const int32_t* axes, int keepdims, "
            "double ddof, hg_tensor* out)"],
         args=["op: reduce_op", "x: tensor", "axis: axes = None", "keepdims: bool = False",
               "out: out = None", "ddof: double = 0"],
         py=[f"{n}(x, axis=, keepdims=, out=)" for n in ("sum", "mean", "prod", "amin", "amax",
                                                         "logsumexp", "any", "all")] +
            [f"{n}(x, axis: Optional[int]=, keepdims=, out=)" for n in ("argmin", "argmax")] +
            ["var(x, axis=, keepdims=, ddof: int=, out=)->hg_var",
             "std(x, axis=, keepdims=, ddof: int=, out=)->hg_std"],
         # (the reductions are made by one factory in ops.py: its inner function's signature)
         py_impl={n: "_reduction.f" for n in ("sum", "mean", "prod", "amin", "amax", "logsumexp",
                                              "any", "all", "argmin", "argmax")}),
    dict(name="softmax", src="tensor_ops", body="generated", doc="ops_reductions",
         dtypes="floats", variant=("log", "hg_log_softmax", "log_softmax"),
         computes=["`exp(x - max) / sum(exp(x - max))` along axis", "`x - logsumexp(x, axis)`"],
         c=["hg_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out)",
            "hg_log_softmax(const hg_tensor* x, int32_t axis, hg_tensor* out)"],
         args=["x: tensor", "axis: int = -1", "log: bool = False", "out: out = None"],
         py=["softmax(x, axis=, out=)", "log_softmax(x, axis=, out=)->hg_log_softmax"],
         py_impl={"softmax": "_softmax_t"}),
    dict(name="layer_norm", src="tensor_ops", body="generated", doc="ops_reductions",
         dtypes="floats", nreq=2,
         computes="`(x - mean) / sqrt(var + eps) * weight + bias` over the last `nnorm` dims",
         c=["hg_layer_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight, "
            "const hg_tensor* bias, double eps, hg_tensor* out)"],
         args=["x: tensor", "nnorm: int = 1", "weight: tensor? = None", "bias: tensor? = None",
               "eps: double = 1e-5", "out: out = None"],
         py=["layer_norm(x, normalized_shape: Union[None, int, Sequence[int]]=None, weight=, "
             "bias=, eps=, out=)"]),
    dict(name="layer_norm_stats", src="tensor_ops", body="custom", doc="ops_reductions",
         dtypes="floats", nreq=6,
         computes="layer_norm's out, and the mean and rstd = `1 / sqrt(var + eps)` of each row "
                  "(torch's native_layer_norm)",
         c=["hg_layer_norm_stats(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight, "
            "const hg_tensor* bias, double eps, hg_tensor* out, hg_tensor* mean, "
            "hg_tensor* rstd)"],
         args=["x: tensor", "nnorm: int = 1", "weight: tensor? = None", "bias: tensor? = None",
               "eps: double = 1e-5", "out: tensor!", "mean: tensor!? = None",
               "rstd: tensor!? = None"],
         returns="None"),
    dict(name="rms_norm", src="tensor_ops", body="generated", doc="ops_reductions",
         dtypes="floats", nreq=2,
         computes="`x / sqrt(mean(x^2) + eps) * weight` over the last `nnorm` dims",
         c=["hg_rms_norm(const hg_tensor* x, int32_t nnorm, const hg_tensor* weight, double eps, "
            "hg_tensor* out)"],
         args=["x: tensor", "nnorm: int = 1", "weight: tensor? = None", "eps: double = 1e-6",
               "out: out = None"],
         py=["rms_norm(x, normalized_shape: Union[None, int, Sequence[int]]=None, weight=, eps=, "
             "out=)"]),
    dict(name="scaled_dot_product_attention", src="tensor_ops", body="custom",
         doc="ops_reductions", dtypes="floats", nreq=3,
         computes="`softmax(q k^T * scale + mask) v` over the last two dims (torch's "
                  "scaled_dot_product_attention without dropout; grouped-query heads, causal)",
         c=["hg_scaled_dot_product_attention(const hg_tensor* q, const hg_tensor* k, "
            "const hg_tensor* v, const hg_tensor* mask, int is_causal, double scale, "
            "hg_tensor* out, hg_tensor* lse)"],
         args=["q: tensor", "k: tensor", "v: tensor", "mask: tensor? = None",
               "is_causal: bool = False", "scale: double = nan", "out: out = None",
               "lse: tensor!? = None"],
         py=["scaled_dot_product_attention(q, k, v, attn_mask: Optional[_Operand]=None, "
             "is_causal=, scale: Optional[float]=None, out=, lse=)"]),
    # --- linear algebra ------------------------------------------------------------------------
    dict(name="matmul", src="tensor_ops", body="generated", doc="ops_linalg_losses",
         dtypes="numeric", computes="numpy.matmul (batched, broadcast, 1-D operands)",
         c=["hg_matmul(const hg_tensor* a, const hg_tensor* b, hg_tensor* out)"],
         args=["a: tensor", "b: tensor", "out: out = None"],
         py=["matmul(a, b, out=)"]),
    dict(name="matvec", src="tensor_ops", body="generated", doc="ops_linalg_losses",
         dtypes="numeric", computes="`a @ x`, a 2-D, x 1-D",
         c=["hg_matvec(const hg_tensor* a, const hg_tensor* x, hg_tensor* out)"],
         args=["a: tensor", "x: tensor", "out: out = None"],
         py=["matvec(a, x, out=)"], py_impl={"matvec": None}),
    dict(name="gemm", src="tensor_ops", body="custom", doc="ops_linalg_losses",
         dtypes="floats", computes="`c = alpha op(a) op(b) + beta c` in place, 2-D",
         c=["hg_gemm(int trans_a, int trans_b, double alpha, const hg_tensor* a, "
            "const hg_tensor* b, double beta, const hg_tensor* c)"],
         args=["a: tensor!", "b: tensor!", "c: tensor!", "alpha: double = 1.0",
               "beta: double = 0.0", "trans_a: bool = False", "trans_b: bool = False"],
         py=["gemm(a, b, c, alpha=, beta=, trans_a=, trans_b=)"], py_impl={"gemm": None}),
    # --- losses --------------------------------------------------------------------------------
    dict(name="mse_loss", src="tensor_ops", body="generated", doc="ops_linalg_losses",
         dtypes="floats", computes="`(pred - target)^2`, reduced",
         c=["hg_mse_loss(const hg_tensor* pred, const hg_tensor* target, hg_reduction reduction, "
            "hg_tensor* out)"],
         args=["pred: tensor", "target: tensor", "reduction: reduction = 'mean'",
               "out: out = None"],
         py=["mse_loss(pred, target, reduction=, out=)"], py_impl={"mse_loss": None}),
    dict(name="cross_entropy", src="tensor_ops", body="generated", doc="ops_linalg_losses",
         dtypes="floats (target: integer indices or float probabilities)",
         computes="torch's cross_entropy: `logsumexp(x) - x[target]`, reduced",
         c=["hg_cross_entropy(const hg_tensor* logits, const hg_tensor* target, "
            "int64_t ignore_index, hg_reduction reduction, hg_tensor* out)"],
         args=["logits: tensor", "target: tensor", "ignore_index: int = -100",
               "reduction: reduction = 'mean'", "out: out = None"],
         py=["cross_entropy(logits, target, ignore_index=, reduction=, out=)"]),
    dict(name="binary_cross_entropy", src="tensor_ops", body="generated",
         doc="ops_linalg_losses", dtypes="floats",
         computes="`-w (t log p + (1 - t) log(1 - p))`, logs clamped at -100",
         c=["hg_binary_cross_entropy(const hg_tensor* prob, const hg_tensor* target, "
            "const hg_tensor* weight, hg_reduction reduction, hg_tensor* out)"],
         args=["prob: tensor", "target: tensor", "weight: tensor? = None",
               "reduction: reduction = 'mean'", "out: out = None"],
         py=["binary_cross_entropy(prob, target, weight=, reduction=, out=)"]),
    dict(name="binary_cross_entropy_with_logits", src="tensor_ops", body="generated",
         doc="ops_linalg_losses", dtypes="floats",
         computes="sigmoid and BCE in one stable formula; pos_weight weighs the positive term",
         c=["hg_binary_cross_entropy_with_logits(const hg_tensor* logits, "
            "const hg_tensor* target, const hg_tensor* weight, const hg_tensor* pos_weight, "
            "hg_reduction reduction, hg_tensor* out)"],
         args=["logits: tensor", "target: tensor", "weight: tensor? = None",
               "pos_weight: tensor? = None", "reduction: reduction = 'mean'", "out: out = None"],
         py=["binary_cross_entropy_with_logits(logits, target, weight=, pos_weight=, "
             "reduction=, out=)"]),
    # --- gradients -----------------------------------------------------------------------------
    dict(name="activation_backward", src="tensor_ops", body="generated", doc="ops_gradients",
         dtypes="floats", computes="dL/dx of `y = op(x)` for a unary op",
         c=["hg_activation_backward(hg_unary_op op, const hg_tensor* grad, const hg_tensor* x, "
            "const hg_tensor* y, hg_tensor* out)"],
         args=["op: unary_op", "grad: tensor", "x: tensor? = None", "y: tensor? = None",
               "out: out = None"],
         py=["activation_backward(op: str, grad, x=, y=, out=)"]),
    dict(name="softmax_backward", src="tensor_ops", body="generated", doc="ops_gradients",
         dtypes="floats", variant=("log", "hg_log_softmax_backward", "log_softmax_backward"),
         computes=["`y * (g - sum(g * y, axis))`, g = dL/dy", "`g - exp(y) * sum(g, axis)`"],
         c=["hg_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis, "
            "hg_tensor* out)",
            "hg_log_softmax_backward(const hg_tensor* grad, const hg_tensor* y, int32_t axis, "
            "hg_tensor* out)"],
         args=["grad: tensor", "y: tensor", "axis: int = -1", "log: bool = False",
               "out: out = None"],
         py=["softmax_backward(grad, y, axis=, out=)",
             "log_softmax_backward(grad, y, axis=, out=)->hg_log_softmax_backward"]),
    dict(name="norm_backward", src="tensor_ops", body="custom", doc="ops_gradients",
         dtypes="floats", nreq=3,
         computes=["grad_x, grad_weight, grad_bias (statistics recomputed from x)",
                   "grad_x, grad_weight (statistics recomputed from x)",
                   "grad_x, grad_weight, grad_bias (the mean and rstd given: mean=, rstd=)"],
         c=["hg_layer_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm, "
            "const hg_tensor* weight, double eps, hg_tensor* grad_x, hg_tensor* grad_weight, "
            "hg_tensor* grad_bias)",
            "hg_rms_norm_backward(const hg_tensor* grad, const hg_tensor* x, int32_t nnorm, "
            "const hg_tensor* weight, double eps, hg_tensor* grad_x, hg_tensor* grad_weight)",
            "hg_layer_norm_backward_stats(const hg_tensor* grad, const hg_tensor* x, "
            "int32_t nnorm, const hg_tensor* mean, const hg_tensor* rstd, "
            "const hg_tensor* weight, hg_tensor* grad_x, hg_tensor* grad_weight, "
            "hg_tensor* grad_bias)"],
         args=["grad: tensor", "x: tensor", "nnorm: int = 1", "weight: tensor? = None",
               "eps: double = 1e-5", "rms: bool = False", "grad_x: tensor!? = None",
               "grad_weight: tensor!? = None", "grad_bias: tensor!? = None",
               "mean: tensor? = None", "rstd: tensor? = None"],
         returns="None",
         py=["layer_norm_backward(grad, x: _C.Tensor, "
             "normalized_shape: Union[None, int, Sequence[int]]=None, "
             "weight: Optional[_C.Tensor]=, eps=, "
             "outputs: Tuple[bool, bool, bool]=(True, True, True))->hg_layer_norm_backward",
             "rms_norm_backward(grad, x: _C.Tensor, "
             "normalized_shape: Union[None, int, Sequence[int]]=None, "
             "weight: Optional[_C.Tensor]=, eps=rms_norm.eps, "
             "outputs: Tuple[bool, bool]=(True, True))->hg_rms_norm_backward"]),
    dict(name="scaled_dot_product_attention_backward", src="tensor_ops", body="custom",
         doc="ops_gradients", dtypes="floats", nreq=6,
         computes="grad_q, grad_k, grad_v of scaled_dot_product_attention from its out and lse "
                  "(grouped heads: summed over the query heads of a key/value head)",
         c=["hg_scaled_dot_product_attention_backward(const hg_tensor* grad_out, "
            "const hg_tensor* q, const hg_tensor* k, const hg_tensor* v, const hg_tensor* out, "
            "const hg_tensor* lse, const hg_tensor* mask, int is_causal, double scale, "
            "hg_tensor* grad_q, hg_tensor* grad_k, hg_tensor* grad_v)"],
         args=["grad_out: tensor", "q: tensor", "k: tensor", "v: tensor", "out: tensor",
               "lse: tensor", "mask: tensor? = None", "is_causal: bool = False",
               "scale: double = nan", "grad_q: tensor!? = None", "grad_k: tensor!? = None",
               "grad_v: tensor!? = None"],
         returns="None",
         py=["scaled_dot_product_attention_backward(grad_out, q: _C.Tensor, k: _C.Tensor, "
             "v: _C.Tensor, out, lse, attn_mask: Optional[_Operand]=None, is_causal=, "
             "scale: Optional[float]=None)"]),
    dict(name="cross_entropy_backward", src="tensor_ops", body="generated", doc="ops_gradients",
         dtypes="floats", computes="dL/dlogits, the softmax fused in",
         c=["hg_cross_entropy_backward(const hg_tensor* grad, const hg_tensor* logits, "
            "const hg_tensor* target, int64_t ignore_index, hg_reduction reduction, "
            "hg_tensor* out)"],
         args=["grad: tensor", "logits: tensor", "target: tensor",
               "ignore_index: int = cross_entropy.ignore_index",
               "reduction: reduction = cross_entropy.reduction", "out: out = None"],
         py=["cross_entropy_backward(grad, logits, target, ignore_index=, reduction=, out=)"]),
    # --- optimizers ----------------------------------------------------------------------------
    dict(name="adam_step", src="tensor_ops", body="custom", doc="ops_gradients", nreq=11,
         dtypes="floats", computes="one Adam/AdamW update in place, as torch.optim.Adam",
         c=["hg_adam_step(const hg_adam_options* options, const hg_tensor* param, "
            "const hg_tensor* grad, const hg_tensor* exp_avg, const hg_tensor* exp_avg_sq, "
            "const hg_tensor* max_exp_avg_sq)"],
         args=["param: tensor!", "grad: tensor", "exp_avg: tensor!", "exp_avg_sq: tensor!",
               "max_exp_avg_sq: tensor!? = None", "lr: double = 1e-3",
               "beta1: double = 0.9", "beta2: double = 0.999", "eps: double = 1e-8",
               "weight_decay: double = 0.0", "step: int = 1",
               "decoupled_weight_decay: bool = False", "amsgrad: bool = False",
               "maximize: bool = False"],
         returns="None",
         py=["adam_step(param: _C.Tensor, grad: _C.Tensor, exp_avg: _C.Tensor, "
             "exp_avg_sq: _C.Tensor, *, step, lr=, "
             "betas: Tuple[float, float]=(adam_step.beta1, adam_step.beta2), eps=, "
             "weight_decay=, decoupled_weight_decay=, amsgrad=, maximize=, "
             "max_exp_avg_sq: Optional[_C.Tensor]=)"]),
    # --- data (python/src/tensor_data_ops.c) ---------------------------------------------------
    dict(name="fill", src="tensor_data_ops", body="custom", doc="ops_data",
         dtypes="any", computes="every element of out = value",
         c=["hg_fill(const hg_tensor* out, hg_scalar value)"],
         args=["out: out!", "value: scalar"],
         py=["fill(out: _C.Tensor, value: Union[bool, int, float])"]),
    dict(name="arange", src="tensor_data_ops", body="custom", doc="ops_data",
         dtypes="any", computes="`out[i] = start + i * step` in C order",
         c=["hg_arange(const hg_tensor* out, double start, double step)"],
         args=["out: out!", "start: double = 0.0", "step: double = 1.0"]),
    dict(name="random", src="tensor_data_ops", body="custom", doc="ops_data", nreq=2,
         dtypes="floats", computes=["Philox uniform in [low, high)",
                                    "Philox normal: mean + std * N(0, 1)"],
         c=["hg_random_uniform(const hg_tensor* out, uint64_t seed, uint64_t offset, "
            "double low, double high)",
            "hg_random_normal(const hg_tensor* out, uint64_t seed, uint64_t offset, "
            "double mean, double std)"],
         args=["out: out!", "normal: bool = False", "seed: u64 = 0", "offset: u64 = 0",
               "a: double = 0.0", "b: double = 1.0"]),
    dict(name="dropout", src="tensor_data_ops", body="custom", doc="ops_data", nreq=1,
         dtypes="floats", computes="`x * mask / (1 - p)` and the bool mask, Philox, one pass",
         c=["hg_dropout(const hg_tensor* x, double p, uint64_t seed, uint64_t offset, "
            "hg_tensor* out, const hg_tensor* mask)"],
         args=["x: tensor", "p: double = 0.5", "seed: u64 = 0", "offset: u64 = 0",
               "out: out = None", "mask: tensor!? = None"],
         py=["dropout(x, p=, seed=, offset=, out=, mask: Optional[_C.Tensor]=)"]),
    dict(name="dropout_backward", src="tensor_data_ops", body="generated", doc="ops_data",
         dtypes="floats", computes="`grad * scale` where mask, `grad * 0` elsewhere",
         c=["hg_dropout_backward(const hg_tensor* grad, const hg_tensor* mask, double scale, "
            "hg_tensor* out)"],
         args=["grad: tensor", "mask: tensor", "scale: double = 1.0", "out: out = None"],
         py=["dropout_backward(grad, mask, scale=, out=)"]),
    dict(name="concat", src="tensor_data_ops", body="custom", doc="ops_data",
         dtypes="any (one dtype)", computes="numpy.concatenate along axis",
         c=["hg_concat(int32_t n, const hg_tensor* inputs, int32_t axis, hg_tensor* out)"],
         args=["tensors: tensors", "axis: int = 0", "out: out = None"],
         py=["concatenate(tensors, axis=, out=)", "stack(tensors, axis=, out=)"]),
    dict(name="index_select", src="tensor_data_ops", body="generated", doc="ops_data", nreq=3,
         dtypes="any (index: integers)", computes="numpy.take along one axis",
         c=["hg_index_select(const hg_tensor* x, int32_t axis, const hg_tensor* index, "
            "hg_tensor* out)"],
         args=["x: tensor", "axis: int = 0", "index: tensor", "out: out = None"],
         py=["index_select(x, axis, index, out=)",
             "take(x, index, axis: Optional[int]=None, out=)"]),
    dict(name="gather", src="tensor_data_ops", body="generated", doc="ops_data", nreq=3,
         dtypes="any (index: integers)", computes="torch.gather / numpy.take_along_axis",
         c=["hg_gather(const hg_tensor* x, int32_t axis, const hg_tensor* index, "
            "hg_tensor* out)"],
         args=["x: tensor", "axis: int = 0", "index: tensor", "out: out = None"],
         py=["gather(x, axis, index, out=)", "take_along_axis(x, index, axis, out=)"]),
    dict(name="index_add", src="tensor_data_ops", body="generated", doc="ops_data", nreq=4,
         dtypes="numeric, not bool", computes="`out[..., index[i], ...] += src[..., i, ...]`",
         c=["hg_index_add(const hg_tensor* out, int32_t axis, const hg_tensor* index, "
            "const hg_tensor* src)"],
         args=["out: out!", "axis: int = 0", "index: tensor", "src: tensor"],
         py=["index_add(out: _C.Tensor, axis, index, src)"]),
    dict(name="scatter_add", src="tensor_data_ops", body="generated", doc="ops_data", nreq=4,
         dtypes="numeric, not bool", computes="`out[index[i][j]][j] += src[i][j]` (axis 0)",
         c=["hg_scatter_add(const hg_tensor* out, int32_t axis, const hg_tensor* index, "
            "const hg_tensor* src)"],
         args=["out: out!", "axis: int = 0", "index: tensor", "src: tensor"],
         py=["scatter_add(out: _C.Tensor, axis, index, src)"]),
]

# The functions of include/hologram/ops.h that no record declares, with where their Python
# surface is instead. A function added to ops.h must be declared above or listed here
# (gen_ops.py --check fails naming it).
_FLAT = "a flat form of the product documents: hologram._C.ops (python/src/ops.c)"
ELSEWHERE = dict(
    {"hg_result_type": "no binding: the Python layer uses numpy's result_type",
     "hg_unary_op_name": "the keys of _C.unary_ops (the elementwise table UNARY_OPS)",
     "hg_binary_op_name": "the keys of _C.binary_ops (the elementwise table BINARY_OPS)",
     "hg_reduce_op_name": "the keys of _C.reduce_ops (the reductions above)"},
    **{f"hg_{n}": _FLAT for n in (
        "vector_add", "vector_sub", "vector_mul", "vector_div", "vector_min", "vector_max",
        "vector_abs", "vector_neg", "vector_relu", "vector_clip", "scalar_add", "scalar_mul",
        "vector_sigmoid", "vector_tanh", "vector_gelu", "vector_softmax", "reduce_sum",
        "reduce_min", "reduce_max", "mse_loss_flat", "cross_entropy_loss_flat",
        "binary_cross_entropy_loss_flat", "gemm_flat", "matvec_flat")})
