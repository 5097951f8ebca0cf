// cmd_bench.c — `hologram bench`: ISA programs and op-library calls on a CPU executor against
// STREAM-like C kernels of the same traffic, measured in the same run on the same number of
// threads (DESIGN.md §6), plus per-call latencies of tiny launches and ops.
//
// Every round runs every case once, interleaved, so that load from other users of a shared
// machine hits the limit and the measured cases alike; best and median over the rounds are
// reported with ours/limit ratios. Buffers are allocated and first-touched before timing and
// reused across rounds. The cases are in bench_isa.c, bench_ops.c, bench_latency.c; output in
// bench_report.c.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_ctx.h"
#include "cli_common.h"

static const char* k_help =
    "Usage: hologram bench [options]\n"
    "\n"
    "Measures on a CPU executor, against STREAM-like kernels written in C with the same memory\n"
    "traffic, all in the same run on the same number of threads. Each limit is the fastest of\n"
    "three builds of its C kernel: plain (the build's flags), vector (compiled for this CPU:\n"
    "AVX2 / AVX-512 clones) and nt (streaming stores, which skip reading the destination); the\n"
    "tables name the one that won. Measured:\n"
    "  - the Atlas ISA programs examples/vector_add.hasm (c = a + b, limit: add) and\n"
    "    examples/fused_chain.hasm (y = relu(a*b + c) * 0.5, limit: the same C expression),\n"
    "  - ISA programs y = exp/tanh/sigmoid/gelu(a) (limit: copy),\n"
    "  - the op library: eager hg_binary add, hg_reduce sum (limit: a read-only sum), hg_unary\n"
    "    exp/tanh/sigmoid/gelu, and the fused chain as a compiled graph (skipped, with the\n"
    "    library's message, where a call fails),\n"
    "  - per-call latency of a 1-lane hg_kernel_launch and of a 1-element eager hg_binary add.\n"
    "Prints markdown tables: best and median time over the repeats, GB/s, ours/limit ratios and\n"
    "each case's target ratio. Progress goes to stderr.\n"
    "\n"
    "Options:\n"
    "  --size N              f32 elements per array (default 16777216 = 16M)\n"
    "  --threads T           worker threads for both sides (default: the CPU executor's default,\n"
    "                        i.e. HOLOGRAM_NUM_THREADS, OMP_NUM_THREADS or all cores)\n"
    "  --repeats R           timed rounds (default 20)\n"
    "  --warmup W            untimed rounds first (default 3)\n"
    "  --block B             lanes per block for the ISA launches (default 1024)\n"
    "  --json FILE           also write the results as JSON\n"
    "  --print-program NAME  print an embedded program (vector_add, fused_chain, exp, tanh,\n"
    "                        sigmoid, gelu) and exit\n"
    "  -h, --help            show this help\n";

const bench_case k_bench_cases[B_CASE_COUNT] = {
#define C_CASES(ID, name, what, bytes, kernel)                                              \
    [ID] = {name, "c", what, bytes, -1, 0, kernel, STREAM_PLAIN},                              \
    [ID##_VECTOR] = {name "_vector", "c", what " (vector build)", bytes, -1, 0, kernel,        \
                     STREAM_VECTOR}
    C_CASES(B_C_COPY, "c_copy", "d = a", 8, STREAM_COPY),
    [B_C_COPY_NT] = {"c_copy_nt", "c", "d = a (streaming stores)", 8, -1, 0, STREAM_COPY, STREAM_NT},
    C_CASES(B_C_ADD, "c_add", "d = a + b", 12, STREAM_ADD),
    [B_C_ADD_NT] = {"c_add_nt", "c", "d = a + b (streaming stores)", 12, -1, 0, STREAM_ADD,
                    STREAM_NT},
    C_CASES(B_C_TRIAD, "c_triad", "d = a + 3*b", 12, STREAM_TRIAD),
    [B_C_TRIAD_NT] = {"c_triad_nt", "c", "d = a + 3*b (streaming stores)", 12, -1, 0,
                      STREAM_TRIAD, STREAM_NT},
    C_CASES(B_C_FUSED, "c_fused", "y = relu(a*b+c)*0.5", 16, STREAM_FUSED),
    [B_C_FUSED_NT] = {"c_fused_nt", "c", "y = relu(a*b+c)*0.5 (streaming stores)", 16, -1, 0,
                      STREAM_FUSED, STREAM_NT},
    C_CASES(B_C_SUM, "c_sum", "s = sum(a) (read only)", 4, STREAM_SUM),
    [B_ISA_ADD] = {"isa_vector_add", "isa", "d = a + b (ISA)", 12, B_C_ADD, 0.90, 0, 0},
    [B_ISA_FUSED] = {"isa_fused_chain", "isa", "y = relu(a*b+c)*0.5 (ISA)", 16, B_C_FUSED, 0.85, 0,
                     0},
    [B_ISA_EXP] = {"isa_exp", "isa", "d = exp(a) (ISA)", 8, B_C_COPY, 0.70, 0, 0},
    [B_ISA_TANH] = {"isa_tanh", "isa", "d = tanh(a) (ISA)", 8, B_C_COPY, 0.70, 0, 0},
    [B_ISA_SIGMOID] = {"isa_sigmoid", "isa", "d = sigmoid(a) (ISA)", 8, B_C_COPY, 0.70, 0, 0},
    [B_ISA_GELU] = {"isa_gelu", "isa", "d = gelu(a), tanh form (ISA)", 8, B_C_COPY, 0.70, 0, 0},
    [B_OP_ADD] = {"op_add", "op", "hg_binary add", 12, B_C_ADD, 0.90, 0, 0},
    [B_GRAPH_FUSED] = {"graph_fused_chain", "graph", "y = relu(a*b+c)*0.5 (graph plan)", 16,
                       B_C_FUSED, 0.85, 0, 0},
    [B_OP_SUM] = {"op_sum", "op", "hg_reduce sum", 4, B_C_SUM, 0.90, 0, 0},
    [B_OP_EXP] = {"op_exp", "op", "hg_unary exp", 8, B_C_COPY, 0.70, 0, 0},
    [B_OP_TANH] = {"op_tanh", "op", "hg_unary tanh", 8, B_C_COPY, 0.70, 0, 0},
    [B_OP_SIGMOID] = {"op_sigmoid", "op", "hg_unary sigmoid", 8, B_C_COPY, 0.70, 0, 0},
    [B_OP_GELU] = {"op_gelu", "op", "hg_unary gelu (tanh form)", 8, B_C_COPY, 0.70, 0, 0},
};

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

// Runs case k once; returns its time in seconds, or a negative value after printing an error.
static double run_once(bench_ctx* c, int k) {
    double t0 = bench_now_s();
    hg_status st = HG_OK;
    if (k < B_FIRST_ISA) {
        stream_run(c->pool, &c->arr, k_bench_cases[k].stream, k_bench_cases[k].variant);
    } else {
        st = k < B_FIRST_OP ? bench_isa_run(c, k) : bench_ops_run(c, k);
        if (st == HG_OK) st = hg_executor_synchronize(c->ex);
    }
    if (st != HG_OK) {
        cli_hg_fail("bench", st, k_bench_cases[k].name);
        return -1.0;
    }
    return bench_now_s() - t0;
}

static int setup_executor(bench_ctx* c) {
    hg_executor_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = HG_BACKEND_CPU;
    opt.num_threads = c->threads;
    hg_status st = hg_executor_create_ex(&opt, &c->ex);
    if (st != HG_OK) return cli_hg_fail("bench", st, "creating the CPU executor");
    c->have_ex = 1;
    int t = 0;
    st = hg_executor_num_threads(c->ex, &t);
    if (st != HG_OK) return cli_hg_fail("bench", st, "querying the executor's threads");
    c->threads = t;
    return CLI_OK;
}

static void teardown(bench_ctx* c) {
    bench_ops_teardown(c);
    bench_isa_teardown(c);
    if (c->have_ex) hg_executor_destroy(c->ex);
    bench_arrays_free(&c->arr);
    if (c->pool) bench_pool_destroy(c->pool);
    for (int k = 0; k < B_CASE_COUNT; k++) free(c->times[k]);
    free(c->host);
}

// Runs each measured case once more and checks its output (the cases share output buffers,
// so this happens case by case after the timed rounds).
static int verify(bench_ctx* c) {
    for (int k = 0; k < B_CASE_COUNT; k++) {
        if (c->skipped[k][0]) continue;
        if (run_once(c, k) < 0) return CLI_FAIL;
        if (k < B_FIRST_ISA) {   // a limit that computes something else is no limit
            c->verified[k] = stream_check(&c->arr, k_bench_cases[k].stream) == 0;
            continue;
        }
        int v = k < B_FIRST_OP ? bench_isa_verify(c, k) : bench_ops_verify(c, k);
        if (v < 0) return cli_fail("bench", "%s: cannot read back the result", k_bench_cases[k].name);
        c->verified[k] = v;
    }
    return CLI_OK;
}

// The processor's model name (/proc/cpuinfo), else the CPU device's name from the library.
static void cpu_name(bench_ctx* c, char* out, size_t cap) {
    out[0] = 0;
    FILE* f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char* colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon && colon[1]) {
                snprintf(out, cap, "%s", colon + 2);
                out[strcspn(out, "\n")] = 0;
                break;
            }
        }
        fclose(f);
    }
    hg_device_info di;
    if (!out[0] && hg_executor_device(c->ex, &di) == HG_OK) snprintf(out, cap, "%s", di.name);
    if (!out[0]) snprintf(out, cap, "unknown");
}

static int timed_rounds(bench_ctx* c) {
    int tty = isatty(fileno(stderr));
    double start = bench_now_s();
    int rounds = c->warmup + c->repeats;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < B_CASE_COUNT; k++) {
            if (c->skipped[k][0]) continue;
            double t = run_once(c, k);
            if (t < 0) return CLI_FAIL;
            if (r >= c->warmup) c->times[k][r - c->warmup] = t;
        }
        // On a terminal one line is rewritten in place; in a log, every 5th round gets a line.
        if (tty || r + 1 == rounds || (r + 1) % 5 == 0)
            fprintf(stderr, "%sbench: round %d/%d (%s) %.1f s%s", tty ? "\r" : "", r + 1, rounds,
                    r < c->warmup ? "warm-up" : "timed", bench_now_s() - start, tty ? "" : "\n");
    }
    if (tty) fputc('\n', stderr);
    double* sorted = malloc((size_t)c->repeats * sizeof(double));
    if (!sorted) return cli_fail("bench", "out of memory");
    for (int k = 0; k < B_CASE_COUNT; k++) {
        if (c->skipped[k][0]) continue;
        memcpy(sorted, c->times[k], (size_t)c->repeats * sizeof(double));
        qsort(sorted, (size_t)c->repeats, sizeof(double), cmp_double);
        c->best[k] = sorted[0];
        int m = c->repeats;
        c->median[k] = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
    }
    free(sorted);
    return CLI_OK;
}

static int run_bench(bench_ctx* c, const char* json) {
    int rc;
    // The executor decides the default thread count; the C pool then uses the same number.
    if ((rc = setup_executor(c)) != CLI_OK) return rc;
    c->pool = bench_pool_create(c->threads);
    if (!c->pool) return cli_fail("bench", "cannot start %d threads", c->threads);
    fprintf(stderr, "bench: %zu f32 elements, %d threads: allocating and initialising 2 x 5 arrays "
            "(%.0f MiB)...\n", c->n, c->threads, 10.0 * (double)c->n * 4.0 / (1024.0 * 1024.0));
    if (bench_arrays_alloc(c->pool, c->n, &c->arr) != 0)
        return cli_fail("bench", "out of memory allocating 5 arrays of %zu floats", c->n);
    c->host = malloc(c->n * sizeof(float));
    if (!c->host) return cli_fail("bench", "out of memory allocating %zu floats", c->n);
    for (int k = 0; k < B_FIRST_ISA; k++) {
        const char* why = NULL;
        if (!stream_available(k_bench_cases[k].stream, k_bench_cases[k].variant, &why))
            snprintf(c->skipped[k], sizeof c->skipped[k], "%s", why);
    }
    if ((rc = bench_isa_setup(c)) != CLI_OK) return rc;
    bench_ops_setup(c);
    for (int k = 0; k < B_CASE_COUNT; k++) {
        c->times[k] = calloc((size_t)c->repeats, sizeof(double));
        if (!c->times[k]) return cli_fail("bench", "out of memory");
    }
    if ((rc = timed_rounds(c)) != CLI_OK) return rc;
    if ((rc = verify(c)) != CLI_OK) return rc;
    bench_latency_run(c);
    char cpu[256];
    cpu_name(c, cpu, sizeof cpu);
    bench_print_table(c, cpu);
    if (json && (rc = bench_write_json(c, json, cpu)) != CLI_OK) return rc;
    if (json) fprintf(stderr, "bench: wrote %s\n", json);
    for (int k = B_FIRST_ISA; k < B_CASE_COUNT; k++)
        if (c->verified[k] == 0)
            return cli_fail("bench", "%s produced wrong results (see above)", k_bench_cases[k].name);
    return CLI_OK;
}

int cmd_bench(int argc, char** argv) {
    uint64_t size = 16u * 1024u * 1024u, threads = 0, repeats = 20, warmup = 3, block = 1024;
    const char* json = NULL;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = NULL;
        int m;
        if (cli_is_help(a)) { fputs(k_help, stdout); return CLI_OK; }
        if ((m = cli_opt(argc, argv, &i, "--print-program", &v)) != 0) {
            const char* text = m > 0 ? bench_program_text(v) : NULL;
            if (!text)
                return cli_usage("bench", "--print-program expects one of %s", bench_program_names());
            fputs(text, stdout);
            return CLI_OK;
        }
        if ((m = cli_opt(argc, argv, &i, "--json", &v)) != 0) {
            if (m < 0) return cli_usage("bench", "--json needs a file name");
            json = v;
            continue;
        }
        struct { const char* name; uint64_t* dst; uint64_t lo, hi; } nums[] = {
            {"--size", &size, 1, (uint64_t)1 << 31}, {"--threads", &threads, 1, 4096},
            {"--repeats", &repeats, 1, 1000000}, {"--warmup", &warmup, 0, 1000000},
            {"--block", &block, 1, 1024},
        };
        int matched = 0;
        for (size_t j = 0; j < sizeof nums / sizeof nums[0] && !matched; j++) {
            if ((m = cli_opt(argc, argv, &i, nums[j].name, &v)) == 0) continue;
            uint64_t x;
            if (m < 0 || !cli_parse_u64(v, nums[j].hi, &x) || x < nums[j].lo)
                return cli_usage("bench", "%s expects an integer in [%llu, %llu]", nums[j].name,
                                 (unsigned long long)nums[j].lo, (unsigned long long)nums[j].hi);
            *nums[j].dst = x;
            matched = 1;
        }
        if (!matched) return cli_usage("bench", "unknown option '%s'", a);
    }

    bench_ctx* c = calloc(1, sizeof *c);
    if (!c) return cli_fail("bench", "out of memory");
    c->n = (size_t)size;
    c->threads = (int)threads;
    c->block = (uint32_t)block;
    c->repeats = (int)repeats;
    c->warmup = (int)warmup;
    for (int k = 0; k < B_CASE_COUNT; k++) c->verified[k] = -1;
    int rc = run_bench(c, json);
    teardown(c);
    free(c);
    return rc;
}
