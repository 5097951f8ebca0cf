// The CPU engine's shortcuts for elementwise kernels: the `i < n` guard decided per chunk, the
// `if` that then takes every lane without masks, a guard whose if runs to the end cutting the
// chunk's tail off, constant registers kept filled between launches, and %gid.x lanes that
// are only written when read. Each program below mixes those shortcuts with what must still work under them (else,
// break and exit inside the guarded if, the guard's result read again, %gid.x used as a
// value), on sizes that cover whole chunks, partial chunks and several threads, and compares
// with the same computation in C.
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "hg_test.h"

// y[i] = (i < n) ? f(i, x[i]) : untouched, with f exercising else / loop+break / exit.
static const char* k_mixed =
    ".kernel mixed\n"
    ".param x: global const f32\n.param y: global f32\n.param n: u32\n"
    ".reg u32 i, j, k\n.reg f32 v, w\n.reg bool p, q, odd, stop\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        ld.global.f32 v, x[i]\n"
    "        and.u32 j, i, 1\n"
    "        cmp.eq.u32 odd, j, 1\n"
    "        if odd\n"
    "            cvt.f32.u32 w, i\n"          // %gid.x used as a value
    "            add.f32 v, v, w\n"
    "        else\n"
    "            mov.u32 k, 0\n"
    "            loop\n"                       // v *= 2, (i % 4) times, with a break
    "                and.u32 j, i, 3\n"
    "                cmp.ge.u32 stop, k, j\n"
    "                break stop\n"
    "                mul.f32 v, v, 2.0\n"
    "                add.u32 k, k, 1\n"
    "            endloop\n"
    "        endif\n"
    "        and.u32 j, i, 7\n"
    "        cmp.eq.u32 q, j, 6\n"
    "        if q\n"
    "            exit\n"                       // lanes with i % 8 == 6 store nothing
    "        endif\n"
    "        st.global.f32 y[i], v\n"
    "    endif\n";

static float mixed_ref(uint32_t i, float v) {
    if (i & 1) return v + (float)i;
    for (uint32_t k = 0; k < (i & 3); k++) v *= 2.0f;
    return v;
}

// The guard's result is read again after the if (so it must be materialized).
static const char* k_reuse =
    ".kernel reuse\n"
    ".param y: global u8\n.param n: u32\n"
    ".reg u32 i\n.reg u8 b\n.reg bool p\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        mov.u8 b, 7\n"
    "    endif\n"
    "    cvt.u8.bool b, p\n"
    "    cmp.lt.u32 p, i, 1000000000\n"      // in bounds for every lane: p stays true
    "    if p\n"
    "        add.u8 b, b, 1\n"
    "    endif\n"
    "    st.global.u8 y[i], b\n";

static void run_mixed(hg_executor ex, hg_program prog, uint32_t n, uint32_t total) {
    float* x = malloc(sizeof(float) * total);
    float* y = malloc(sizeof(float) * total);
    for (uint32_t i = 0; i < total; i++) x[i] = (float)(i % 97) * 0.25f - 3.0f;
    hg_buffer bx, by;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, total, &bx));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, total, &by));
    CHECK_OK(hg_buffer_write(bx, 0, x, total));
    CHECK_OK(hg_buffer_fill(by, -1.0));
    hg_arg args[] = {hg_arg_buffer(bx), hg_arg_buffer(by), hg_arg_u32(n)};
    hg_launch_config cfg = hg_launch_1d(total, 256);
    CHECK_OK(hg_launch(ex, prog, &cfg, args, 3));
    CHECK_OK(hg_buffer_read(by, 0, y, total));
    int bad = 0;
    for (uint32_t i = 0; i < total && bad < 5; i++) {
        float want = (i < n && (i & 7) != 6) ? mixed_ref(i, x[i]) : -1.0f;
        if (y[i] != want) {
            bad++;
            fprintf(stderr, "mixed n=%u total=%u: y[%u] = %g, want %g\n", n, total, i, y[i], want);
        }
    }
    CHECK(bad == 0);
    hg_buffer_destroy(bx);
    hg_buffer_destroy(by);
    free(x);
    free(y);
}

static void run_reuse(hg_executor ex, hg_program prog, uint32_t n, uint32_t lanes) {
    // The store is unguarded: size the buffer to the whole grid.
    uint32_t total = (lanes + 127) / 128 * 128;
    uint8_t* y = malloc(total);
    hg_buffer by;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_U8, total, &by));
    hg_arg args[] = {hg_arg_buffer(by), hg_arg_u32(n)};
    hg_launch_config cfg = hg_launch_1d(total, 128);
    CHECK_OK(hg_launch(ex, prog, &cfg, args, 2));
    CHECK_OK(hg_buffer_read(by, 0, y, total));
    int bad = 0;
    for (uint32_t i = 0; i < total && bad < 5; i++) {
        uint8_t want = (uint8_t)((i < n) + 1);
        if (y[i] != want) {
            bad++;
            fprintf(stderr, "reuse n=%u: y[%u] = %u, want %u\n", n, i, y[i], want);
        }
    }
    CHECK(bad == 0);
    hg_buffer_destroy(by);
    free(y);
}

// Guards whose failing lanes still have work: an else part, and a store after the endif.
// Only a guard whose if runs to the end of the program may cut the chunk's tail off.
static const char* k_after =
    ".kernel after\n"
    ".param y: global u32\n.param z: global u32\n.param n: u32\n"
    ".reg u32 i, v\n.reg bool p, q\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        st.global.u32 y[i], i\n"
    "    else\n"
    "        add.u32 v, i, 7\n"
    "        st.global.u32 y[i], v\n"
    "    endif\n"
    "    cmp.lt.u32 q, i, n\n"
    "    if q\n"
    "        add.u32 v, i, 1\n"
    "    endif\n"
    "    st.global.u32 z[i], i\n";

static void run_after(hg_executor ex, hg_program prog, uint32_t n, uint32_t lanes) {
    uint32_t total = (lanes + 127) / 128 * 128;   // every lane stores: size to the grid
    uint32_t* y = malloc(sizeof(uint32_t) * total);
    uint32_t* z = malloc(sizeof(uint32_t) * total);
    hg_buffer by, bz;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_U32, total, &by));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_U32, total, &bz));
    hg_arg args[] = {hg_arg_buffer(by), hg_arg_buffer(bz), hg_arg_u32(n)};
    hg_launch_config cfg = hg_launch_1d(total, 128);
    CHECK_OK(hg_launch(ex, prog, &cfg, args, 3));
    CHECK_OK(hg_buffer_read(by, 0, y, total));
    CHECK_OK(hg_buffer_read(bz, 0, z, total));
    int bad = 0;
    for (uint32_t i = 0; i < total && bad < 5; i++) {
        uint32_t want = i < n ? i : i + 7;
        if (y[i] != want || z[i] != i) {
            bad++;
            fprintf(stderr, "after n=%u: y[%u] = %u (want %u), z = %u\n", n, i, y[i], want, z[i]);
        }
    }
    CHECK(bad == 0);
    hg_buffer_destroy(by);
    hg_buffer_destroy(bz);
    free(y);
    free(z);
}

// Back-to-back launches that differ only in a scalar parameter (the bound) or in the program:
// each worker keeps its constant registers filled between launches, and must refill them
// whenever a value, the plan or the chunk differs.
static void run_refills(hg_executor ex, hg_program mixed, hg_program after) {
    const uint32_t total = 70000;
    const uint32_t bounds[] = {total, total - 1, 5, total, 0, 69000, 69000, total};
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        run_mixed(ex, mixed, bounds[b], total);
        if (b % 2) run_after(ex, after, bounds[b] / 2, total);
    }
}

// One straight-line run with f64 and i32 work. Bound with `out` = a fresh buffer the run is
// strip-mined; bound with `out` = `b` its store overlaps its load and it runs op by op. Both
// must give the same results.
static const char* k_strips =
    ".kernel strips\n"
    ".param a: global const f64\n.param b: global f64\n.param out: global f64\n"
    ".param c: global i32\n.param n: u32\n"
    ".reg u32 i\n.reg f64 x, y\n.reg i32 k\n.reg bool p\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        ld.global.f64 x, a[i]\n"
    "        ld.global.f64 y, b[i]\n"
    "        fma.f64 y, x, y, 1.0\n"
    "        mul.f64 x, y, x\n"
    "        st.global.f64 out[i], x\n"
    "        cvt.i32.f64 k, x\n"
    "        add.i32 k, k, 3\n"
    "        st.global.i32 c[i], k\n"
    "    endif\n";

static void run_strips(hg_executor ex, hg_program prog, uint32_t n, int in_place) {
    double* a = malloc(sizeof(double) * n);
    double* b = malloc(sizeof(double) * n);
    double* out = malloc(sizeof(double) * n);
    int32_t* c = malloc(sizeof(int32_t) * n);
    uint64_t seed = n;
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (double)(hg_test_rand(&seed) % 4001) / 1000.0 - 2.0;
        b[i] = (double)(hg_test_rand(&seed) % 4001) / 1000.0 - 2.0;
    }
    hg_buffer ba, bb, bo, bc;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, n, &ba));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, n, &bb));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F64, n, &bo));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I32, n, &bc));
    CHECK_OK(hg_buffer_write(ba, 0, a, n));
    CHECK_OK(hg_buffer_write(bb, 0, b, n));
    hg_arg args[] = {hg_arg_buffer(ba), hg_arg_buffer(bb), hg_arg_buffer(in_place ? bb : bo),
                     hg_arg_buffer(bc), hg_arg_u32(n)};
    hg_launch_config cfg = hg_launch_1d(n, 256);
    if (n % 256 == 0) {
        CHECK_OK(hg_launch(ex, prog, &cfg, args, 5));
        CHECK_OK(hg_buffer_read(in_place ? bb : bo, 0, out, n));
        CHECK_OK(hg_buffer_read(bc, 0, c, n));
        int bad = 0;
        for (uint32_t i = 0; i < n && bad < 5; i++) {
            double y = fma(a[i], b[i], 1.0), x = y * a[i];
            if (out[i] != x || c[i] != (int32_t)x + 3) {
                bad++;
                fprintf(stderr, "strips n=%u in_place=%d: [%u] = %g %d, want %g %d\n", n, in_place,
                        i, out[i], c[i], x, (int32_t)x + 3);
            }
        }
        CHECK(bad == 0);
    }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bo);
    hg_buffer_destroy(bc);
    free(a);
    free(b);
    free(out);
    free(c);
}

// ---- fused f32 pairs in strip-mined runs ----------------------------------------------------
// t = OP1(x, B); [ld u]; t = OP2(t, C); [tail]; y[i] = t for every pair of add sub mul min max,
// with B a lane array or an immediate and C a lane array or a scalar parameter, the second op
// either feeding the store directly or followed by another op, and a load between the two.
// Inputs include NaN, +-0 and +-inf; results must equal the two ops run in C bit for bit
// (any NaN for NaN).
static const char* const k_pair_ops[5] = {"add", "sub", "mul", "min", "max"};

static float ref_minmax(float x, float y, int is_max) {
    if (isnan(x)) return x;
    if (isnan(y)) return y;
    if (x == y) {
        uint32_t a, b, r;
        memcpy(&a, &x, 4);
        memcpy(&b, &y, 4);
        r = is_max ? (a & b) : (a | b);
        float f;
        memcpy(&f, &r, 4);
        return f;
    }
    return is_max ? (x > y ? x : y) : (x < y ? x : y);
}

static float ref_op(int op, float x, float y) {
    switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    default: return ref_minmax(x, y, op == 4);
    }
}

static void run_pairs(hg_executor ex) {
    enum { N = 3072 };  // one launch of N lanes, all in bounds: strip-mined (several strips)
    static float a[N], b[N], c[N], y[N];
    const float specials[] = {NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1.0f, -1.5f, 1e30f};
    uint64_t seed = 99;
    for (int i = 0; i < N; i++) {
        float* arr[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            uint64_t r = hg_test_rand(&seed);
            arr[k][i] = r % 5 == 0 ? specials[(r >> 8) % 8]
                                   : (float)((int64_t)(r >> 16) % 20001 - 10000) / 512.0f;
        }
    }
    hg_buffer ba, bb, bc, by;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &ba));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &bb));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &bc));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &by));
    CHECK_OK(hg_buffer_write(ba, 0, a, N));
    CHECK_OK(hg_buffer_write(bb, 0, b, N));
    CHECK_OK(hg_buffer_write(bc, 0, c, N));
    const float imm = -0.75f, param = 2.5f;
    int failures = 0;
    for (int o1 = 0; o1 < 5; o1++)
        for (int o2 = 0; o2 < 5; o2++)
            for (int shape = 0; shape < 16; shape++) {
                int kb = shape & 1, kc = (shape >> 1) & 1, tail = (shape >> 2) & 1,
                    ld_between = (shape >> 3) & 1;
                char text[1024];
                snprintf(text, sizeof text,
                         ".kernel pair\n.param a: global const f32\n.param b: global const f32\n"
                         ".param c: global const f32\n.param y: global f32\n.param n: u32\n"
                         ".param s: f32\n.reg u32 i\n.reg f32 x, t, u\n.reg bool p\n"
                         "    mov.u32 i, %%gid.x\n    cmp.lt.u32 p, i, n\n    if p\n"
                         "        ld.global.f32 x, a[i]\n        ld.global.f32 t, b[i]\n"
                         "%s"
                         "        %s.f32 t, x, %s\n"
                         "%s"
                         "        %s.f32 t, t, %s\n"
                         "%s"
                         "        st.global.f32 y[i], t\n    endif\n",
                         ld_between ? "" : "        ld.global.f32 u, c[i]\n", k_pair_ops[o1],
                         kb ? "-0.75" : "t",
                         ld_between ? "        ld.global.f32 u, c[i]\n" : "", k_pair_ops[o2],
                         kc ? "s" : "u", tail ? "        add.f32 t, t, 0.25\n" : "");
                hg_program prog;
                CHECK_OK(hg_program_parse(text, strlen(text), &prog));
                hg_arg args[6] = {hg_arg_buffer(ba), hg_arg_buffer(bb), hg_arg_buffer(bc),
                                  hg_arg_buffer(by), hg_arg_u32(N), hg_arg_f32(param)};
                hg_launch_config cfg = hg_launch_1d(N, 256);
                CHECK_OK(hg_launch(ex, prog, &cfg, args, 6));
                CHECK_OK(hg_buffer_read(by, 0, y, N));
                hg_program_destroy(prog);
                int bad = 0;
                for (int i = 0; i < N; i++) {
                    float t = ref_op(o1, a[i], kb ? imm : b[i]);
                    t = ref_op(o2, t, kc ? param : c[i]);
                    if (tail) t = t + 0.25f;
                    int same = isnan(t) ? isnan(y[i]) : memcmp(&t, &y[i], 4) == 0;
                    if (!same && !bad++ && failures++ < 5)
                        fprintf(stderr, "pair %s/%s shape %d: [%d] = %a, want %a\n",
                                k_pair_ops[o1], k_pair_ops[o2], shape, i, (double)y[i], (double)t);
                }
                CHECK(bad == 0);
            }
    hg_buffer_destroy(ba);
    hg_buffer_destroy(bb);
    hg_buffer_destroy(bc);
    hg_buffer_destroy(by);
}

int main(void) {
    const int threads[] = {1, 2, 3};
    // Whole chunks in bounds, a bound inside a chunk, a bound on a chunk edge, tiny launches.
    const uint32_t cases[][2] = {{40000, 40000}, {40000, 40960}, {12288, 16384}, {4095, 4097},
                                 {1, 256}, {0, 512}, {100000, 100352}};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        hg_executor_options o = {HG_BACKEND_CPU, 0, threads[t]};
        hg_executor ex;
        CHECK_OK(hg_executor_create_ex(&o, &ex));
        hg_program mixed, reuse;
        CHECK_OK(hg_program_parse(k_mixed, strlen(k_mixed), &mixed));
        CHECK_OK(hg_program_parse(k_reuse, strlen(k_reuse), &reuse));
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            run_mixed(ex, mixed, cases[c][0], cases[c][1]);
            run_reuse(ex, reuse, cases[c][0], cases[c][1]);
        }
        hg_program after;
        CHECK_OK(hg_program_parse(k_after, strlen(k_after), &after));
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            run_after(ex, after, cases[c][0], cases[c][1]);
        run_refills(ex, mixed, after);
        hg_program_destroy(after);
        hg_program strips;
        CHECK_OK(hg_program_parse(k_strips, strlen(k_strips), &strips));
        const uint32_t sizes[] = {256, 65536, 65536 + 512, 3 * 65536 + 4096, 1024 * 1000};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int in_place = 0; in_place < 2; in_place++)
                run_strips(ex, strips, sizes[k], in_place);
        // An out-of-bounds store into an empty range says so (and writes nothing).
        hg_buffer guard;
        CHECK_OK(hg_buffer_create(ex, HG_DTYPE_U8, 128, &guard));
        hg_arg eargs[] = {hg_arg_buffer_range(guard, 64, 0), hg_arg_u32(128)};
        hg_launch_config ecfg = hg_launch_1d(128, 128);
        CHECK_STATUS(hg_launch(ex, reuse, &ecfg, eargs, 2), HG_ERR_OUT_OF_BOUNDS);
        CHECK_MSG(strstr(hg_last_error(), "it is empty") != NULL, "%s", hg_last_error());
        uint8_t gb[128];
        CHECK_OK(hg_buffer_read(guard, 0, gb, 128));
        int touched = 0;
        for (int i = 0; i < 128; i++) touched |= gb[i];
        CHECK(touched == 0);
        hg_buffer_destroy(guard);
        run_pairs(ex);
        hg_program_destroy(strips);
        hg_program_destroy(mixed);
        hg_program_destroy(reuse);
        hg_executor_destroy(ex);
    }
    return hg_test_finish("test_cpu_fastpaths");
}
