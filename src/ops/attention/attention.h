// Internal (attention): scaled_dot_product_attention's fused host kernel, the op's host
// override (src/composite/overrides.c; the decomposition in decomp_attention.c defines it).
#ifndef HG_OPS_ATTENTION_ATTENTION_H
#define HG_OPS_ATTENTION_ATTENTION_H
#include "hologram.h"
#include "ops/common/op_common.h"

// Whether the kernel takes these tensors (checked by the op's entry): f32 or f64 q, k, v and
// out with unit stride along their last dim (or a last dim of one element), on a backend with
// host products (hg_op_host_gemm_ok); the mask any strides.
int hg_attention_host_ok(const hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                         const hg_tensor* v, const hg_tensor* out);

// out = softmax(q k^T * scale + mask) v as hg_scaled_dot_product_attention defines it, for a
// block of query rows at a time: the block's scores (at most 64 rows x S, per worker) are
// computed by one product, masked, turned into probabilities in place and multiplied by v into
// out's rows; lse (NULL, or (..., Hq, L) of the compute dtype, any strides) gets each row's
// logsumexp (0 for a row attending nothing). q, k, v, mask (NULL or bool or q's dtype,
// broadcastable to the scores), out and lse checked and resolved by the caller.
hg_status hg_attention_host(hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                            const hg_tensor* v, const hg_tensor* mask, int causal, double scale,
                            const hg_tensor* out, const hg_tensor* lse);

#endif
