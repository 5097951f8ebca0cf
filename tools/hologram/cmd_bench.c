// cmd_bench.c — `hologram bench`: ISA kernels on a CPU executor against STREAM-like C kernels of
// the same traffic, measured in the same run on the same number of threads (DESIGN.md §6).
//
// Every round runs every kernel once, interleaved, so that load from other users of a shared
// machine hits the limit and the measured kernels alike; best and median over the rounds are
// reported with ours/limit ratios. Buffers are allocated and first-touched before timing and
// reused across rounds.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_stream.h"
#include "cli_common.h"

// The two ISA programs, byte-identical to examples/vector_add.hasm and examples/fused_chain.hasm
// (tests/test_examples.c checks that via `hologram bench --print-program NAME`), embedded so the
// benchmark does not depend on where the source tree is.
static const char k_vector_add_text[] =
    "// c = a + b over n elements; lanes past the end (the last block is partial) do nothing.\n"
    "// hologram run examples/vector_add.hasm --arg a=a.npy --arg b=b.npy --arg c=zeros:N \\\n"
    "//     --arg n=N --out c=c.npy\n"
    ".kernel vector_add\n"
    ".param a: global const f32\n"
    ".param b: global const f32\n"
    ".param c: global f32\n"
    ".param n: u32\n"
    ".reg u32 i\n"
    ".reg f32 x, y\n"
    ".reg bool p\n"
    "\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        ld.global.f32 x, a[i]\n"
    "        ld.global.f32 y, b[i]\n"
    "        add.f32 x, x, y\n"
    "        st.global.f32 c[i], x\n"
    "    endif\n";
static const char k_fused_chain_text[] =
    "// y = relu(a*b + c) * 0.5 over n f32 elements, fused into one pass (16 bytes of traffic per\n"
    "// element). mul and add are separate roundings, exactly as the C expression (a*b)+c.\n"
    "// hologram run examples/fused_chain.hasm --arg a=a.npy --arg b=b.npy --arg c=c.npy \\\n"
    "//     --arg y=zeros:N --arg n=N --out y=y.npy\n"
    ".kernel fused_chain\n"
    ".param a: global const f32\n"
    ".param b: global const f32\n"
    ".param c: global const f32\n"
    ".param y: global f32\n"
    ".param n: u32\n"
    ".reg u32 i\n"
    ".reg f32 x, t\n"
    ".reg bool p\n"
    "\n"
    "    mov.u32 i, %gid.x\n"
    "    cmp.lt.u32 p, i, n\n"
    "    if p\n"
    "        ld.global.f32 x, a[i]\n"
    "        ld.global.f32 t, b[i]\n"
    "        mul.f32 x, x, t\n"
    "        ld.global.f32 t, c[i]\n"
    "        add.f32 x, x, t\n"
    "        max.f32 x, x, 0.0\n"
    "        mul.f32 x, x, 0.5\n"
    "        st.global.f32 y[i], x\n"
    "    endif\n";

static const char* k_help =
    "Usage: hologram bench [options]\n"
    "\n"
    "Measures the Atlas ISA programs examples/vector_add.hasm (c = a + b) and\n"
    "examples/fused_chain.hasm (y = relu(a*b + c) * 0.5) on a CPU executor against STREAM-like\n"
    "kernels written in plain C with the same memory traffic (12 and 16 bytes per element), plus\n"
    "copy and triad for context, all in the same run on the same number of threads. Prints a\n"
    "markdown table: best and median time over the repeats, GB/s, and ours/limit ratios.\n"
    "Progress goes to stderr.\n"
    "\n"
    "Options:\n"
    "  --size N              f32 elements per array (default 16777216 = 16M)\n"
    "  --threads T           worker threads for both sides (default: the CPU executor's default,\n"
    "                        i.e. HOLOGRAM_NUM_THREADS, OMP_NUM_THREADS or all cores)\n"
    "  --repeats R           timed rounds (default 20)\n"
    "  --warmup W            untimed rounds first (default 3)\n"
    "  --block B             lanes per block for the ISA launches (default 1024)\n"
    "  --json FILE           also write the results as JSON\n"
    "  --print-program NAME  print the embedded program text (vector_add or fused_chain) and exit\n"
    "  -h, --help            show this help\n";

enum { K_COPY, K_ADD, K_TRIAD, K_FUSED, K_ISA_ADD, K_ISA_FUSED, K_COUNT };

typedef struct kernel_desc {
    const char* name;
    const char* kind;         // "c" or "isa"
    const char* what;
    double bytes_per_elem;
    int limit;                // index of the C kernel with the same traffic, or -1
} kernel_desc;

static const kernel_desc k_kernels[K_COUNT] = {
    [K_COPY] = {"c_copy", "c", "d = a", 8, -1},
    [K_ADD] = {"c_add", "c", "d = a + b", 12, -1},
    [K_TRIAD] = {"c_triad", "c", "d = a + 3*b", 12, -1},
    [K_FUSED] = {"c_fused", "c", "y = relu(a*b+c)*0.5", 16, -1},
    [K_ISA_ADD] = {"isa_vector_add", "isa", "d = a + b (ISA)", 12, K_ADD},
    [K_ISA_FUSED] = {"isa_fused_chain", "isa", "y = relu(a*b+c)*0.5 (ISA)", 16, K_FUSED},
};
_Static_assert(sizeof k_kernels / sizeof k_kernels[0] == K_COUNT, "one descriptor per kernel");

typedef struct bench_ctx {
    size_t n;
    int threads;
    uint32_t block;
    bench_pool* pool;
    bench_arrays arr;
    hg_executor ex;
    hg_program prog_add, prog_fused;
    hg_buffer A, B, C, D, Y;
    int have_ex, have_add, have_fused, nbufs;
    double* times[K_COUNT];
    double best[K_COUNT], median[K_COUNT];
    int verified[K_COUNT];    // -1 not checked, 0 wrong, 1 exact
} bench_ctx;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static hg_status run_isa(bench_ctx* c, int k) {
    hg_launch_config cfg = hg_launch_1d(c->n, c->block);
    if (k == K_ISA_ADD) {
        hg_arg args[4] = {hg_arg_buffer(c->A), hg_arg_buffer(c->B), hg_arg_buffer(c->D),
                          hg_arg_u32((uint32_t)c->n)};
        return hg_launch(c->ex, c->prog_add, &cfg, args, 4);
    }
    hg_arg args[5] = {hg_arg_buffer(c->A), hg_arg_buffer(c->B), hg_arg_buffer(c->C),
                      hg_arg_buffer(c->Y), hg_arg_u32((uint32_t)c->n)};
    return hg_launch(c->ex, c->prog_fused, &cfg, args, 5);
}

// Runs kernel k once; returns its time in seconds, or a negative value after printing an error.
static double run_once(bench_ctx* c, int k) {
    double t0 = now_s();
    switch (k) {
    case K_COPY: stream_copy(c->pool, &c->arr); break;
    case K_ADD: stream_add(c->pool, &c->arr); break;
    case K_TRIAD: stream_triad(c->pool, &c->arr); break;
    case K_FUSED: stream_fused(c->pool, &c->arr); break;
    default: {
        hg_status st = run_isa(c, k);
        if (st == HG_OK) st = hg_executor_synchronize(c->ex);
        if (st != HG_OK) {
            cli_hg_fail("bench", st, k_kernels[k].name);
            return -1.0;
        }
    }
    }
    return now_s() - t0;
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

static int setup_isa_buffers(bench_ctx* c) {
    hg_status st = hg_program_parse(k_vector_add_text, strlen(k_vector_add_text), &c->prog_add);
    if (st != HG_OK) return cli_hg_fail("bench", st, "parsing the embedded vector_add program");
    c->have_add = 1;
    st = hg_program_parse(k_fused_chain_text, strlen(k_fused_chain_text), &c->prog_fused);
    if (st != HG_OK) return cli_hg_fail("bench", st, "parsing the embedded fused_chain program");
    c->have_fused = 1;
    hg_buffer* bufs[5] = {&c->A, &c->B, &c->C, &c->D, &c->Y};
    for (int i = 0; i < 5; i++) {
        st = hg_buffer_create(c->ex, HG_DTYPE_F32, c->n, bufs[i]);
        if (st != HG_OK) return cli_hg_fail("bench", st, "allocating the ISA buffers");
        c->nbufs = i + 1;
    }
    // Same inputs as the C side; writing (and filling the outputs) faults every page in now.
    if ((st = hg_buffer_write(c->A, 0, c->arr.a, c->n)) != HG_OK ||
        (st = hg_buffer_write(c->B, 0, c->arr.b, c->n)) != HG_OK ||
        (st = hg_buffer_write(c->C, 0, c->arr.c, c->n)) != HG_OK ||
        (st = hg_buffer_fill(c->D, 0.0)) != HG_OK || (st = hg_buffer_fill(c->Y, 0.0)) != HG_OK)
        return cli_hg_fail("bench", st, "initialising the ISA buffers");
    return CLI_OK;
}

static void teardown(bench_ctx* c) {
    hg_buffer* bufs[5] = {&c->A, &c->B, &c->C, &c->D, &c->Y};
    for (int i = 0; i < c->nbufs; i++) hg_buffer_destroy(*bufs[i]);
    if (c->have_add) hg_program_destroy(c->prog_add);
    if (c->have_fused) hg_program_destroy(c->prog_fused);
    if (c->have_ex) hg_executor_destroy(c->ex);
    bench_arrays_free(&c->arr);
    if (c->pool) bench_pool_destroy(c->pool);
    for (int k = 0; k < K_COUNT; k++) free(c->times[k]);
}

// The ISA results must equal the C results exactly (the same f32 operations in the same order).
static int verify(bench_ctx* c) {
    float* host = malloc(c->n * sizeof(float));
    if (!host) return cli_fail("bench", "out of memory verifying results");
    size_t bad = 0, first = 0;
    hg_status st = hg_buffer_read(c->D, 0, host, c->n);
    for (size_t i = 0; st == HG_OK && i < c->n; i++) {
        float want = c->arr.a[i] + c->arr.b[i];
        if (host[i] != want && !bad++) first = i;
    }
    c->verified[K_ISA_ADD] = st == HG_OK && bad == 0;
    if (bad) fprintf(stderr, "bench: isa_vector_add: %zu wrong elements, first at %zu\n", bad, first);
    bad = 0;
    if (st == HG_OK) st = hg_buffer_read(c->Y, 0, host, c->n);
    for (size_t i = 0; st == HG_OK && i < c->n; i++)
        if (host[i] != c->arr.y[i] && !bad++) first = i;
    c->verified[K_ISA_FUSED] = st == HG_OK && bad == 0;
    if (bad) fprintf(stderr, "bench: isa_fused_chain: %zu wrong elements, first at %zu\n", bad, first);
    free(host);
    if (st != HG_OK) return cli_hg_fail("bench", st, "reading back the ISA results");
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

static double gbs(const bench_ctx* c, int k, double t) {
    return t > 0 ? k_kernels[k].bytes_per_elem * (double)c->n / t * 1e-9 : 0.0;
}

static void print_table(const bench_ctx* c, const char* cpu, int repeats, int warmup) {
    printf("hologram bench: %zu f32 elements (%.1f MiB per array), %d thread%s, %d repeats "
           "(+%d warm-up), ISA block %u\ncpu: %s (%s)\n\n", c->n,
           (double)c->n * 4.0 / (1024.0 * 1024.0), c->threads, c->threads == 1 ? "" : "s", repeats,
           warmup, c->block, cpu, hg_cpu_features());
    printf("| kernel | computes | B/elem | best ms | median ms | best GB/s | median GB/s | "
           "ours/limit best | ours/limit median |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < K_COUNT; k++) {
        const kernel_desc* d = &k_kernels[k];
        printf("| %s | %s | %.0f | %.3f | %.3f | %.2f | %.2f |", d->name, d->what, d->bytes_per_elem,
               c->best[k] * 1e3, c->median[k] * 1e3, gbs(c, k, c->best[k]), gbs(c, k, c->median[k]));
        if (d->limit >= 0)
            printf(" %.3f (vs %s) | %.3f |%s\n", c->best[d->limit] / c->best[k], k_kernels[d->limit].name,
                   c->median[d->limit] / c->median[k],
                   c->verified[k] == 0 ? " **WRONG RESULTS**" : "");
        else
            printf(" — | — |\n");
    }
    printf("\nlimit = the plain-C kernel with the same traffic on the same threads; ratio = limit "
           "time / ISA time (1.0 = at the measured memory bandwidth).\n");
}

static int write_json(const bench_ctx* c, const char* path, const char* cpu, int repeats, int warmup) {
    FILE* f = fopen(path, "w");
    if (!f) return cli_fail("bench", "cannot create '%s'", path);
    char date[64];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    fprintf(f, "{\n  \"machine\": {\"cpu\": ");
    cli_json_string(f, cpu);
    fprintf(f, ", \"threads\": %d, \"features\": ", c->threads);
    cli_json_string(f, hg_cpu_features());
    fprintf(f, "},\n  \"date\": \"%s\",\n  \"version\": ", date);
    cli_json_string(f, hg_version());
    fprintf(f, ",\n  \"size\": %zu,\n  \"dtype\": \"f32\",\n  \"repeats\": %d,\n  \"warmup\": %d,\n"
            "  \"block\": %u,\n  \"results\": [\n", c->n, repeats, warmup, c->block);
    for (int k = 0; k < K_COUNT; k++) {
        const kernel_desc* d = &k_kernels[k];
        fprintf(f, "    {\"name\": \"%s\", \"kind\": \"%s\", \"computes\": ", d->name, d->kind);
        cli_json_string(f, d->what);
        fprintf(f, ", \"bytes_per_elem\": %.0f, \"best_s\": %.9g, \"median_s\": %.9g, "
                "\"best_gbs\": %.4f, \"median_gbs\": %.4f", d->bytes_per_elem, c->best[k], c->median[k],
                gbs(c, k, c->best[k]), gbs(c, k, c->median[k]));
        if (d->limit >= 0)
            fprintf(f, ", \"limit\": \"%s\", \"ratio_best\": %.4f, \"ratio_median\": %.4f, \"verified\": %s",
                    k_kernels[d->limit].name, c->best[d->limit] / c->best[k],
                    c->median[d->limit] / c->median[k], c->verified[k] == 1 ? "true" : "false");
        fprintf(f, ", \"times_s\": [");
        for (int r = 0; r < repeats; r++) fprintf(f, "%s%.9g", r ? ", " : "", c->times[k][r]);
        fprintf(f, "]}%s\n", k + 1 < K_COUNT ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0) return cli_fail("bench", "cannot write '%s'", path);
    return CLI_OK;
}

static int run_bench(bench_ctx* c, int repeats, int warmup, const char* json) {
    int rc;
    // The executor decides the default thread count; the C pool then uses the same number.
    if ((rc = setup_executor(c)) != CLI_OK) return rc;
    c->pool = bench_pool_create(c->threads);
    if (!c->pool) return cli_fail("bench", "cannot start %d threads", c->threads);
    fprintf(stderr, "bench: %zu f32 elements, %d threads: allocating and initialising 2 x 5 arrays "
            "(%.0f MiB)...\n", c->n, c->threads, 10.0 * (double)c->n * 4.0 / (1024.0 * 1024.0));
    if (bench_arrays_alloc(c->pool, c->n, &c->arr) != 0)
        return cli_fail("bench", "out of memory allocating 5 arrays of %zu floats", c->n);
    if ((rc = setup_isa_buffers(c)) != CLI_OK) return rc;
    for (int k = 0; k < K_COUNT; k++) {
        c->times[k] = calloc((size_t)repeats, sizeof(double));
        if (!c->times[k]) return cli_fail("bench", "out of memory");
    }

    int tty = isatty(fileno(stderr));
    double start = now_s();
    for (int r = 0; r < warmup + repeats; r++) {
        for (int k = 0; k < K_COUNT; k++) {
            double t = run_once(c, k);
            if (t < 0) return CLI_FAIL;
            if (r >= warmup) c->times[k][r - warmup] = t;
        }
        // On a terminal one line is rewritten in place; in a log, every 5th round gets a line.
        if (tty || r + 1 == warmup + repeats || (r + 1) % 5 == 0)
            fprintf(stderr, "%sbench: round %d/%d (%s) %.1f s%s", tty ? "\r" : "", r + 1,
                    warmup + repeats, r < warmup ? "warm-up" : "timed", now_s() - start, tty ? "" : "\n");
    }
    if (tty) fputc('\n', stderr);

    for (int k = 0; k < K_COUNT; k++) {
        double* sorted = malloc((size_t)repeats * sizeof(double));
        if (!sorted) return cli_fail("bench", "out of memory");
        memcpy(sorted, c->times[k], (size_t)repeats * sizeof(double));
        qsort(sorted, (size_t)repeats, sizeof(double), cmp_double);
        c->best[k] = sorted[0];
        c->median[k] = (repeats % 2) ? sorted[repeats / 2]
                                     : 0.5 * (sorted[repeats / 2 - 1] + sorted[repeats / 2]);
        free(sorted);
    }
    if ((rc = verify(c)) != CLI_OK) return rc;
    char cpu[256];
    cpu_name(c, cpu, sizeof cpu);
    print_table(c, cpu, repeats, warmup);
    if (json && (rc = write_json(c, json, cpu, repeats, warmup)) != CLI_OK) return rc;
    if (json) fprintf(stderr, "bench: wrote %s\n", json);
    if (c->verified[K_ISA_ADD] != 1 || c->verified[K_ISA_FUSED] != 1)
        return cli_fail("bench", "the ISA kernels produced wrong results (see above)");
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
            if (m > 0 && strcmp(v, "vector_add") == 0) { fputs(k_vector_add_text, stdout); return CLI_OK; }
            if (m > 0 && strcmp(v, "fused_chain") == 0) { fputs(k_fused_chain_text, stdout); return CLI_OK; }
            return cli_usage("bench", "--print-program expects vector_add or fused_chain");
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

    bench_ctx c;
    memset(&c, 0, sizeof c);
    c.n = (size_t)size;
    c.threads = (int)threads;
    c.block = (uint32_t)block;
    for (int k = 0; k < K_COUNT; k++) c.verified[k] = -1;
    int rc = run_bench(&c, (int)repeats, (int)warmup, json);
    teardown(&c);
    return rc;
}
