// Internal (attention): scaled_dot_product_attention's fused host kernel, the op's host
// override (src/composite/overrides.c; the decomposition in decomp_attention.c defines it).
#ifndef HG_OPS_ATTENTION_ATTENTION_H
#define HG_OPS_ATTENTION_ATTENTION_H
#include <stdatomic.h>
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

// The gradients of hg_attention_host (hg_scaled_dot_product_attention_backward's host
// override): grad_out, out and lse as the forward gave them (lse: (..., Hq, L) of the compute
// dtype, any strides), the same mask, causal and scale; grad_q, grad_k, grad_v with unit
// stride along their last dims. One task per key/value head: its gradients are zeroed, then
// every query head of its group and block of query rows adds to them (scores recomputed, the
// probabilities exp(score - lse)), so no two threads write the same rows.
// ts: q, k, v, grad_out, out and the gradients (n of them): f32 or f64, all of q's dtype.
int hg_attention_bw_host_ok(const hg_op_ctx* c, const hg_tensor* const* ts, int n);
hg_status hg_attention_bw_host(hg_op_ctx* c, const hg_tensor* q, const hg_tensor* k,
                               const hg_tensor* v, const hg_tensor* grad_out,
                               const hg_tensor* out, const hg_tensor* lse, const hg_tensor* mask,
                               int causal, double scale, const hg_tensor* grad_q,
                               const hg_tensor* grad_k, const hg_tensor* grad_v);

// The threads of a fused attention kernel: nw workers, each with scratch_bytes of scratch of
// its own (scratch + w * scratch_bytes), and the flag a failing task sets. First member of each
// kernel's job.
typedef struct hg_attn_par {
    unsigned char* scratch;
    size_t scratch_bytes;
    int nw;
    atomic_int failed;
} hg_attn_par;

// Runs worker(job, w) on par->nw workers (one below 2e5 flops: a wake-up costs microseconds;
// at most one per task), par->scratch_bytes of scratch each (set by the caller; S for the
// message when it cannot be had); frees the scratch. job starts with par.
hg_status hg_attn_parallel(hg_op_ctx* c, hg_attn_par* par, double flops, int64_t ntasks,
                           int64_t S, void (*worker)(void*, int), void* job);

// Per batch of q's leading dims (qshape[0, nl), C order): the element offset of t's matrix,
// t's dim d - lead holding q's leading dim d (missing or of size 1: broadcast, stride 0); the
// head dim (nl - 1) indexes head h / group (k and v of grouped heads; 1 elsewhere).
void hg_attn_batch_offsets(const int64_t* qshape, int32_t nl, const hg_host_view* t,
                           int32_t lead, int64_t group, int64_t nbatch, int64_t* out);

// Row i of a block's scores s[0, nk) (T float or double): the mask's row (mp: its element of
// key 0, NULL for none; cs: bytes between keys; bool: -inf where false, else added) and the
// causal bound (no key past i). Returns whether any key is left (a NaN counts: the row's
// result is NaN then).
#define HG_ATTN_MASK_ROW(name, T)                                                              \
    static int name(T* s, const unsigned char* mp, hg_dtype mdt, int64_t cs, int causal,       \
                    int64_t i, int64_t nk) {                                                   \
        if (mp) {                                                                              \
            if (mdt == HG_DTYPE_BOOL) {                                                        \
                for (int64_t t = 0; t < nk; t++)                                               \
                    if (!mp[t * cs]) s[t] = -INFINITY;                                         \
            } else {                                                                           \
                for (int64_t t = 0; t < nk; t++) s[t] += *(const T*)(mp + t * cs);             \
            }                                                                                  \
        }                                                                                      \
        if (causal)                                                                            \
            for (int64_t t = i + 1; t < nk; t++) s[t] = -INFINITY;                             \
        int live = 0;                                                                          \
        for (int64_t t = 0; t < nk; t++) live |= s[t] != -INFINITY;                            \
        return live;                                                                           \
    }

#endif
