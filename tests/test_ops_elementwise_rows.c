// Elementwise layouts that run as rows on host memory, grouped when the rows are short: an
// operand broadcast along the rows (x[rows, cols] op w[cols]), with and without outer blocks
// whose broadcast row or per-block value changes, row counts around a group's size (whole
// groups, the rows left, one row), a one-op kernel (hg_binary) and a fused one (hg_fma), in
// place, on every dtype class, against a float64 reference of the same exact integer data.
#include <stdio.h>
#include <stdlib.h>
#include "common/hg_test.h"
#include "hologram.h"

static hg_executor EX;
static uint64_t rng = 4242;

// A contiguous tensor of n small integers (exact in every dtype here) and its host copy.
static hg_tensor make(hg_dtype t, int32_t ndim, const int64_t* shape, double** host) {
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++) n *= shape[d];
    hg_buffer b = {0};
    hg_tensor out = {0};
    if (hg_buffer_create(EX, t, (size_t)n, &b)) return out;
    double* h = malloc(sizeof(double) * (size_t)(n ? n : 1));
    void* raw = malloc(8 * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        h[i] = (double)((int64_t)(hg_test_rand(&rng) % 41) - 20);
        if (t == HG_DTYPE_F32) ((float*)raw)[i] = (float)h[i];
        else if (t == HG_DTYPE_F64) ((double*)raw)[i] = h[i];
        else ((int32_t*)raw)[i] = (int32_t)h[i];
    }
    if (n) hg_buffer_write(b, 0, raw, (size_t)n);
    free(raw);
    hg_tensor_from_buffer(b, ndim, shape, &out);
    *host = h;
    return out;
}

static double read_at(const hg_tensor* t, int64_t i) {
    double v = 0;
    if (t->dtype == HG_DTYPE_F32) {
        float f;
        hg_buffer_read(t->buffer, (size_t)i, &f, 1);
        v = f;
    } else if (t->dtype == HG_DTYPE_F64) {
        hg_buffer_read(t->buffer, (size_t)i, &v, 1);
    } else {
        int32_t k;
        hg_buffer_read(t->buffer, (size_t)i, &k, 1);
        v = k;
    }
    return v;
}

// One case: x [blocks, rows, cols]; w [cols] (wkind 0), [blocks, 1, cols] (1) or
// [blocks, 1, 1] (2: one value per block). fused: out = x * w + x (hg_fma), else out = x + w
// (w first when w_first), in place into x when in_place.
static void run_case(hg_dtype t, int64_t blocks, int64_t rows, int64_t cols, int wkind,
                     int fused, int w_first, int in_place) {
    int64_t xs[3] = {blocks, rows, cols};
    int64_t ws[3] = {wkind ? blocks : cols, 1, wkind == 2 ? 1 : cols};
    int32_t wnd = wkind ? 3 : 1;
    double *hx = NULL, *hw = NULL;
    hg_tensor x = make(t, 3, xs, &hx), w = make(t, wnd, ws, &hw);
    hg_tensor out = x;
    hg_buffer ob = {0};
    int64_t n = blocks * rows * cols;
    if (!in_place) {
        hg_buffer_create(EX, t, (size_t)n, &ob);
        hg_tensor_from_buffer(ob, 3, xs, &out);
    }
    hg_status s = fused ? hg_fma(&x, &w, &x, &out)
                        : hg_binary(HG_BINARY_ADD, w_first ? &w : &x, w_first ? &x : &w, &out);
    CHECK_MSG(s == HG_OK, "%s %lldx%lldx%lld w%d: %s", fused ? "fma" : "add", (long long)blocks,
              (long long)rows, (long long)cols, wkind, hg_last_error());
    int bad = 0;
    for (int64_t i = 0; i < n && !s && bad < 3; i++) {
        int64_t c = i % cols, b = i / (rows * cols);
        double wv = wkind == 0 ? hw[c] : wkind == 1 ? hw[b * cols + c] : hw[b];
        double want = fused ? hx[i] * wv + hx[i] : hx[i] + wv, got = read_at(&out, i);
        if (got != want) {
            bad++;
            CHECK_MSG(0, "%s %s %lldx%lldx%lld w%d%s%s: element %lld = %g, want %g",
                      fused ? "fma" : "add", hg_dtype_name(t), (long long)blocks,
                      (long long)rows, (long long)cols, wkind, w_first ? " w first" : "",
                      in_place ? " in place" : "", (long long)i, got, want);
        }
    }
    if (!bad) hg_test_passed++;
    hg_buffer_destroy(x.buffer);
    hg_buffer_destroy(w.buffer);
    if (!in_place) hg_buffer_destroy(ob);
    free(hx);
    free(hw);
}

static void run_all(int on_device) {
    (void)on_device;
    static const int64_t cols_list[] = {1, 2, 3, 7, 8, 10, 31, 100, 1000, 2048, 2049, 3000};
    static const hg_dtype dtypes[] = {HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_I32};
    for (size_t ci = 0; ci < sizeof cols_list / sizeof *cols_list; ci++) {
        int64_t cols = cols_list[ci];
        int64_t k = 8192 / cols > 1 ? 8192 / cols : 1;   // rows per group (8192 lanes, <= 256 cols)
        // Around one and two groups, whichever size the kernel picks for its groups.
        const int64_t rows_list[] = {1, 2, k - 1, k, k + 1, 2 * k + 3};
        for (size_t ri = 0; ri < sizeof rows_list / sizeof *rows_list; ri++) {
            int64_t rows = rows_list[ri];
            if (rows < 1 || (ri > 1 && rows * cols > 40000 && ri != 5)) continue;
            for (int variant = 0; variant < 6; variant++) {
                hg_dtype t = dtypes[(ci + ri + (size_t)variant) % 3];
                int64_t blocks = variant < 2 ? 1 : 3;
                int wkind = variant < 2 ? 0 : variant - 2 < 3 ? variant - 2 : 0;
                int fused = variant % 2 == 1 && t != HG_DTYPE_I32 ? 1 : 0;
                run_case(t, blocks, rows, cols, wkind, fused, variant == 4, variant == 5);
            }
        }
    }
}

int main(void) { return hg_test_run_executors("test_ops_elementwise_rows", &EX, run_all); }
