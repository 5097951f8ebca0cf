// bench_ctx.h — the cases of `hologram bench` and the state they share. A case is a kernel run
// over the same n f32 elements: a plain-C STREAM-like limit (bench_stream.c), an ISA program
// (bench_isa.c) or an op-library call (bench_ops.c). Each measured case names the limit case of
// the same memory traffic and the ratio it should reach. Latency cases are in bench_latency.c.
#ifndef HG_CLI_BENCH_CTX_H
#define HG_CLI_BENCH_CTX_H
#include <stddef.h>
#include <stdint.h>

#include "bench_stream.h"
#include "hologram.h"

typedef enum bench_case_id {
    // C limits: each traffic pattern in its plain, vector and non-temporal builds
    B_C_COPY, B_C_COPY_VECTOR, B_C_COPY_NT,
    B_C_ADD, B_C_ADD_VECTOR, B_C_ADD_NT,
    B_C_TRIAD, B_C_TRIAD_VECTOR, B_C_TRIAD_NT,
    B_C_FUSED, B_C_FUSED_VECTOR, B_C_FUSED_NT,
    B_C_SUM, B_C_SUM_VECTOR,
    // ISA programs launched with hg_launch
    B_ISA_ADD, B_ISA_FUSED, B_ISA_EXP, B_ISA_TANH, B_ISA_SIGMOID, B_ISA_GELU,
    // op library (eager ops and a compiled graph)
    B_OP_ADD, B_GRAPH_FUSED, B_OP_SUM, B_OP_EXP, B_OP_TANH, B_OP_SIGMOID, B_OP_GELU,
    B_CASE_COUNT
} bench_case_id;

#define B_FIRST_ISA B_ISA_ADD
#define B_FIRST_OP B_OP_ADD

typedef struct bench_case {
    const char* name;
    const char* kind;         // "c", "isa", "op", "graph"
    const char* what;
    double bytes_per_elem;    // memory traffic per element
    int limit;                // a C case with the same traffic (its kernel's builds are the
                              // limit: the fastest of them), or -1
    double target;            // ratio limit time / case time the case should reach (0: none)
    int stream;               // C cases: the stream_kernel and stream_variant they run
    int variant;
} bench_case;

extern const bench_case k_bench_cases[B_CASE_COUNT];

typedef struct bench_ops bench_ops;

// One latency measurement: ns per call, best and median over batches.
typedef struct bench_latency {
    const char* name;
    const char* what;
    double target_ns;         // 0: none (reported for comparison)
    double best_ns, median_ns;
    double times_ns[128];     // ns per call of each batch, in run order
    int ntimes;
    char skipped[256];        // non-empty: not measured, and why
} bench_latency;

enum { B_LAT_LAUNCH, B_LAT_OP_ADD, B_LAT_COUNT };

typedef struct bench_ctx {
    size_t n;
    int threads;
    uint32_t block;
    int repeats, warmup;
    bench_pool* pool;
    bench_arrays arr;
    hg_executor ex;
    int have_ex;
    // ISA side: inputs A B C (copies of arr.a/b/c), outputs D (two-input and unary cases) and
    // Y (fused chain).
    hg_buffer A, B, C, D, Y;
    int nbufs;
    hg_program prog[B_CASE_COUNT];  // ISA cases only
    bench_ops* ops;
    char skipped[B_CASE_COUNT][256];  // non-empty: the case is not run, and why
    double* times[B_CASE_COUNT];
    double best[B_CASE_COUNT], median[B_CASE_COUNT];
    int verified[B_CASE_COUNT];       // -1 not checked, 0 wrong, 1 right
    bench_latency lat[B_LAT_COUNT];
    float* host;                      // n floats: results read back for checking
} bench_ctx;

// bench_isa.c
const char* bench_program_text(const char* name);   // embedded program by name, or NULL
const char* bench_program_names(void);              // "vector_add, fused_chain, ..."
int bench_isa_setup(bench_ctx* c);                  // CLI_OK or CLI_FAIL (after a message)
hg_status bench_isa_run(bench_ctx* c, int k);
int bench_isa_verify(bench_ctx* c, int k);          // 1 right, 0 wrong, -1 read error
void bench_isa_teardown(bench_ctx* c);

// bench_ops.c: setup marks the cases it cannot run as skipped (with the library's message).
void bench_ops_setup(bench_ctx* c);
hg_status bench_ops_run(bench_ctx* c, int k);
int bench_ops_verify(bench_ctx* c, int k);
void bench_ops_teardown(bench_ctx* c);
// Per-call latency of a 1-element eager hg_binary add (filled into *out).
void bench_ops_latency(bench_ctx* c, bench_latency* out);

// bench_latency.c: fills c->lat.
void bench_latency_run(bench_ctx* c);
// Best and median of n times (sorts t).
void bench_best_median(double* t, int n, double* best, double* median);

// bench_report.c
// The limit of measured case k: the fastest (best or median time) of the C builds of its
// traffic that ran; *winner names it.
double bench_limit_time(const bench_ctx* c, int k, int median, const char** winner);
void bench_print_table(const bench_ctx* c, const char* cpu);
int bench_write_json(const bench_ctx* c, const char* path, const char* cpu);

// Double references of the unary cases (gelu: tanh form).
double bench_ref_exp(double x);
double bench_ref_tanh(double x);
double bench_ref_sigmoid(double x);
double bench_ref_gelu(double x);
// Checks got[i] against f(in[i]) for every 7th element: |got - want| <= rel*|want| + abs_tol.
// Returns the number of bad elements, printing the first.
size_t bench_check_unary(const char* name, const float* in, const float* got, size_t n,
                         double (*f)(double), double rel, double abs_tol);

double bench_now_s(void);

#endif
