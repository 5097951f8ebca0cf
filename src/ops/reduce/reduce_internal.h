// Internal to src/ops/reduce*.c: accumulation domains, kernel ops and accumulators.
#ifndef HG_OPS_REDUCE_INTERNAL_H
#define HG_OPS_REDUCE_INTERNAL_H
#include <stdint.h>
#include "hologram.h"
#include "ops/reduce/reduce.h"

// What elements are converted to before they are accumulated.
typedef enum hg_red_dom {
    HG_RED_F32 = 0,   // float (sum/mean of f32, f16, bf16 over runs)
    HG_RED_F64,       // double (every other float op, integer mean/var/std/logsumexp, any/all)
    HG_RED_KEY,       // int64 order keys (min/max/argmin/argmax of integers and bool)
    HG_RED_WRAP,      // uint64 with wrap-around (sum/prod of integers and bool)
} hg_red_dom;

// The kernel-level operation (mean, var, std and logsumexp are two of these plus a finalize).
typedef enum hg_red_kop {
    HG_RK_SUM = 0, HG_RK_PROD, HG_RK_MIN, HG_RK_MAX, HG_RK_ARGMIN, HG_RK_ARGMAX, HG_RK_ANY,
    HG_RK_ALL,
    HG_RK_SQDEV,      // sum of (x - center)^2
    HG_RK_SUMEXP,     // sum of exp(x - center)
} hg_red_kop;

typedef struct hg_red_acc {
    double f;         // float domains
    uint64_t u;       // integer domains (KEY: int64 bits), any/all flag
    int64_t idx;      // argmin/argmax: flat reduced index, -1 before the first element
} hg_red_acc;

void hg_red_init(hg_red_kop k, hg_red_acc* a);
// a := a (op) b, where b covers later reduced indices than a.
void hg_red_combine(hg_red_kop k, hg_red_dom dom, hg_red_acc* a, const hg_red_acc* b);
// Strided elements p[i*st], i < n, of dtype dt in the domain: p itself when it already is, else
// converted into buf (n elements of 8 bytes at most).
const void* hg_red_load(hg_red_dom dom, hg_dtype dt, const void* p, int64_t st, int64_t n,
                        void* buf);
void hg_red_run(hg_red_kop k, hg_red_dom dom, hg_red_acc* a, const void* d, int64_t n,
                int64_t idx0, double center);
void hg_red_row(hg_red_kop k, hg_red_dom dom, double* f, uint64_t* u, int64_t* idx,
                const void* d, int64_t K, int64_t ridx, const double* centers);

#endif
