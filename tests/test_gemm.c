// hg_cpu_sgemm against a double-precision triple loop: all four transpose combinations,
// alpha/beta (beta = 0 over a NaN-filled C must not read it), odd and prime sizes, sizes around
// every blocking boundary (MR, NR, KC, MC, NC), padded leading dimensions, empty products, with
// and without a thread pool, for every micro-kernel set this CPU runs.
#include <math.h>
#include <stdint.h>
#include "backends/cpu/gemm/gemm.h"
#include "backends/cpu/thread_pool.h"
#include "hg_test.h"

#if defined(__SANITIZE_ADDRESS__)
#define HG_TEST_SMALL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HG_TEST_SMALL 1
#endif
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float rnd(void) { return (float)(hg_test_rand(&rng) >> 40) * 0x1p-23f - 1.0f; }

// op(X)(i, j) of a row-major X with leading dimension ld.
static float at(const float* x, int64_t ld, int trans, int64_t i, int64_t j) {
    return trans ? x[j * ld + i] : x[i * ld + j];
}

typedef struct gcase {
    int64_t m, n, k;
    int64_t pad;  // extra elements in every leading dimension
} gcase;

// Runs one product and compares every element of C (and that padding is untouched).
static int run_case(const hg_sgemm_kernel* kern, const char* kname, int ta, int tb, gcase g, float alpha,
                    float beta, hg_pool* pool) {
    int64_t m = g.m, n = g.n, k = g.k;
    int64_t ar = ta ? k : m, acn = ta ? m : k;  // stored shape of A
    int64_t br = tb ? n : k, bcn = tb ? k : n;
    int64_t lda = acn + g.pad, ldb = bcn + g.pad, ldc = n + g.pad;
    size_t na = (size_t)(ar * lda) + 1, nb = (size_t)(br * ldb) + 1, nc = (size_t)(m * ldc) + 1;
    float* a = malloc(na * sizeof(float));
    float* b = malloc(nb * sizeof(float));
    float* c = malloc(nc * sizeof(float));
    float* c0 = malloc(nc * sizeof(float));
    if (!a || !b || !c || !c0) {
        free(a); free(b); free(c); free(c0);
        CHECK_MSG(0, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < na; i++) a[i] = rnd();
    for (size_t i = 0; i < nb; i++) b[i] = rnd();
    for (size_t i = 0; i < nc; i++) c[i] = beta == 0.0f ? NAN : rnd();
    // Padding columns of C hold a marker that must survive.
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = n; j < ldc; j++) c[i * ldc + j] = 12345.0f;
    memcpy(c0, c, nc * sizeof(float));
    if (kern) hg_cpu_sgemm_with(kern, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
    else hg_cpu_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
    int bad = 0;
    for (int64_t i = 0; i < m && bad < 3; i++) {
        for (int64_t j = 0; j < ldc && bad < 3; j++) {
            float got = c[i * ldc + j];
            if (j >= n) {
                if (got != 12345.0f) {
                    bad++;
                    CHECK_MSG(0, "%s ta=%d tb=%d %lldx%lldx%lld: padding C[%lld][%lld] changed", kname,
                              ta, tb, (long long)m, (long long)n, (long long)k, (long long)i, (long long)j);
                }
                continue;
            }
            double s = 0.0, mag = 0.0;
            for (int64_t p = 0; p < k; p++) {
                double t = (double)at(a, lda, ta, i, p) * (double)at(b, ldb, tb, p, j);
                s += t;
                mag += fabs(t);
            }
            double ref = (double)alpha * s, tol = 1e-5 * fabs((double)alpha) * mag + 1e-6;
            if (beta != 0.0f) {
                ref += (double)beta * c0[i * ldc + j];
                tol += 1e-6 * fabs((double)beta * c0[i * ldc + j]);
            }
            if (!(fabs((double)got - ref) <= tol)) {
                bad++;
                CHECK_MSG(0, "%s ta=%d tb=%d %lldx%lldx%lld pad=%lld alpha=%g beta=%g pool=%d: C[%lld][%lld] = %.9g, want %.9g (tol %.3g)",
                          kname, ta, tb, (long long)m, (long long)n, (long long)k, (long long)g.pad,
                          alpha, beta, pool != NULL, (long long)i, (long long)j, got, ref, tol);
            }
        }
    }
    if (!bad) CHECK(1);
    free(a); free(b); free(c); free(c0);
    return bad == 0;
}

// Both builds of the skinny kernels directly (hg_cpu_sgemm takes the one this CPU runs): S is
// m x k with strides (s_rs, s_cs), L is k x n in the rows or dots layout, C has strides
// (c_rs, c_cs); compared with a double loop.
static void skinny_kernel_case(const char* kname, hg_sgemm_skinny_rows_fn rows,
                               hg_sgemm_skinny_dots_fn dots, int m, int64_t n,
                               int64_t k, float beta) {
    int64_t s_rs = k + 3, ldl = (dots ? k : n) + 2, c_rs = 1, c_cs = m + 1;
    float* s = malloc((size_t)(m * s_rs) * sizeof(float));
    float* l = malloc((size_t)((dots ? n : k) * ldl) * sizeof(float));
    float* c = malloc((size_t)(n * c_cs) * sizeof(float));
    float* c0 = malloc((size_t)(n * c_cs) * sizeof(float));
    if (!s || !l || !c || !c0) {
        free(s); free(l); free(c); free(c0);
        CHECK_MSG(0, "out of memory");
        return;
    }
    for (int64_t i = 0; i < m * s_rs; i++) s[i] = rnd();
    for (int64_t i = 0; i < (dots ? n : k) * ldl; i++) l[i] = rnd();
    for (int64_t i = 0; i < n * c_cs; i++) c[i] = beta == 0.0f ? NAN : rnd();
    memcpy(c0, c, (size_t)(n * c_cs) * sizeof(float));
    const float* srow[HG_SGEMM_SKINNY_GROUP];
    for (int i = 0; i < m; i++) srow[i] = s + i * s_rs;
    if (dots) dots(m, n, k, 1.5f, srow, l, ldl, beta, c, c_rs, c_cs);
    else rows(m, n, k, 1.5f, s, s_rs, 1, l, ldl, beta, c, c_rs, c_cs);
    int bad = 0;
    for (int i = 0; i < m && !bad; i++)
        for (int64_t j = 0; j < n && !bad; j++) {
            double t = 0.0, mag = 0.0;
            for (int64_t p = 0; p < k; p++) {
                double lv = dots ? l[j * ldl + p] : l[p * ldl + j];
                t += (double)s[i * s_rs + p] * lv;
                mag += fabs((double)s[i * s_rs + p] * lv);
            }
            double ref = 1.5 * t, tol = 1e-5 * 1.5 * mag + 1e-6;
            float* o = c + i * c_rs + j * c_cs;
            if (beta != 0.0f) {
                ref += (double)beta * c0[o - c];
                tol += 1e-6 * fabs((double)c0[o - c]);
            }
            if (!(fabs((double)*o - ref) <= tol)) {
                bad = 1;
                CHECK_MSG(0, "skinny %s %s m=%d n=%lld k=%lld beta=%g: C[%d][%lld] = %.9g, want %.9g",
                          kname, dots ? "dots" : "rows", m, (long long)n, (long long)k, beta, i,
                          (long long)j, *o, ref);
            }
        }
    if (!bad) CHECK(1);
    free(s); free(l); free(c); free(c0);
}

static void skinny_kernels(void) {
    const char* names[] = {"generic", "avx2"};
    int sets_run = 0;
    for (size_t si = 0; si < 2; si++) {
        const hg_sgemm_skinny_set* set = hg_cpu_sgemm_skinny_set_named(names[si]);
        if (!set) continue;
        sets_run++;
        // 4099: past the rows layout's column block for every M (4096 / M columns).
        const int64_t ns[] = {1, 7, 8, 33, 1030, 2051, 4099};
        const int64_t ks[] = {1, 3, 4, 15, 16, 17, 70};
        for (int m = 1; m <= HG_SGEMM_SKINNY_GROUP; m++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++)
                    for (int d = 0; d < 2; d++)
                        skinny_kernel_case(set->name, set->rows, d ? set->dots : NULL, m, ns[a],
                                           ks[b], (a + b) & 1 ? 0.5f : 0.0f);
    }
    CHECK(sets_run >= 1);
    CHECK(hg_cpu_sgemm_skinny_set_named(NULL) != NULL);
    CHECK(hg_cpu_sgemm_skinny_set_named("nonexistent") == NULL);
    // The AVX2 and AVX-512 sets (where this CPU has them) carry the narrow kernels the products
    // above used.
    const hg_sgemm_skinny_set* s512 = hg_cpu_sgemm_skinny_set_named("avx512");
    const hg_sgemm_skinny_set* s2 = hg_cpu_sgemm_skinny_set_named("avx2");
    if (s512) CHECK(s512->narrow != NULL && hg_cpu_sgemm_skinny_set_named(NULL) == s512);
    if (s2) CHECK(s2->narrow != NULL);
}

int main(void) {
    hg_pool* pool = hg_pool_create(2);
    CHECK(pool != NULL);
    const char* names[] = {"generic", "avx2", "avx512"};
    const gcase small[] = {
        {1, 1, 1, 0}, {37, 53, 29, 0}, {1, 257, 3, 0}, {255, 1, 511, 0}, {0, 5, 7, 0}, {5, 0, 7, 0},
        {5, 7, 0, 0}, {6, 16, 1, 0}, {5, 15, 2, 0}, {7, 17, 3, 0}, {12, 32, 8, 3}, {13, 33, 9, 5},
        {11, 31, 64, 1}, {64, 64, 64, 0}, {100, 3, 1, 2}, {3, 100, 100, 7},
    };
    // Around KC = 256, MC = 144 and a 2-thread split.
    const gcase mid[] = {
        {6, 16, 255, 0}, {6, 16, 256, 0}, {7, 17, 257, 1}, {143, 40, 100, 0}, {144, 48, 64, 0},
        {145, 49, 513, 2}, {289, 33, 20, 0}, {47, 95, 97, 3},
        // Around the 8 x 32 AVX-512 tile and its KC of 256.
        {8, 32, 256, 0}, {9, 65, 257, 1}, {97, 63, 300, 0}, {95, 96, 511, 2},
    };
#ifndef HG_TEST_SMALL
    // Around NC = 4096 and a long, skinny product.
    const gcase big[] = {{7, 4097, 30, 0}, {13, 4111, 259, 1}, {300, 290, 280, 0}};
    const int nbig = (int)(sizeof big / sizeof big[0]);
#else
    const gcase big[] = {{7, 4097, 30, 0}};
    const int nbig = 1;
#endif
    const float ab[][2] = {{1.0f, 0.0f}, {0.5f, 1.0f}, {-2.0f, 0.25f}, {0.0f, 2.0f}, {1.0f, -1.0f}};
    int kernels_run = 0;
    for (int ki = 0; ki < 3; ki++) {
        const hg_sgemm_kernel* kern = hg_cpu_sgemm_kernel_named(names[ki]);
        if (!kern) continue;
        kernels_run++;
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
                    for (size_t v = 0; v < sizeof ab / sizeof ab[0]; v++)
                        for (int pl = 0; pl < 2; pl++)
                            run_case(kern, names[ki], ta, tb, small[i], ab[v][0], ab[v][1], pl ? pool : NULL);
                for (size_t i = 0; i < sizeof mid / sizeof mid[0]; i++)
                    for (int pl = 0; pl < 2; pl++)
                        run_case(kern, names[ki], ta, tb, mid[i], i & 1 ? 0.75f : 1.0f,
                                 i & 2 ? 0.0f : 0.5f, pl ? pool : NULL);
                for (int i = 0; i < nbig; i++)
                    run_case(kern, names[ki], ta, tb, big[i], 1.0f, i & 1 ? 1.0f : 0.0f, i & 1 ? NULL : pool);
            }
    }
    CHECK(kernels_run >= 1);
    // The AVX-512 set reads a row-major A in place (the cases above with ta = 0 ran that path).
    const hg_sgemm_kernel* k512 = hg_cpu_sgemm_kernel_named("avx512");
    if (k512) CHECK(k512->fn_lda != NULL);
    CHECK(hg_cpu_sgemm_kernel_named(NULL) != NULL);
    CHECK(hg_cpu_sgemm_kernel_named("nonexistent") == NULL);
    // The public entry point (default kernel set), split over the pool and not.
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            run_case(NULL, "default", ta, tb, (gcase){96, 200, 300, 1}, 1.0f, 0.0f, pool);
            run_case(NULL, "default", ta, tb, (gcase){203, 61, 150, 0}, -1.5f, 0.5f, NULL);
        }
    // Skinny products through the default entry point: up to SKINNY_MAX rows or SKINNY_COLS_MAX
    // columns, each transpose combination, padded, with and without the pool (2 threads split
    // the columns once the product is large enough), and one past each limit (packed path).
    const gcase skinny[] = {
        {1, 1, 1, 0}, {1, 300, 70, 1}, {2, 1000, 33, 0}, {3, 17, 5, 2}, {4, 1030, 257, 0},
        {5, 64, 31, 1}, {8, 2000, 300, 0}, {13, 77, 9, 3}, {16, 129, 130, 0}, {17, 40, 20, 0},
        {300, 1, 70, 1}, {1000, 2, 33, 0}, {64, 10, 256, 0}, {70, 12, 1100, 2}, {40, 13, 20, 0},
        {1, 4, 1, 0}, {5, 3, 2, 1},
        // Narrow C (up to 16 columns, at least as many rows; AVX2 and AVX-512 CPUs take the
        // unpacked narrow kernel when A and B are not transposed): blocks of 8 rows (AVX-512),
        // 6 and 12 (AVX2) and their remainders, 8 and 16 columns, square C, k = 1, and a
        // product large enough for the 2-thread row split.
        {9, 8, 5, 1}, {23, 16, 17, 3}, {17, 16, 1, 0}, {67, 15, 64, 2}, {1000, 16, 200, 0},
        {2003, 7, 300, 1}, {16, 16, 16, 0}, {7, 7, 9, 2}, {12, 12, 1, 1}, {8, 8, 300, 3},
        {13, 5, 9, 1}, {25, 8, 4, 0}, {11, 9, 3, 2}, {30, 10, 256, 0},
        // Small products over 16-column panels (up to 64 columns, up to 2^20 m*n*k): partial
        // panels, 17 rows, and one past each limit (packed path).
        {17, 17, 17, 0}, {48, 48, 48, 1}, {64, 64, 64, 2}, {40, 33, 100, 3}, {128, 64, 128, 0},
        {100, 64, 170, 1}, {30, 65, 30, 0},
    };
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (size_t i = 0; i < sizeof skinny / sizeof skinny[0]; i++)
                for (int pl = 0; pl < 2; pl++)
                    run_case(NULL, "default-skinny", ta, tb, skinny[i], i & 1 ? -0.5f : 1.0f,
                             i & 2 ? 0.75f : 0.0f, pl ? pool : NULL);
    skinny_kernels();
    hg_pool_destroy(pool);
    return hg_test_finish("gemm");
}
