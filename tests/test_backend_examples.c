// The example programs (and a few kernels for launch features) on the backend named by
// HG_TEST_BACKEND, compared with the CPU backend on the same inputs: vector_add and fused_chain
// bit for bit, block_reduce (shared memory, barriers) and tiled_matmul (shared tiles, 2-D
// launches) bit for bit too (both backends sum in the same order), plus an unsized shared array
// sized by the launch, an `exit` under divergence, and an out-of-bounds access that must fail
// with HG_ERR_OUT_OF_BOUNDS naming the lane and the instruction (CUDA: the launch returns
// HG_OK and the next hg_executor_synchronize reports it, docs/cuda.md). Exits 77 (skipped) when
// HG_TEST_BACKEND is unset, "cpu" or unavailable; tests/CMakeLists.txt runs it on the CUDA
// backend's host emulation.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hg_test.h"

static hg_executor g_cpu, g_dev;
static char g_devmsg[1024];   // the device launch's error message
static hg_status g_dev_launch;   // the device launch's own status (before the synchronize)

static hg_program load_example(const char* name) {
    const char* src = getenv("HG_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/%s.hasm", src ? src : ".", name);
    size_t len = 0;
    char* text = hg_test_read_file(path, &len);
    hg_program p = {0};
    CHECK_MSG(text != NULL, "cannot read %s", path);
    if (text) CHECK_OK(hg_program_parse(text, len, &p));
    free(text);
    return p;
}

static hg_program parse(const char* text) {
    hg_program p = {0};
    CHECK_OK(hg_program_parse(text, strlen(text), &p));
    return p;
}

// One argument for both executors: a buffer of `count` elements with host contents `host`
// (NULL: zeros), or a scalar.
typedef struct targ {
    int is_buf;
    hg_dtype dt;
    size_t count;
    const void* host;
    uint64_t bits;
} targ;

// Runs prog on the CPU and on the device with the same arguments; compares every buffer
// bit for bit. Returns the device launch status.
static hg_status run_both(const char* label, hg_program prog, hg_launch_config cfg,
                          const targ* args, size_t nargs, int compare) {
    hg_buffer bc[8] = {{0}}, bd[8] = {{0}};
    hg_arg ac[8], ad[8];
    for (size_t i = 0; i < nargs; i++) {
        if (!args[i].is_buf) {
            ac[i] = ad[i] = hg_arg_scalar(args[i].dt, args[i].bits);
            continue;
        }
        CHECK_OK(hg_buffer_create(g_cpu, args[i].dt, args[i].count, &bc[i]));
        CHECK_OK(hg_buffer_create(g_dev, args[i].dt, args[i].count, &bd[i]));
        if (args[i].host) {
            CHECK_OK(hg_buffer_write(bc[i], 0, args[i].host, args[i].count));
            CHECK_OK(hg_buffer_write(bd[i], 0, args[i].host, args[i].count));
        }
        ac[i] = hg_arg_buffer(bc[i]);
        ad[i] = hg_arg_buffer(bd[i]);
    }
    hg_status sc = hg_launch(g_cpu, prog, &cfg, ac, nargs);
    // CUDA launches are asynchronous: their errors come from the next synchronizing call.
    hg_status sd = g_dev_launch = hg_launch(g_dev, prog, &cfg, ad, nargs);
    if (sd == HG_OK) sd = hg_executor_synchronize(g_dev);
    snprintf(g_devmsg, sizeof g_devmsg, "%s", hg_last_error());
    if (compare) {
        CHECK_MSG(sc == HG_OK, "%s: cpu launch: %s", label, hg_status_string(sc));
        CHECK_MSG(sd == HG_OK, "%s: device launch: %s: %s", label, hg_status_string(sd), g_devmsg);
    }
    for (size_t i = 0; i < nargs && compare && sc == HG_OK && sd == HG_OK; i++) {
        if (!args[i].is_buf) continue;
        size_t bytes = args[i].count * hg_dtype_size(args[i].dt);
        unsigned char* hc = malloc(bytes + 1);
        unsigned char* hd = malloc(bytes + 1);
        CHECK_OK(hg_buffer_read(bc[i], 0, hc, args[i].count));
        CHECK_OK(hg_buffer_read(bd[i], 0, hd, args[i].count));
        CHECK_MSG(memcmp(hc, hd, bytes) == 0, "%s: argument %zu differs between cpu and device",
                  label, i);
        free(hc);
        free(hd);
    }
    for (size_t i = 0; i < nargs; i++) {
        if (bc[i].handle) hg_buffer_destroy(bc[i]);
        if (bd[i].handle) hg_buffer_destroy(bd[i]);
    }
    return sd;
}

static float* randf(size_t n, unsigned seed) {
    float* v = malloc(n * sizeof *v + 4);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        v[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 4.0 - 2.0);
    }
    return v;
}

static void test_examples(void) {
    const size_t n = 5003;
    float *a = randf(n, 1), *b = randf(n, 2), *c = randf(n, 3);
    hg_program p = load_example("vector_add");
    targ va[] = {{1, HG_DTYPE_F32, n, a, 0}, {1, HG_DTYPE_F32, n, b, 0}, {1, HG_DTYPE_F32, n, NULL, 0},
                 {0, HG_DTYPE_U32, 0, NULL, n}};
    run_both("vector_add", p, hg_launch_1d(n, 128), va, 4, 1);
    hg_program_destroy(p);
    p = load_example("fused_chain");
    targ fa[] = {{1, HG_DTYPE_F32, n, a, 0}, {1, HG_DTYPE_F32, n, b, 0}, {1, HG_DTYPE_F32, n, c, 0},
                 {1, HG_DTYPE_F32, n, NULL, 0}, {0, HG_DTYPE_U32, 0, NULL, n}};
    run_both("fused_chain", p, hg_launch_1d(n, 256), fa, 5, 1);
    hg_program_destroy(p);
    // block_reduce: one partial sum per block of 256 (shared memory tree + barriers).
    p = load_example("block_reduce");
    size_t blocks = (n + 255) / 256;
    targ ra[] = {{1, HG_DTYPE_F32, n, a, 0}, {1, HG_DTYPE_F32, blocks, NULL, 0},
                 {0, HG_DTYPE_U32, 0, NULL, n}};
    run_both("block_reduce", p, hg_launch_1d(n, 256), ra, 3, 1);
    hg_program_destroy(p);
    // tiled_matmul: C[M x N] = A[M x K] B[K x N] with 16 x 16 tiles on a 2-D grid.
    p = load_example("tiled_matmul");
    const uint32_t M = 37, N = 21, K = 29;
    float *ma = randf(M * K, 4), *mb = randf(K * N, 5);
    targ ma_args[] = {{1, HG_DTYPE_F32, M * K, ma, 0}, {1, HG_DTYPE_F32, K * N, mb, 0},
                      {1, HG_DTYPE_F32, M * N, NULL, 0}, {0, HG_DTYPE_U32, 0, NULL, M},
                      {0, HG_DTYPE_U32, 0, NULL, N}, {0, HG_DTYPE_U32, 0, NULL, K}};
    hg_launch_config cfg = {{(N + 15) / 16, (M + 15) / 16, 1}, {16, 16, 1}, 0};
    run_both("tiled_matmul", p, cfg, ma_args, 6, 1);
    hg_program_destroy(p);
    free(a);
    free(b);
    free(c);
    free(ma);
    free(mb);
}

// Unsized shared array sized by the launch; exit under divergence; atomics into one cell.
static void test_launch_features(void) {
    hg_program p = parse(
        ".kernel dyn\n.param x: global const f32\n.param y: global f32\n.param cnt: global u32\n"
        ".param n: u32\n.shared s: f32[]\n.reg u32 i, t, j\n.reg f32 v\n.reg bool p, q\n"
        "mov.u32 t, %tid.x\nmov.u32 i, %gid.x\ncmp.lt.u32 p, i, n\n"
        "if p\n  ld.global.f32 v, x[i]\n  st.shared.f32 s[t], v\nendif\nbar\n"
        "sub.u32 j, %ntid.x, 1\nsub.u32 j, j, t\nld.shared.f32 v, s[j]\n"
        "if p\n  st.global.f32 y[i], v\nendif\n"
        "cmp.ge.u32 q, i, n\nif q\n  exit\nendif\n"
        "atom.global.add.u32 _, cnt[0], 1\n");
    const size_t n = 1000;
    float* x = randf(n, 9);
    targ args[] = {{1, HG_DTYPE_F32, n, x, 0}, {1, HG_DTYPE_F32, n, NULL, 0},
                   {1, HG_DTYPE_U32, 1, NULL, 0}, {0, HG_DTYPE_U32, 0, NULL, n}};
    hg_launch_config cfg = hg_launch_1d(n, 64);
    cfg.shared_bytes = 64 * sizeof(float);
    run_both("dynamic shared + exit + atomics", p, cfg, args, 4, 1);
    hg_program_destroy(p);
    free(x);
}

static void test_out_of_bounds(void) {
    hg_program p = parse(".kernel oob\n.param y: global f32\n.reg u32 i\n"
                         "mov.u32 i, %gid.x\nadd.u32 i, i, 5\nst.global.f32 y[i], 1.0\n");
    targ args[] = {{1, HG_DTYPE_F32, 16, NULL, 0}};
    hg_launch_config cfg = hg_launch_1d(16, 16);
    hg_status s = run_both("out of bounds", p, cfg, args, 1, 0);
    hg_backend_kind kind = HG_BACKEND_CPU;
    CHECK_OK(hg_executor_backend(g_dev, &kind));
    if (kind == HG_BACKEND_CUDA)
        CHECK_MSG(g_dev_launch == HG_OK, "asynchronous launch gave %s",
                  hg_status_string(g_dev_launch));
    CHECK_MSG(s == HG_ERR_OUT_OF_BOUNDS, "out-of-bounds store gave %s", hg_status_string(s));
    CHECK_MSG(strstr(g_devmsg, "lane") && strstr(g_devmsg, "instruction 2") &&
              strstr(g_devmsg, "'y'"), "message: %s", g_devmsg);
    CHECK_OK(hg_executor_synchronize(g_dev));   // reported once; the executor stays usable
    hg_program_destroy(p);
}

// Strided copies (the device copy kernel): random views with negative, zero and permuted
// strides copied into contiguous tensors, and an overlapping copy within one buffer, on both
// executors; the results must be the same bytes.
static uint64_t g_rng = 12345;
static uint64_t rnd(void) {
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return g_rng;
}

static void read_all(hg_buffer b, unsigned char** out, size_t* nbytes) {
    size_t n = 0;
    CHECK_OK(hg_buffer_count(b, &n));
    CHECK_OK(hg_buffer_nbytes(b, nbytes));
    *out = malloc(*nbytes + 1);
    CHECK_OK(hg_buffer_read(b, 0, *out, n));
}

static void test_strided_copies(void) {
    const hg_dtype dts[] = {HG_DTYPE_U8, HG_DTYPE_F16, HG_DTYPE_F32, HG_DTYPE_F64, HG_DTYPE_BOOL};
    for (int trial = 0; trial < 40; trial++) {
        hg_dtype dt = dts[trial % 5];
        size_t es = hg_dtype_size(dt);
        const size_t cap = 4096;
        unsigned char* host = malloc(cap * es);
        for (size_t i = 0; i < cap * es; i++) host[i] = (unsigned char)rnd();
        if (dt == HG_DTYPE_BOOL)
            for (size_t i = 0; i < cap; i++) host[i] &= 1;
        int32_t nd = 1 + (int32_t)(rnd() % 4);
        int64_t shape[4], strides[4], lo = 0, hi = 0;
        for (int32_t d = 0; d < nd; d++) {
            shape[d] = 1 + (int64_t)(rnd() % 6);
            strides[d] = (int64_t)(rnd() % 9) - 4;   // -4..4, zero included
            if (strides[d] < 0) lo += strides[d] * (shape[d] - 1);
            else hi += strides[d] * (shape[d] - 1);
        }
        int64_t offset = -lo + (int64_t)(rnd() % 16);
        if (offset + hi >= (int64_t)cap) continue;
        hg_buffer bs[2], bd[2];
        hg_executor exs[2] = {g_cpu, g_dev};
        unsigned char* got[2] = {NULL, NULL};
        size_t nb[2] = {0, 0};
        for (int e = 0; e < 2; e++) {
            CHECK_OK(hg_buffer_create(exs[e], dt, cap, &bs[e]));
            CHECK_OK(hg_buffer_write(bs[e], 0, host, cap));
            hg_tensor v, c;
            CHECK_OK(hg_tensor_view(bs[e], nd, shape, strides, offset, &v));
            int copied = 0;
            CHECK_OK(hg_tensor_contiguous(&v, &c, &copied));
            bd[e] = c.buffer;
            read_all(copied ? c.buffer : bs[e], &got[e], &nb[e]);
            // An overlapping copy: the view shifted by one element onto itself, in place.
            hg_tensor w;
            if (offset + hi + 1 < (int64_t)cap &&
                hg_tensor_view(bs[e], nd, shape, strides, offset + 1, &w) == HG_OK) {
                int zero_stride = 0;
                for (int32_t d = 0; d < nd; d++) zero_stride |= strides[d] == 0 && shape[d] > 1;
                if (!zero_stride) CHECK_OK(hg_tensor_copy(&w, &v));
            }
            if (!copied) bd[e].handle = 0;
        }
        CHECK_MSG(nb[0] == nb[1] && memcmp(got[0], got[1], nb[0]) == 0,
                  "strided copy trial %d (%s, %d dims) differs", trial, hg_dtype_name(dt), (int)nd);
        unsigned char *s0 = NULL, *s1 = NULL;
        size_t n0 = 0, n1 = 0;
        read_all(bs[0], &s0, &n0);
        read_all(bs[1], &s1, &n1);
        CHECK_MSG(n0 == n1 && memcmp(s0, s1, n0) == 0, "overlapping copy trial %d differs", trial);
        free(s0);
        free(s1);
        for (int e = 0; e < 2; e++) {
            free(got[e]);
            hg_buffer_destroy(bs[e]);
            if (bd[e].handle) hg_buffer_destroy(bd[e]);
        }
        free(host);
    }
}

int main(void) {
    const char* name = getenv("HG_TEST_BACKEND");
    if (!name || !name[0] || !strcmp(name, "cpu")) {
        printf("test_backend_examples: SKIPPED (set HG_TEST_BACKEND to a non-CPU backend)\n");
        return 77;
    }
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &g_cpu));
    hg_status s = hg_executor_create_by_name(name, &g_dev);
    if (s != HG_OK) {
        printf("test_backend_examples: SKIPPED (%s unavailable: %s)\n", name, hg_last_error());
        hg_executor_destroy(g_cpu);
        return 77;
    }
    test_examples();
    test_launch_features();
    test_out_of_bounds();
    test_strided_copies();
    hg_executor_destroy(g_dev);
    hg_executor_destroy(g_cpu);
    return hg_test_finish("test_backend_examples");
}
