// The instruction-count guard's C driver (docs/testing.md "Instruction-count guard"): a fixed
// set of calls through the public API on a one-thread CPU executor, each warmed up (plans
// compiled, memory cached) and then run once between callgrind client requests, so that
// `valgrind --tool=callgrind --instr-atstart=no` writes one dump per case holding exactly the
// instructions of that call. tests/perf_guard/perf_guard.py runs it and compares the counts
// with tests/perf_guard/counts.json.
//
//     perf_guard [SUBSTRING]     runs the cases whose name contains SUBSTRING (all without)
//     perf_guard --toolchain     prints only the toolchain line
//
// It prints the toolchain line the counts belong to first. Outside valgrind the client requests
// do nothing, so it also runs as a plain program (every call must succeed: exit status 1 and
// the message otherwise).
#include <hologram.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guard_region.h"

#define MAX_BUFFERS 256
#define WARMUP_CALLS 2

static hg_executor g_ex;
static hg_buffer g_buffers[MAX_BUFFERS];
static int g_nbuffers;
static const char* g_filter;
static uint64_t g_seed = 1;

static void die(const char* what, hg_status s) {
    fprintf(stderr, "perf_guard: %s: %s (%s)\n", what, hg_status_string(s), hg_last_error());
    exit(1);
}

static void must(hg_status s, const char* what) {
    if (s != HG_OK) die(what, s);
}

static int selected(const char* name) {
    return g_filter == NULL || strstr(name, g_filter) != NULL;
}

// A C-contiguous f32 (or other float) tensor of random values in [-2, 2).
static hg_tensor tensor_random(hg_dtype dtype, int32_t ndim, const int64_t* shape) {
    size_t n = 1;
    for (int32_t i = 0; i < ndim; i++) n *= (size_t)shape[i];
    if (g_nbuffers == MAX_BUFFERS) {
        fprintf(stderr, "perf_guard: more than %d buffers: raise MAX_BUFFERS\n", MAX_BUFFERS);
        exit(1);
    }
    hg_buffer b;
    must(hg_buffer_create(g_ex, dtype, n, &b), "hg_buffer_create");
    g_buffers[g_nbuffers++] = b;
    hg_tensor t;
    must(hg_tensor_from_buffer(b, ndim, shape, &t), "hg_tensor_from_buffer");
    if (dtype == HG_DTYPE_F32 || dtype == HG_DTYPE_F64)
        must(hg_random_uniform(&t, g_seed++, 0, -2.0, 2.0), "hg_random_uniform");
    return t;
}

static hg_tensor f32(int32_t ndim, const int64_t* shape) {
    return tensor_random(HG_DTYPE_F32, ndim, shape);
}

// Each case: WARMUP_CALLS unmeasured calls (plans compiled and cached, memory reused), then one
// measured call; everything outside the region runs at valgrind's uninstrumented speed.
#define MEASURE(name, call)                                                                  \
    do {                                                                                     \
        const char* name_ = (name);                                                          \
        if (!selected(name_)) break;                                                         \
        for (int w_ = 0; w_ < WARMUP_CALLS; w_++) must((call), name_);                       \
        guard_region_begin();                                                                \
        hg_status s_ = (call);                                                               \
        guard_region_end(name_);                                                             \
        must(s_, name_);                                                                     \
    } while (0)

static const int64_t ELEMENTWISE_SIZES[] = {1, 4096, 16384, 65536};

static void cases_elementwise(void) {
    char name[64];
    for (size_t i = 0; i < sizeof ELEMENTWISE_SIZES / sizeof ELEMENTWISE_SIZES[0]; i++) {
        int64_t n = ELEMENTWISE_SIZES[i];
        hg_tensor a = f32(1, &n), b = f32(1, &n), c = f32(1, &n);
        snprintf(name, sizeof name, "add_f32_%lld", (long long)n);
        MEASURE(name, hg_binary(HG_BINARY_ADD, &a, &b, &c));
        snprintf(name, sizeof name, "mul_scalar_f32_%lld", (long long)n);
        MEASURE(name, hg_binary_scalar(HG_BINARY_MUL, &a, hg_scalar_f(0.5), 0, &c));
        snprintf(name, sizeof name, "exp_f32_%lld", (long long)n);
        MEASURE(name, hg_unary(HG_UNARY_EXP, &a, &c));
        snprintf(name, sizeof name, "relu_f32_%lld", (long long)n);
        MEASURE(name, hg_unary(HG_UNARY_RELU, &a, &c));
        snprintf(name, sizeof name, "vector_add_f32_%lld", (long long)n);
        MEASURE(name, hg_vector_add(a.buffer, b.buffer, c.buffer, (size_t)n));
    }
    // A result the op allocates (numpy's a + b): the allocator is on the measured path.
    int64_t one = 1;
    hg_tensor a = f32(1, &one), b = f32(1, &one);
    if (selected("add_f32_1_alloc")) {
        for (int w = 0; w <= WARMUP_CALLS; w++) {
            hg_tensor c = {0};
            if (w == WARMUP_CALLS) guard_region_begin();
            hg_status s = hg_binary(HG_BINARY_ADD, &a, &b, &c);
            if (s == HG_OK) s = hg_buffer_destroy(c.buffer);
            if (w == WARMUP_CALLS) guard_region_end("add_f32_1_alloc");
            must(s, "add_f32_1_alloc");
        }
    }
    // Broadcasts: a row vector and a column vector over a 256 x 256 matrix.
    int64_t mat[2] = {256, 256}, row[1] = {256}, col[2] = {256, 1};
    hg_tensor m = f32(2, mat), r = f32(1, row), k = f32(2, col), o = f32(2, mat);
    MEASURE("add_bcast_row_f32_256x256", hg_binary(HG_BINARY_ADD, &m, &r, &o));
    MEASURE("mul_bcast_col_f32_256x256", hg_binary(HG_BINARY_MUL, &m, &k, &o));
}

static void cases_reduce(void) {
    int64_t n = 65536, mat[2] = {256, 256}, one = 1, s256 = 256;
    hg_tensor x = f32(1, &n), m = f32(2, mat), x1 = f32(1, &one);
    hg_tensor s = f32(0, NULL), v = f32(1, &s256);
    int32_t ax0 = 0, ax1 = 1;
    MEASURE("sum_all_f32_1", hg_reduce(HG_REDUCE_SUM, &x1, 0, NULL, 0, &s));
    MEASURE("sum_all_f32_65536", hg_reduce(HG_REDUCE_SUM, &x, 0, NULL, 0, &s));
    MEASURE("max_all_f32_65536", hg_reduce(HG_REDUCE_MAX, &x, 0, NULL, 0, &s));
    MEASURE("sum_axis1_f32_256x256", hg_reduce(HG_REDUCE_SUM, &m, 1, &ax1, 0, &v));
    MEASURE("sum_axis0_f32_256x256", hg_reduce(HG_REDUCE_SUM, &m, 1, &ax0, 0, &v));
    MEASURE("max_axis1_f32_256x256", hg_reduce(HG_REDUCE_MAX, &m, 1, &ax1, 0, &v));
}

static const int64_t ROW_SIZES[] = {16, 64, 256, 1024, 4096};
#define ROWS 4

static void cases_rows(void) {
    char name[64];
    const double eps = 1e-5;
    for (size_t i = 0; i < sizeof ROW_SIZES / sizeof ROW_SIZES[0]; i++) {
        int64_t n = ROW_SIZES[i], shape[2] = {ROWS, n};
        hg_tensor x = f32(2, shape), g = f32(2, shape), y = f32(2, shape), dx = f32(2, shape);
        hg_tensor w = f32(1, &n), b = f32(1, &n), dw = f32(1, &n), db = f32(1, &n);
        long long nn = (long long)n;
        snprintf(name, sizeof name, "softmax_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_softmax(&x, -1, &y));
        snprintf(name, sizeof name, "softmax_backward_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_softmax_backward(&g, &y, -1, &dx));
        snprintf(name, sizeof name, "log_softmax_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_log_softmax(&x, -1, &y));
        snprintf(name, sizeof name, "log_softmax_backward_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_log_softmax_backward(&g, &y, -1, &dx));
        snprintf(name, sizeof name, "layer_norm_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_layer_norm(&x, 1, &w, &b, eps, &y));
        snprintf(name, sizeof name, "layer_norm_backward_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_layer_norm_backward(&g, &x, 1, &w, eps, &dx, &dw, &db));
        snprintf(name, sizeof name, "rms_norm_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_rms_norm(&x, 1, &w, eps, &y));
        snprintf(name, sizeof name, "rms_norm_backward_f32_%dx%lld", ROWS, nn);
        MEASURE(name, hg_rms_norm_backward(&g, &x, 1, &w, eps, &dx, &dw));
    }
}

static void cases_cross_entropy(void) {
    int64_t shape[2] = {16, 1000}, rows = 16;
    hg_tensor logits = f32(2, shape), dlogits = f32(2, shape), loss = f32(0, NULL);
    hg_tensor grad = f32(0, NULL);
    hg_tensor target = tensor_random(HG_DTYPE_I64, 1, &rows);
    int64_t classes[16];
    for (int i = 0; i < 16; i++) classes[i] = (i * 37) % 1000;
    must(hg_buffer_write(target.buffer, 0, classes, 16), "hg_buffer_write");
    MEASURE("cross_entropy_f32_16x1000",
            hg_cross_entropy(&logits, &target, -100, HG_REDUCTION_MEAN, &loss));
    MEASURE("cross_entropy_backward_f32_16x1000",
            hg_cross_entropy_backward(&grad, &logits, &target, -100, HG_REDUCTION_MEAN,
                                      &dlogits));
    hg_tensor probs = f32(2, shape);   // probability targets (need not sum to 1)
    MEASURE("cross_entropy_backward_probs_f32_16x1000",
            hg_cross_entropy_backward(&grad, &logits, &probs, -100, HG_REDUCTION_MEAN,
                                      &dlogits));
    // softmax_backward across rows (not the last axis): the decomposition's plan on hosts
    int64_t tall[2] = {64, 1000};
    hg_tensor g = f32(2, tall), y = f32(2, tall), dx = f32(2, tall);
    MEASURE("softmax_backward_axis0_f32_64x1000", hg_softmax_backward(&g, &y, 0, &dx));
}

static void cases_matmul(void) {
    char name[64];
    static const int64_t sizes[] = {64, 128};
    for (int i = 0; i < 2; i++) {
        int64_t shape[2] = {sizes[i], sizes[i]};
        hg_tensor a = f32(2, shape), b = f32(2, shape), c = f32(2, shape);
        snprintf(name, sizeof name, "matmul_f32_%lld", (long long)sizes[i]);
        MEASURE(name, hg_matmul(&a, &b, &c));
    }
}

// One Adam step (torch's defaults) and one AdamW step of 1, 4K and 64K f32 elements in place: the
// host fused kernel.
static void cases_optim(void) {
    char name[64];
    static const int64_t sizes[] = {1, 4096, 65536};
    for (int i = 0; i < 3; i++) {
        int64_t n = sizes[i];
        hg_tensor p = f32(1, &n), g = f32(1, &n), m = f32(1, &n), v = f32(1, &n);
        // v >= 0 as a second moment is
        must(hg_unary(HG_UNARY_ABS, &v, &v), "hg_unary");
        hg_adam_options o = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .step = 3};
        snprintf(name, sizeof name, "adam_step_f32_%lld", (long long)n);
        MEASURE(name, hg_adam_step(&o, &p, &g, &m, &v, NULL));
        o.weight_decay = 0.01;
        o.decoupled_weight_decay = 1;
        snprintf(name, sizeof name, "adamw_step_f32_%lld", (long long)n);
        MEASURE(name, hg_adam_step(&o, &p, &g, &m, &v, NULL));
    }
}

// relu(a * b + c) * 0.5 through the graph compiler: one fused kernel.
static void cases_graph(void) {
    char name[64];
    static const int64_t sizes[] = {1, 4096, 65536};
    for (int i = 0; i < 3; i++) {
        int64_t n = sizes[i];
        hg_graph g;
        int32_t a, b, c, t, y;
        hg_plan plan;
        must(hg_graph_create(&g), "hg_graph_create");
        must(hg_graph_input(g, HG_DTYPE_F32, 1, &n, &a), "hg_graph_input");
        must(hg_graph_input(g, HG_DTYPE_F32, 1, &n, &b), "hg_graph_input");
        must(hg_graph_input(g, HG_DTYPE_F32, 1, &n, &c), "hg_graph_input");
        must(hg_graph_binary(g, HG_BINARY_MUL, a, b, &t), "hg_graph_binary");
        must(hg_graph_binary(g, HG_BINARY_ADD, t, c, &t), "hg_graph_binary");
        must(hg_graph_unary(g, HG_UNARY_RELU, t, &t), "hg_graph_unary");
        must(hg_graph_binary_scalar(g, HG_BINARY_MUL, t, hg_scalar_f(0.5), 0, &y),
             "hg_graph_binary_scalar");
        must(hg_graph_output(g, y), "hg_graph_output");
        must(hg_graph_compile(g, g_ex, &plan), "hg_graph_compile");
        must(hg_graph_destroy(g), "hg_graph_destroy");
        hg_tensor in[3] = {f32(1, &n), f32(1, &n), f32(1, &n)}, out = f32(1, &n);
        snprintf(name, sizeof name, "graph_fused_chain_f32_%lld", (long long)n);
        MEASURE(name, hg_plan_run(plan, 3, in, 1, &out));
        must(hg_plan_destroy(plan), "hg_plan_destroy");
    }
}

int main(int argc, char** argv) {
    int toolchain_only = argc == 2 && strcmp(argv[1], "--toolchain") == 0;
    if (argc > 2 || (argc == 2 && argv[1][0] == '-' && !toolchain_only)) {
        fprintf(stderr, "usage: perf_guard [SUBSTRING | --toolchain]\n");
        return 2;
    }
    g_filter = argc == 2 ? argv[1] : NULL;
    hg_executor_options opt = {HG_BACKEND_CPU, 0, 1};
    must(hg_executor_create_ex(&opt, &g_ex), "hg_executor_create_ex");
    int threads = 0;
    must(hg_executor_num_threads(g_ex, &threads), "hg_executor_num_threads");
    hg_build_info info;
    hg_build_info_get(&info);
    // The key the stored counts belong to (perf_guard.py compares it before any count).
    printf("toolchain: compiler=%s; build_type=%s; features=%s; kernels=%s; threads=%d\n",
           info.compiler, info.build_type, info.features, hg_cpu_kernel_set(), threads);
    fflush(stdout);
    if (toolchain_only) return hg_executor_destroy(g_ex) == HG_OK ? 0 : 1;
    cases_elementwise();
    cases_reduce();
    cases_rows();
    cases_cross_entropy();
    cases_matmul();
    cases_optim();
    cases_graph();
    for (int i = 0; i < g_nbuffers; i++) must(hg_buffer_destroy(g_buffers[i]), "hg_buffer_destroy");
    must(hg_executor_destroy(g_ex), "hg_executor_destroy");
    return 0;
}
