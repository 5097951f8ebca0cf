// Reduction driver: layout normalization, the "runs" and "rows" walks, work split over the
// executor's threads, two-pass var/std/logsumexp and the store into out (see reduce.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_ops.h"
#include "ops/reduce/reduce_internal.h"
#include "ops/common/op_dispatch.h"

#define RED_CHUNK 1024          // elements converted at a time along a run
#define RED_ROW_CHUNK 8192      // widest column band of the "rows" walk (several pages per row)
// Below this many elements one thread does all the work, and a split of one output's range
// keeps at least this many per piece: where 2 threads woken from sleep stop losing to one
// (docs/performance.md).
#define RED_MIN_PARALLEL 262144
// The same inside a plan (hg_op_ctx.threads_awake: the previous step left the workers
// spinning): a layer norm's row statistics over 4 x 64 x 256 f32 on both threads made BERT's
// forward 1.06x faster (docs/performance.md, 2026-11-29 sixth session).
#define RED_MIN_PARALLEL_AWAKE 32768

hg_status hg_reduce_dtype(hg_reduce_op op, hg_dtype x, hg_dtype* out) {
    if ((int)op < 0 || op >= HG_REDUCE_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "reduction op %d is out of range (valid: 0..%d)",
                        (int)op, HG_REDUCE_COUNT - 1);
    if ((int)x < 0 || x >= HG_DTYPE_COUNT)
        return hg_error(HG_ERR_DTYPE_MISMATCH, "dtype %d is not a valid dtype", (int)x);
    int fl = hg_dtype_is_float((int)x);
    switch (op) {
    case HG_REDUCE_SUM: case HG_REDUCE_PROD:
        *out = fl ? x : hg_dtype_is_unsigned_int((int)x) ? HG_DTYPE_U64 : HG_DTYPE_I64;
        break;
    case HG_REDUCE_MEAN: case HG_REDUCE_VAR: case HG_REDUCE_STD: case HG_REDUCE_LOGSUMEXP:
        *out = fl ? x : HG_DTYPE_F64;
        break;
    case HG_REDUCE_MIN: case HG_REDUCE_MAX: *out = x; break;
    case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX: *out = HG_DTYPE_I64; break;
    default: *out = HG_DTYPE_BOOL; break;   // any, all
    }
    return HG_OK;
}

typedef struct red_plan {
    int nk, nr;                                       // kept / reduced dims after normalizing
    int64_t ks[HG_MAX_DIMS], kx[HG_MAX_DIMS], ko[HG_MAX_DIMS];
    int64_t rs[HG_MAX_DIMS], rx[HG_MAX_DIMS];
    int64_t M, N;                                     // outputs, elements per output
    const unsigned char* x;
    unsigned char* o;
    hg_dtype xdt, odt;
    int64_t xsz, osz;
} red_plan;

static void sort_dims(int n, int64_t* size, int64_t* xs, int64_t* os) {
    for (int i = 1; i < n; i++)   // insertion sort by |x stride|, largest first (stable)
        for (int j = i; j > 0 && llabs(xs[j - 1]) < llabs(xs[j]); j--) {
            int64_t t = size[j]; size[j] = size[j - 1]; size[j - 1] = t;
            t = xs[j]; xs[j] = xs[j - 1]; xs[j - 1] = t;
            if (os) { t = os[j]; os[j] = os[j - 1]; os[j - 1] = t; }
        }
}

static int merge_dims(int n, int64_t* size, int64_t* xs, int64_t* os) {
    int w = 0;
    for (int i = 1; i < n; i++) {
        if (xs[w] == xs[i] * size[i] && (!os || os[w] == os[i] * size[i])) {
            size[w] *= size[i];
            xs[w] = xs[i];
            if (os) os[w] = os[i];
        } else {
            w++;
            size[w] = size[i]; xs[w] = xs[i];
            if (os) os[w] = os[i];
        }
    }
    return n ? w + 1 : 0;
}

static void build_plan(const hg_host_view* xv, const hg_host_view* ov, uint32_t mask,
                       int c_order, red_plan* p) {
    memset(p, 0, sizeof *p);
    p->x = xv->data; p->o = ov->data;
    p->xdt = xv->dtype; p->odt = ov->dtype;
    p->xsz = (int64_t)hg_dtype_size(xv->dtype); p->osz = (int64_t)hg_dtype_size(ov->dtype);
    p->M = 1; p->N = 1;
    int keep = ov->ndim == xv->ndim, oi = 0;
    for (int d = 0; d < xv->ndim; d++) {
        int64_t s = xv->shape[d];
        if (mask & (1u << d)) {
            if (keep) oi++;
            p->N *= s;
            if (s != 1) { p->rs[p->nr] = s; p->rx[p->nr] = xv->strides[d]; p->nr++; }
        } else {
            int64_t os = ov->strides[oi++];
            p->M *= s;
            if (s != 1) {
                p->ks[p->nk] = s; p->kx[p->nk] = xv->strides[d]; p->ko[p->nk] = os;
                p->nk++;
            }
        }
    }
    if (p->M == 0 || p->N == 0) {   // nothing is read; keep the dims as they are
        if (p->nr == 0) { p->rs[0] = 1; p->nr = 1; }
        return;
    }
    // Kept dims: any order and direction (the output follows them).
    for (int i = 0; i < p->nk; i++)
        if (p->kx[i] < 0) {
            p->x += (p->ks[i] - 1) * p->kx[i] * p->xsz;
            p->o += (p->ks[i] - 1) * p->ko[i] * p->osz;
            p->kx[i] = -p->kx[i]; p->ko[i] = -p->ko[i];
        }
    sort_dims(p->nk, p->ks, p->kx, p->ko);
    p->nk = merge_dims(p->nk, p->ks, p->kx, p->ko);
    // Reduced dims: argmin/argmax need the C order of their flat index; the others may walk
    // memory in any order.
    if (!c_order) {
        for (int i = 0; i < p->nr; i++)
            if (p->rx[i] < 0) {
                p->x += (p->rs[i] - 1) * p->rx[i] * p->xsz;
                p->rx[i] = -p->rx[i];
            }
        sort_dims(p->nr, p->rs, p->rx, NULL);
    }
    p->nr = merge_dims(p->nr, p->rs, p->rx, NULL);
    if (p->nr == 0) { p->rs[0] = 1; p->rx[0] = 0; p->nr = 1; }
}

// Element offsets of kept index m over kept dims [0, nd) and of flat reduced index r.
static int64_t kept_off(const red_plan* p, int nd, int64_t m, const int64_t* strides) {
    // The outermost dim takes what is left of m: no division there (none at all for one kept
    // dim, the usual case; divisions were a third of a sum along rows of 16).
    int64_t off = 0;
    for (int d = nd - 1; d >= 1; d--) { off += (m % p->ks[d]) * strides[d]; m /= p->ks[d]; }
    return nd > 0 ? off + m * strides[0] : off;
}

typedef struct red_job {
    const red_plan* p;
    hg_reduce_op op;
    hg_red_kop k;
    hg_red_dom dom;
    hg_dtype rdt;
    double ddof;
    int rows;                 // 1: innermost dim kept ("rows"), 0: reduced ("runs")
    int sum_rows;             // runs of an f32 sum, one contiguous row per output (red_worker)
    int f32_store;            // f32 sum or mean into f32: finish() is a conversion (red_worker)
    int64_t K, KC, nchunks;   // rows: inner kept size, chunk width, chunks per outer output
    int64_t items, units;
    int S;                    // splits of each item's reduced range
    int nw;                   // workers (set by hg_op_parallel before they start)
    hg_red_acc* partial;      // S > 1: per unit (runs) or per unit and column (rows)
    const double* centers;    // second pass of var/std/logsumexp: per linear output
    double* dst_lin;          // first pass: per linear output (mean or max)
    unsigned char* scratch;
    size_t scratch_bytes;
} red_job;

static void store_int(hg_dtype odt, void* p, uint64_t bits, int is_unsigned) {
    switch (odt) {
    case HG_DTYPE_BOOL: *(uint8_t*)p = bits != 0; break;
    case HG_DTYPE_I8: case HG_DTYPE_U8: *(uint8_t*)p = (uint8_t)bits; break;
    case HG_DTYPE_I16: case HG_DTYPE_U16: *(uint16_t*)p = (uint16_t)bits; break;
    case HG_DTYPE_I32: case HG_DTYPE_U32: *(uint32_t*)p = (uint32_t)bits; break;
    case HG_DTYPE_I64: case HG_DTYPE_U64: memcpy(p, &bits, 8); break;
    default:
        hg_op_store_f64(odt, p, is_unsigned ? (double)bits : (double)(int64_t)bits);
        break;
    }
}

// The result is rounded to the result dtype first, then converted to out's dtype (numpy
// computes in the result dtype and casts).
static void store_float(hg_dtype rdt, hg_dtype odt, void* p, double v) {
    if (odt == HG_DTYPE_F32 && rdt == HG_DTYPE_F32) {   // the usual case, without the dtype switch
        float x = (float)v;
        memcpy(p, &x, sizeof x);
        return;
    }
    if (odt != rdt) {
        uint64_t tmp = 0;
        hg_op_store_f64(rdt, &tmp, v);
        v = hg_op_load_f64(rdt, &tmp);
    }
    hg_op_store_f64(odt, p, v);
}

static void finish(const red_job* j, int64_t lin, const hg_red_acc* a, unsigned char* optr) {
    const red_plan* p = j->p;
    double n = (double)p->N;
    if (j->dst_lin) {   // first pass of var/std (mean) or logsumexp (max)
        j->dst_lin[lin] = j->k == HG_RK_SUM ? a->f / n : a->f;
        return;
    }
    int ints = j->dom == HG_RED_WRAP || j->dom == HG_RED_KEY;
    switch (j->op) {
    case HG_REDUCE_SUM: case HG_REDUCE_PROD:
        if (ints) store_int(p->odt, optr, a->u, j->rdt == HG_DTYPE_U64);
        else store_float(j->rdt, p->odt, optr, a->f);
        break;
    case HG_REDUCE_MEAN: store_float(j->rdt, p->odt, optr, a->f / n); break;
    case HG_REDUCE_MIN: case HG_REDUCE_MAX:
        if (!ints) store_float(j->rdt, p->odt, optr, a->f);
        else if (p->xdt == HG_DTYPE_U64) store_int(p->odt, optr, a->u ^ 0x8000000000000000ull, 1);
        else store_int(p->odt, optr, a->u, 0);
        break;
    case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX:
        store_int(p->odt, optr, (uint64_t)a->idx, 0);
        break;
    case HG_REDUCE_VAR: case HG_REDUCE_STD: {
        double div = n - j->ddof;   // numpy: max(n - ddof, 0)
        double v = a->f / (div > 0 ? div : 0.0);
        store_float(j->rdt, p->odt, optr, j->op == HG_REDUCE_STD ? sqrt(v) : v);
        break;
    }
    case HG_REDUCE_LOGSUMEXP: {
        double c = j->centers[lin];
        store_float(j->rdt, p->odt, optr, isfinite(c) ? c + log(a->f) : c);
        break;
    }
    default: store_int(p->odt, optr, a->u, 0); break;   // any, all
    }
}

static int is_direct(hg_red_dom dom, hg_dtype dt, int64_t st) {
    if (st != 1) return 0;
    switch (dom) {
    case HG_RED_F32: return dt == HG_DTYPE_F32;
    case HG_RED_F64: return dt == HG_DTYPE_F64;
    case HG_RED_KEY: return dt == HG_DTYPE_I64;
    default: return dt == HG_DTYPE_I64 || dt == HG_DTYPE_U64;
    }
}

// Whether any byte of p[0, n) is nonzero (an OR the compiler vectorizes).
static int any_byte(const unsigned char* p, int64_t n) {
    unsigned char r = 0;
    for (int64_t i = 0; i < n; i++) r |= p[i];
    return r != 0;
}

// "Runs": output m over flat reduced indices [a, b), the innermost reduced dim contiguous runs.
static void unit_runs(const red_job* j, int64_t m, int64_t a, int64_t b, hg_red_acc* acc,
                      void* buf) {
    const red_plan* p = j->p;
    if (a >= b) return;   // nothing reduced (an empty x may have no memory: p->x NULL)
    const unsigned char* xb = p->x + kept_off(p, p->nk, m, p->kx) * p->xsz;
    int nr = p->nr;
    int64_t L = p->rs[nr - 1], st = p->rx[nr - 1];
    double center = j->centers ? j->centers[m] : 0.0;
    int direct = is_direct(j->dom, p->xdt, st);
    // any / all of contiguous bytes (bool masks): the bytes tested as they are, not loaded
    // into doubles (a mask's rows of 64: ~2x torch's time before)
    int bytes = (j->k == HG_RK_ANY || j->k == HG_RK_ALL) && st == 1 &&
                (p->xdt == HG_DTYPE_BOOL || p->xdt == HG_DTYPE_U8 || p->xdt == HG_DTYPE_I8);
    for (int64_t pos = a; pos < b;) {
        int64_t outer = nr == 1 ? 0 : pos / L, j0 = nr == 1 ? pos : pos % L;
        int64_t len = L - j0 < b - pos ? L - j0 : b - pos;
        int64_t off = j0 * st;
        for (int d = nr - 2; d >= 0; d--) {
            off += (outer % p->rs[d]) * p->rx[d];
            outer /= p->rs[d];
        }
        const unsigned char* ptr = xb + off * p->xsz;
        if (bytes) {
            if (j->k == HG_RK_ANY) acc->u |= (uint64_t)any_byte(ptr, len);
            else acc->u &= (uint64_t)(memchr(ptr, 0, (size_t)len) == NULL);
            pos += len;
            continue;
        }
        int64_t step = direct ? len : RED_CHUNK;
        for (int64_t c0 = 0; c0 < len; c0 += step) {
            int64_t cl = len - c0 < step ? len - c0 : step;
            const void* d = hg_red_load(j->dom, p->xdt, ptr + c0 * st * p->xsz, st, cl, buf);
            hg_red_run(j->k, j->dom, acc, d, cl, pos + c0, center);
        }
        pos += len;
    }
}

// "Rows": columns [c0, c0 + kc) of outer output oi over flat reduced indices [a, b).
static void unit_rows(const red_job* j, int64_t oi, int64_t c0, int64_t kc, int64_t a,
                      int64_t b, double* f, uint64_t* u, int64_t* idx, float* tmp, void* buf) {
    const red_plan* p = j->p;
    int nk = p->nk, nr = p->nr;
    int64_t st = p->kx[nk - 1];
    // An empty x may have no memory (p->x NULL): no pointer arithmetic on it then.
    const unsigned char* xb = a < b ? p->x + (kept_off(p, nk - 1, oi, p->kx) + c0 * st) * p->xsz : NULL;
    // f32 sums of contiguous rows: blocks of 16 rows in f32 lanes, then added into f64.
    int fast = j->k == HG_RK_SUM && j->dom == HG_RED_F32 && p->xdt == HG_DTYPE_F32 && st == 1;
    hg_red_acc init;
    hg_red_init(j->k, &init);
    if (fast && j->f32_store && j->S == 1)   // red_worker's store reads f only
        memset(f, 0, (size_t)kc * sizeof *f);
    else
        for (int64_t c = 0; c < kc; c++) { f[c] = init.f; u[c] = init.u; idx[c] = init.idx; }
    const double* centers = j->centers ? j->centers + oi * j->K + c0 : NULL;
    int64_t ri[HG_MAX_DIMS], off = 0, t = a;
    for (int d = nr - 1; d >= 0 && a < b; d--) {
        ri[d] = t % p->rs[d];
        t /= p->rs[d];
        off += ri[d] * p->rx[d];
    }
    hg_red_dom dom = j->dom == HG_RED_F32 ? HG_RED_F64 : j->dom;
    int inblock = 0;
    const float* rp[16];
    for (int64_t r = a; r < b; r++) {
        const unsigned char* row = xb + off * p->xsz;
        if (fast) {
            // Rows are taken 4 at a time (4 memory streams, a quarter of the tmp traffic).
            rp[inblock++] = (const float*)row;
            if (inblock == 16 || r + 1 == b) {
                hg_reduce_colsum_block_f32(rp, inblock, kc, tmp, f);
                inblock = 0;
            }
        } else {
            const void* d = hg_red_load(dom, p->xdt, row, st, kc, buf);
            hg_red_row(j->k, dom, f, u, idx, d, kc, r, centers);
        }
        for (int d = nr - 1; d >= 0; d--) {
            off += p->rx[d];
            if (++ri[d] < p->rs[d]) break;
            off -= p->rx[d] * p->rs[d];
            ri[d] = 0;
        }
    }
}

static void red_worker(void* ctx, int w) {
    red_job* j = ctx;
    const red_plan* p = j->p;
    unsigned char* sc = j->scratch + (size_t)w * j->scratch_bytes;
    void* buf = sc;
    // Layout: loader buffer, then (rows) f, u, idx and the f32 block sums, each of width w8.
    size_t w8 = (size_t)(j->rows && j->KC > RED_CHUNK ? j->KC : RED_CHUNK) * 8;
    double* f = (double*)(sc + w8);
    uint64_t* u = (uint64_t*)(sc + 2 * w8);
    int64_t* idx = (int64_t*)(sc + 3 * w8);
    float* tmp = (float*)(sc + 4 * w8);
    int64_t u0 = j->units * w / j->nw, u1 = j->units * (w + 1) / j->nw;
    if (j->sum_rows) {
        // f32 sums of whole contiguous rows, evenly spaced: many rows per kernel call.
        double* sums = (double*)buf;
        int64_t batch = RED_CHUNK;
        for (int64_t m = u0; m < u1; m += batch) {
            int64_t cnt = u1 - m < batch ? u1 - m : batch;
            hg_reduce_sum_rows_f32((const float*)p->x + m * p->kx[0], p->kx[0], cnt, p->N, sums);
            for (int64_t i = 0; i < cnt; i++) {
                hg_red_acc acc = {sums[i], 0, -1};
                finish(j, m + i, &acc, p->o + (m + i) * p->ko[0] * p->osz);
            }
        }
        return;
    }
    for (int64_t un = u0; un < u1; un++) {
        int64_t item = un / j->S, s = un % j->S;
        int64_t a = p->N * s / j->S, b = p->N * (s + 1) / j->S;
        if (!j->rows) {
            hg_red_acc acc;
            hg_red_init(j->k, &acc);
            unit_runs(j, item, a, b, &acc, buf);
            if (j->S > 1) j->partial[un] = acc;
            else finish(j, item, &acc, p->o + kept_off(p, p->nk, item, p->ko) * p->osz);
            continue;
        }
        int64_t oi = item / j->nchunks, c0 = item % j->nchunks * j->KC;
        int64_t kc = j->K - c0 < j->KC ? j->K - c0 : j->KC;
        unit_rows(j, oi, c0, kc, a, b, f, u, idx, tmp, buf);
        int64_t ko = p->ko[p->nk - 1];
        unsigned char* ob = p->o + (kept_off(p, p->nk - 1, oi, p->ko) + c0 * ko) * p->osz;
        if (j->f32_store && j->S == 1) {   // finish()'s f32 sum / mean without a call per
            // column (~4 ns each, where summing 2 rows costs ~0.3 ns a column)
            float* o32 = (float*)ob;
            double n = j->op == HG_REDUCE_MEAN ? (double)p->N : 1.0;
            if (j->op == HG_REDUCE_MEAN)
                for (int64_t c = 0; c < kc; c++) o32[c * ko] = (float)(f[c] / n);
            else
                for (int64_t c = 0; c < kc; c++) o32[c * ko] = (float)f[c];
            continue;
        }
        for (int64_t c = 0; c < kc; c++) {
            hg_red_acc acc = {f[c], u[c], idx[c]};
            if (j->S > 1) j->partial[un * j->KC + c] = acc;
            else finish(j, oi * j->K + c0 + c, &acc, ob + c * ko * p->osz);
        }
    }
}

static hg_status run_pass(hg_op_ctx* c, red_job* j) {
    const red_plan* p = j->p;
    int T = hg_op_num_threads(c);
    double work = (double)p->M * (double)p->N;
    int nw = work < (c->threads_awake ? RED_MIN_PARALLEL_AWAKE : RED_MIN_PARALLEL) ? 1 : T;
    int nk = p->nk;
    j->rows = nk > 0 && llabs(p->rx[p->nr - 1]) > llabs(p->kx[nk - 1]);
    if (j->rows) {
        j->K = p->ks[nk - 1];
        int64_t outer = p->M / j->K;
        // Whole rows (up to RED_ROW_CHUNK) per unit: with few outputs the workers split the
        // reduced dims instead, so each one streams through contiguous memory.
        j->KC = j->K < RED_ROW_CHUNK ? j->K : RED_ROW_CHUNK;
        j->nchunks = (j->K + j->KC - 1) / j->KC;
        j->items = outer * j->nchunks;
    } else {
        j->items = p->M;
    }
    j->S = 1;
    // Fewer items than workers: split each item's reduced range too (one range per worker),
    // as long as every piece keeps enough work.
    if (nw > 1 && j->items < nw) {
        int64_t s = (nw + j->items - 1) / j->items;
        int64_t cap = p->N * (j->rows ? j->KC : 1) / RED_MIN_PARALLEL;
        if (s > cap) s = cap;
        j->S = s < 1 ? 1 : (int)s;
    }
    j->units = j->items * j->S;
    j->f32_store = (j->op == HG_REDUCE_SUM || j->op == HG_REDUCE_MEAN) && !j->dst_lin &&
                   j->dom == HG_RED_F32 && j->rdt == HG_DTYPE_F32 && p->odt == HG_DTYPE_F32;
    j->sum_rows = !j->rows && j->S == 1 && j->k == HG_RK_SUM && j->dom == HG_RED_F32 &&
                  p->xdt == HG_DTYPE_F32 && nk == 1 && p->nr == 1 && p->rx[0] == 1 && p->N > 0;
    if ((int64_t)nw > j->units) nw = (int)(j->units ? j->units : 1);
    j->nw = nw;
    // Sized to the walk: small enough to come from the heap (no fresh pages to clear per call).
    size_t w8 = (size_t)(j->rows && j->KC > RED_CHUNK ? j->KC : RED_CHUNK) * 8;
    j->scratch_bytes = j->rows ? w8 * 4 + w8 / 2 + 64 : w8 + 64;
    j->scratch = malloc(j->scratch_bytes * (size_t)nw);
    size_t np = j->S > 1 ? (size_t)j->units * (size_t)(j->rows ? j->KC : 1) : 0;
    j->partial = np ? malloc(np * sizeof(hg_red_acc)) : NULL;
    hg_status s = HG_OK;
    if (!j->scratch || (np && !j->partial)) {
        s = hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for the reduction's work space", c->fn);
    } else if (j->units > 0) {
        s = hg_op_parallel(c, nw, red_worker, j, &j->nw);
    }
    if (!s && j->S > 1) {   // combine the splits in index order, then store
        int64_t cols = j->rows ? j->KC : 1;
        for (int64_t item = 0; item < j->items; item++) {
            int64_t oi = j->rows ? item / j->nchunks : item;
            int64_t c0 = j->rows ? item % j->nchunks * j->KC : 0;
            int64_t kc = j->rows ? (j->K - c0 < j->KC ? j->K - c0 : j->KC) : 1;
            for (int64_t col = 0; col < kc; col++) {
                hg_red_acc acc = j->partial[item * j->S * cols + col];
                for (int sp = 1; sp < j->S; sp++)
                    hg_red_combine(j->k, j->dom, &acc,
                                   &j->partial[(item * j->S + sp) * cols + col]);
                int64_t lin, ooff;
                if (j->rows) {
                    lin = oi * j->K + c0 + col;
                    ooff = kept_off(p, p->nk - 1, oi, p->ko) + (c0 + col) * p->ko[p->nk - 1];
                } else {
                    lin = item;
                    ooff = kept_off(p, p->nk, item, p->ko);
                }
                finish(j, lin, &acc, p->o + ooff * p->osz);
            }
        }
    }
    free(j->scratch);
    free(j->partial);
    j->scratch = NULL;
    j->partial = NULL;
    return s;
}

static hg_red_dom dom_for(hg_reduce_op op, hg_dtype dt) {
    int fl = hg_dtype_is_float((int)dt);
    switch (op) {
    case HG_REDUCE_SUM: return fl ? (dt == HG_DTYPE_F64 ? HG_RED_F64 : HG_RED_F32) : HG_RED_WRAP;
    case HG_REDUCE_MEAN: return dt == HG_DTYPE_F64 || !fl ? HG_RED_F64 : HG_RED_F32;
    case HG_REDUCE_PROD: return fl ? HG_RED_F64 : HG_RED_WRAP;
    case HG_REDUCE_MIN: case HG_REDUCE_MAX: case HG_REDUCE_ARGMIN: case HG_REDUCE_ARGMAX:
        return fl ? HG_RED_F64 : HG_RED_KEY;
    default: return HG_RED_F64;
    }
}

static const hg_red_kop kop_of[HG_REDUCE_COUNT] = {
    [HG_REDUCE_SUM] = HG_RK_SUM, [HG_REDUCE_MEAN] = HG_RK_SUM, [HG_REDUCE_PROD] = HG_RK_PROD,
    [HG_REDUCE_MIN] = HG_RK_MIN, [HG_REDUCE_MAX] = HG_RK_MAX, [HG_REDUCE_ARGMIN] = HG_RK_ARGMIN,
    [HG_REDUCE_ARGMAX] = HG_RK_ARGMAX, [HG_REDUCE_VAR] = HG_RK_SQDEV,
    [HG_REDUCE_STD] = HG_RK_SQDEV, [HG_REDUCE_LOGSUMEXP] = HG_RK_SUMEXP,
    [HG_REDUCE_ANY] = HG_RK_ANY, [HG_REDUCE_ALL] = HG_RK_ALL,
};
_Static_assert(HG_REDUCE_COUNT == 12, "kop_of needs an entry per reduction op");

hg_status hg_reduce_into(hg_op_ctx* c, hg_reduce_op op, const hg_tensor* x, uint32_t axes_mask,
                         double ddof, const hg_tensor* out) {
    if (hg_op_route_of(c, HG_OPF_REDUCE, x->dtype) == HG_ROUTE_DEVICE)
        return hg_dev_reduce_into(c, op, x, axes_mask, ddof, out);
    hg_dtype rdt;
    hg_status s = hg_reduce_dtype(op, x->dtype, &rdt);
    if (s) return hg_error_prefix(s, "%s", c->fn);
    hg_host_view xv, ov;
    if ((s = hg_op_host_view(c, x, &xv)) || (s = hg_op_host_view(c, out, &ov))) return s;
    if (ov.ndim != xv.ndim && ov.ndim + __builtin_popcount(axes_mask) != xv.ndim)
        return hg_error(HG_ERR_INTERNAL, "%s: out has %d dims for a reduction of %d of %d dims",
                        c->fn, (int)ov.ndim, __builtin_popcount(axes_mask), (int)xv.ndim);
    int arg = op == HG_REDUCE_ARGMIN || op == HG_REDUCE_ARGMAX;
    red_plan p;
    build_plan(&xv, &ov, axes_mask, arg, &p);
    if (p.N == 0 &&
        (arg || op == HG_REDUCE_MIN || op == HG_REDUCE_MAX))
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "%s: %s of an empty reduction (the reduced dims have 0 elements) has no "
                        "identity; numpy raises here too", c->fn, hg_reduce_op_name(op));
    if (p.M == 0) return HG_OK;
    red_job j;
    memset(&j, 0, sizeof j);
    j.p = &p;
    j.op = op;
    j.rdt = rdt;
    j.ddof = ddof;
    if (op == HG_REDUCE_VAR || op == HG_REDUCE_STD || op == HG_REDUCE_LOGSUMEXP) {
        double* centers = malloc((size_t)p.M * sizeof(double));
        if (!centers)
            return hg_error(HG_ERR_OUT_OF_MEMORY, "%s: no memory for %lld intermediate values",
                            c->fn, (long long)p.M);
        j.k = op == HG_REDUCE_LOGSUMEXP ? HG_RK_MAX : HG_RK_SUM;   // mean or max first
        j.dom = HG_RED_F64;
        j.dst_lin = centers;
        s = run_pass(c, &j);
        if (!s) {
            j.k = kop_of[op];
            j.dst_lin = NULL;
            j.centers = centers;
            s = run_pass(c, &j);
        }
        free(centers);
        return s;
    }
    j.k = kop_of[op];
    j.dom = dom_for(op, x->dtype);
    return run_pass(c, &j);
}
