// CPU backend through its vtable: launch shapes and special registers, divergence, shared
// memory and bar, atomics, out-of-bounds errors (nothing written out of bounds), bound ranges,
// thread counts, f16/bf16 memory, and the portable vs AVX2 kernel sets bit for bit.
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "backends/backend.h"
#include "backends/cpu/cpu_kernels.h"
#include "base/dtype.h"
#include "hg_test.h"
#include "isa/program.h"

static const hg_backend_vtable* vt = &hg_cpu_backend;

static void emit(hg_prog* p, unsigned op, unsigned type, unsigned aux, unsigned mem, hg_operand d,
                 hg_operand a, hg_operand b, hg_operand c) {
    hg_instr in = {(uint16_t)op, (uint8_t)type, (uint8_t)aux, mem, d, {a, b, c}};
    hg_prog_emit(p, &in);
}
#define N_ hg_none()
#define R(i) hg_reg(i)
#define S(s) hg_sreg(HG_SREG_##s)
#define IMM(v) hg_imm_i64(v)
static uint32_t reg(hg_prog* p, const char* name, hg_dtype t) {
    uint32_t r = 0;
    hg_prog_add_reg(p, name, t, &r);
    return r;
}
static uint32_t buf(hg_prog* p, const char* name, hg_dtype t, int is_const) {
    uint32_t r = 0;
    hg_prog_add_param(p, name, HG_PARAM_BUFFER, t, is_const, &r);
    return r;
}

// Compiles and launches; returns the launch status.
static hg_status run(void* st, hg_prog* p, hg_launch_config cfg, const hg_bound_arg* args,
                     size_t nargs) {
    hg_status s = hg_prog_validate(p);
    if (s) {
        fprintf(stderr, "validate: %s\n", hg_last_error());
        return s;
    }
    void* k;
    if ((s = vt->kernel_compile(st, p, &k))) return s;
    s = vt->kernel_launch(st, k, &cfg, args, nargs);
    vt->kernel_destroy(st, k);
    return s;
}

static void* make_exec(int threads) {
    hg_executor_options o = {HG_BACKEND_CPU, 0, threads};
    void* st = NULL;
    CHECK_OK(vt->executor_create(&o, &st));
    return st;
}

static hg_launch_config cfg3(uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx, uint32_t by,
                             uint32_t bz, uint32_t shared) {
    hg_launch_config c = {{gx, gy, gz}, {bx, by, bz}, shared};
    return c;
}

// ---- special registers over 1-D, 2-D, 3-D shapes -------------------------------------------
// out[lin * 15 + k] = special k, lin = (gid.z * H + gid.y) * W + gid.x.
static void test_specials(int threads, int with_bar) {
    void* st = make_exec(threads);
    const hg_launch_config shapes[] = {cfg3(7, 1, 1, 33, 1, 1, 0), cfg3(3, 2, 1, 4, 5, 1, 0),
                                       cfg3(3, 2, 2, 4, 3, 2, 0), cfg3(1, 1, 1, 1, 1, 1, 0),
                                       cfg3(5, 3, 2, 1, 2, 3, 0), cfg3(2000, 1, 1, 3, 1, 1, 0)};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        hg_launch_config c = shapes[si];
        uint64_t W = (uint64_t)c.grid.x * c.block.x, H = (uint64_t)c.grid.y * c.block.y,
                 D = (uint64_t)c.grid.z * c.block.z, total = W * H * D;
        hg_prog* p = hg_prog_new("specials");
        uint32_t out = buf(p, "out", HG_DTYPE_U32, 0);
        uint32_t w = reg(p, "w", HG_DTYPE_U32), lin = reg(p, "lin", HG_DTYPE_U32),
                 t = reg(p, "t", HG_DTYPE_U32);
        if (with_bar) emit(p, HG_OP_BAR, 0, 0, 0, N_, N_, N_, N_);
        emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(t), S(NCTAID_Y), S(NTID_Y), N_);   // H
        emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(lin), S(GID_Z), R(t), N_);
        emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(lin), R(lin), S(GID_Y), N_);
        emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(w), S(NCTAID_X), S(NTID_X), N_);   // W
        emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(lin), R(lin), R(w), N_);
        emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(lin), R(lin), S(GID_X), N_);
        emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(lin), R(lin), hg_imm_u64(15), N_);
        for (int k = 0; k < 15; k++) {
            emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(t), R(lin), hg_imm_u64((uint64_t)k), N_);
            emit(p, HG_OP_ST, HG_DTYPE_U32, HG_SPACE_GLOBAL, out, N_, R(t), hg_sreg((hg_special)k), N_);
        }
        uint32_t* o;
        CHECK_OK(vt->mem_alloc(st, total * 15 * 4, 1, (void**)&o));
        hg_bound_arg args[1] = {{o, total * 15, 0}};
        CHECK_OK(run(st, p, c, args, 1));
        int bad = 0;
        for (uint64_t z = 0; z < D; z++)
            for (uint64_t y = 0; y < H; y++)
                for (uint64_t x = 0; x < W; x++) {
                    const uint32_t* e = o + ((z * H + y) * W + x) * 15;
                    uint32_t want[15] = {
                        (uint32_t)(x % c.block.x), (uint32_t)(y % c.block.y), (uint32_t)(z % c.block.z),
                        c.block.x, c.block.y, c.block.z,
                        (uint32_t)(x / c.block.x), (uint32_t)(y / c.block.y), (uint32_t)(z / c.block.z),
                        c.grid.x, c.grid.y, c.grid.z, (uint32_t)x, (uint32_t)y, (uint32_t)z};
                    if (memcmp(e, want, sizeof want)) bad++;
                }
        CHECK_MSG(bad == 0, "shape %zu threads %d bar %d: %d lanes with wrong specials", si, threads,
                  with_bar, bad);
        vt->mem_free(st, o);
        hg_prog_free(p);
    }
    vt->executor_destroy(st);
}

// ---- divergence -----------------------------------------------------------------------------
// x = gid.x; if x < n:
//   if x%3==0 { acc = 1; if x%2==0 acc += 10 else acc += 20 } else { acc = 100 }
//   k = 0; loop { if k >= x%7 { break }; acc += 1000; k += 1; break (k == 5) }
//   if x%5 == 4 exit
//   out[x] = acc
static int32_t div_ref(uint32_t x, int32_t init) {
    int32_t acc;
    if (x % 3 == 0) acc = 1 + (x % 2 == 0 ? 10 : 20);
    else acc = 100;
    uint32_t k = 0;
    for (;;) {
        if (k >= x % 7) break;
        acc += 1000;
        k++;
        if (k == 5) break;
    }
    if (x % 5 == 4) return init;
    return acc;
}

static hg_prog* div_prog(void) {
    hg_prog* p = hg_prog_new("diverge");
    uint32_t out = buf(p, "out", HG_DTYPE_I32, 0);
    uint32_t n = 0;
    hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, &n);
    uint32_t x = reg(p, "x", HG_DTYPE_U32), acc = reg(p, "acc", HG_DTYPE_I32),
             k = reg(p, "k", HG_DTYPE_U32), t = reg(p, "t", HG_DTYPE_U32),
             q = reg(p, "q", HG_DTYPE_BOOL), pr = reg(p, "pr", HG_DTYPE_BOOL);
    emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(x), S(GID_X), N_, N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_LT, 0, R(pr), R(x), hg_param(n), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(pr), N_, N_);
    emit(p, HG_OP_REM, HG_DTYPE_U32, 0, 0, R(t), R(x), IMM(3), N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(q), R(t), IMM(0), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_MOV, HG_DTYPE_I32, 0, 0, R(acc), IMM(1), N_, N_);
    emit(p, HG_OP_REM, HG_DTYPE_U32, 0, 0, R(t), R(x), IMM(2), N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(q), R(t), IMM(0), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_I32, 0, 0, R(acc), R(acc), IMM(10), N_);
    emit(p, HG_OP_ELSE, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_I32, 0, 0, R(acc), R(acc), IMM(20), N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_ELSE, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_MOV, HG_DTYPE_I32, 0, 0, R(acc), IMM(100), N_, N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(k), IMM(0), N_, N_);
    emit(p, HG_OP_LOOP, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_REM, HG_DTYPE_U32, 0, 0, R(t), R(x), IMM(7), N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_GE, 0, R(q), R(k), R(t), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_BREAK, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_I32, 0, 0, R(acc), R(acc), IMM(1000), N_);
    emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(k), R(k), IMM(1), N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(q), R(k), IMM(5), N_);
    emit(p, HG_OP_BREAK, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_ENDLOOP, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_REM, HG_DTYPE_U32, 0, 0, R(t), R(x), IMM(5), N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(q), R(t), IMM(4), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_EXIT, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_ST, HG_DTYPE_I32, HG_SPACE_GLOBAL, out, N_, R(x), R(acc), N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    return p;
}

static void test_divergence(void) {
    const uint32_t n = 10007;
    int32_t* ref = malloc(n * 4);
    for (uint32_t x = 0; x < n; x++) ref[x] = div_ref(x, -7);
    const int threads[] = {1, 2, 3, 7};
    for (int ti = 0; ti < 4; ti++) {
        void* st = make_exec(threads[ti]);
        hg_prog* p = div_prog();
        int32_t* o;
        CHECK_OK(vt->mem_alloc(st, n * 4, 1, (void**)&o));
        for (uint32_t i = 0; i < n; i++) o[i] = -7;
        hg_bound_arg args[2] = {{o, n, 0}, {NULL, 0, n}};
        CHECK_OK(run(st, p, hg_launch_1d(n, 128), args, 2));
        CHECK_MSG(!memcmp(o, ref, n * 4), "divergence kernel differs from the C reference with %d "
                  "threads", threads[ti]);
        vt->mem_free(st, o);
        hg_prog_free(p);
        vt->executor_destroy(st);
    }
    free(ref);
}

// ---- shared memory + bar reduction ------------------------------------------------------------
static void test_reduction(int dynamic, int threads) {
    void* st = make_exec(threads);
    const uint32_t B = 256, G = 37, n = B * G - 5;
    hg_prog* p = hg_prog_new("reduce");
    uint32_t a = buf(p, "a", HG_DTYPE_U32, 1), out = buf(p, "out", HG_DTYPE_U32, 0);
    uint32_t sh = 0, np = 0;
    hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, &np);
    hg_prog_add_shared(p, "sh", HG_DTYPE_U32, dynamic ? 0 : B, &sh);
    uint32_t v = reg(p, "v", HG_DTYPE_U32), w = reg(p, "w", HG_DTYPE_U32),
             s = reg(p, "s", HG_DTYPE_U32), t = reg(p, "t", HG_DTYPE_U32),
             q = reg(p, "q", HG_DTYPE_BOOL), g = reg(p, "g", HG_DTYPE_U32),
             done = reg(p, "done", HG_DTYPE_BOOL);
    emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(g), S(GID_X), N_, N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_LT, 0, R(q), R(g), hg_param(np), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_LD, HG_DTYPE_U32, HG_SPACE_GLOBAL, a, R(v), R(g), N_, N_);
    emit(p, HG_OP_ST, HG_DTYPE_U32, HG_SPACE_SHARED, sh, N_, S(TID_X), R(v), N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_BAR, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(s), IMM(B / 2), N_, N_);
    emit(p, HG_OP_LOOP, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(done), R(s), IMM(0), N_);
    emit(p, HG_OP_BREAK, 0, 0, 0, N_, R(done), N_, N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_LT, 0, R(q), S(TID_X), R(s), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(t), S(TID_X), R(s), N_);
    emit(p, HG_OP_LD, HG_DTYPE_U32, HG_SPACE_SHARED, sh, R(w), R(t), N_, N_);
    emit(p, HG_OP_LD, HG_DTYPE_U32, HG_SPACE_SHARED, sh, R(v), S(TID_X), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(v), R(v), R(w), N_);
    emit(p, HG_OP_ST, HG_DTYPE_U32, HG_SPACE_SHARED, sh, N_, S(TID_X), R(v), N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_BAR, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_SHR, HG_DTYPE_U32, 0, 0, R(s), R(s), IMM(1), N_);
    emit(p, HG_OP_ENDLOOP, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(q), S(TID_X), IMM(0), N_);
    emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_LD, HG_DTYPE_U32, HG_SPACE_SHARED, sh, R(v), IMM(0), N_, N_);
    emit(p, HG_OP_ST, HG_DTYPE_U32, HG_SPACE_GLOBAL, out, N_, S(CTAID_X), R(v), N_);
    emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
    uint32_t *ha, *ho;
    CHECK_OK(vt->mem_alloc(st, n * 4, 1, (void**)&ha));
    CHECK_OK(vt->mem_alloc(st, G * 4, 1, (void**)&ho));
    for (uint32_t i = 0; i < n; i++) ha[i] = i * 7 + 3;
    hg_bound_arg args[3] = {{ha, n, 0}, {ho, G, 0}, {NULL, 0, n}};
    hg_launch_config c = hg_launch_1d(n, B);
    c.shared_bytes = dynamic ? B * 4 : 0;
    // Run twice: shared memory must start at zero for every block (the tail block relies on it).
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(run(st, p, c, args, 3));
        int bad = 0;
        for (uint32_t b = 0; b < G; b++) {
            uint32_t want = 0;
            for (uint32_t i = b * B; i < (b + 1) * B && i < n; i++) want += ha[i];
            bad += ho[b] != want;
        }
        CHECK_MSG(bad == 0, "reduction (dynamic %d, %d threads): %d wrong block sums", dynamic,
                  threads, bad);
    }
    vt->mem_free(st, ha);
    vt->mem_free(st, ho);
    hg_prog_free(p);
    vt->executor_destroy(st);
}

// ---- atomics ------------------------------------------------------------------------------------
static void test_atomics(int threads) {
    void* st = make_exec(threads);
    const uint32_t n = 256 * 97;  // whole blocks: every lane takes part
    hg_prog* p = hg_prog_new("atoms");
    uint32_t si = buf(p, "si", HG_DTYPE_I64, 0), sf = buf(p, "sf", HG_DTYPE_F64, 0),
             mm = buf(p, "mm", HG_DTYPE_I32, 0), cnt = buf(p, "cnt", HG_DTYPE_U32, 0),
             fm = buf(p, "fm", HG_DTYPE_F32, 0);
    uint32_t g = reg(p, "g", HG_DTYPE_U32), x = reg(p, "x", HG_DTYPE_I64),
             f = reg(p, "f", HG_DTYPE_F64), m = reg(p, "m", HG_DTYPE_I32),
             old = reg(p, "old", HG_DTYPE_U32), nw = reg(p, "nw", HG_DTYPE_U32),
             got = reg(p, "got", HG_DTYPE_U32), q = reg(p, "q", HG_DTYPE_BOOL),
             ff = reg(p, "ff", HG_DTYPE_F32);
    emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(g), S(GID_X), N_, N_);
    emit(p, HG_OP_CVT, HG_DTYPE_I64, HG_DTYPE_U32, 0, R(x), R(g), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_I64, 0, 0, R(x), R(x), IMM(1), N_);
    emit(p, HG_OP_ATOM, HG_DTYPE_I64, hg_atom_aux(HG_ATOMIC_ADD, HG_SPACE_GLOBAL), si, N_, IMM(0), R(x), N_);
    emit(p, HG_OP_CVT, HG_DTYPE_F64, HG_DTYPE_I64, 0, R(f), R(x), N_, N_);
    emit(p, HG_OP_ATOM, HG_DTYPE_F64, hg_atom_aux(HG_ATOMIC_ADD, HG_SPACE_GLOBAL), sf, N_, IMM(0), R(f), N_);
    // m = (g * 7919) % 100003 - 50000: min and max over all lanes
    emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(old), R(g), IMM(7919), N_);
    emit(p, HG_OP_REM, HG_DTYPE_U32, 0, 0, R(old), R(old), IMM(100003), N_);
    emit(p, HG_OP_CVT, HG_DTYPE_I32, HG_DTYPE_U32, 0, R(m), R(old), N_, N_);
    emit(p, HG_OP_SUB, HG_DTYPE_I32, 0, 0, R(m), R(m), IMM(50000), N_);
    emit(p, HG_OP_ATOM, HG_DTYPE_I32, hg_atom_aux(HG_ATOMIC_MIN, HG_SPACE_GLOBAL), mm, N_, IMM(0), R(m), N_);
    emit(p, HG_OP_ATOM, HG_DTYPE_I32, hg_atom_aux(HG_ATOMIC_MAX, HG_SPACE_GLOBAL), mm, N_, IMM(1), R(m), N_);
    emit(p, HG_OP_CVT, HG_DTYPE_F32, HG_DTYPE_I32, 0, R(ff), R(m), N_, N_);
    emit(p, HG_OP_ATOM, HG_DTYPE_F32, hg_atom_aux(HG_ATOMIC_MAX, HG_SPACE_GLOBAL), fm, N_, IMM(0), R(ff), N_);
    // cas-based counter
    emit(p, HG_OP_LOOP, 0, 0, 0, N_, N_, N_, N_);
    emit(p, HG_OP_LD, HG_DTYPE_U32, HG_SPACE_GLOBAL, cnt, R(old), IMM(0), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(nw), R(old), IMM(1), N_);
    emit(p, HG_OP_ATOM, HG_DTYPE_U32, hg_atom_aux(HG_ATOMIC_CAS, HG_SPACE_GLOBAL), cnt, R(got), IMM(0), R(old), R(nw));
    emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_EQ, 0, R(q), R(got), R(old), N_);
    emit(p, HG_OP_BREAK, 0, 0, 0, N_, R(q), N_, N_);
    emit(p, HG_OP_ENDLOOP, 0, 0, 0, N_, N_, N_, N_);
    int64_t* hsi;
    double* hsf;
    int32_t* hmm;
    uint32_t* hc;
    float* hfm;
    CHECK_OK(vt->mem_alloc(st, 8, 1, (void**)&hsi));
    CHECK_OK(vt->mem_alloc(st, 8, 1, (void**)&hsf));
    CHECK_OK(vt->mem_alloc(st, 8, 1, (void**)&hmm));
    CHECK_OK(vt->mem_alloc(st, 4, 1, (void**)&hc));
    CHECK_OK(vt->mem_alloc(st, 4, 1, (void**)&hfm));
    hmm[0] = INT32_MAX;
    hmm[1] = INT32_MIN;
    hfm[0] = -INFINITY;
    hg_bound_arg args[5] = {{hsi, 1, 0}, {hsf, 1, 0}, {hmm, 2, 0}, {hc, 1, 0}, {hfm, 1, 0}};
    CHECK_OK(run(st, p, hg_launch_1d(n, 256), args, 5));
    int32_t mn = INT32_MAX, mx = INT32_MIN;
    for (uint32_t i = 0; i < n; i++) {
        int32_t v = (int32_t)((i * 7919u) % 100003u) - 50000;
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    CHECK(hsi[0] == (int64_t)n * (n + 1) / 2);
    CHECK(hsf[0] == (double)n * (n + 1) / 2);
    CHECK(hmm[0] == mn && hmm[1] == mx);
    CHECK(hfm[0] == (float)mx);
    CHECK_MSG(hc[0] == n, "cas counter %u, want %u (%d threads)", hc[0], n, threads);
    vt->mem_free(st, hsi); vt->mem_free(st, hsf); vt->mem_free(st, hmm);
    vt->mem_free(st, hc); vt->mem_free(st, hfm);
    hg_prog_free(p);
    vt->executor_destroy(st);
}

// ---- out of bounds ------------------------------------------------------------------------------
static void test_oob(void) {
    void* st = make_exec(2);
    // load: a has 100 elements, lanes read a[gid.x + 5]
    hg_prog* p = hg_prog_new("oobld");
    uint32_t a = buf(p, "a", HG_DTYPE_F32, 1), o = buf(p, "o", HG_DTYPE_F32, 0);
    uint32_t i = reg(p, "i", HG_DTYPE_I32), x = reg(p, "x", HG_DTYPE_F32);
    emit(p, HG_OP_ADD, HG_DTYPE_I32, 0, 0, R(i), S(GID_X), IMM(5), N_);
    hg_prog_free(p);  // %gid.x is u32: build with a cvt instead
    p = hg_prog_new("oobld");
    a = buf(p, "a", HG_DTYPE_F32, 1);
    o = buf(p, "o", HG_DTYPE_F32, 0);
    i = reg(p, "i", HG_DTYPE_I32);
    x = reg(p, "x", HG_DTYPE_F32);
    emit(p, HG_OP_CVT, HG_DTYPE_I32, HG_DTYPE_U32, 0, R(i), S(GID_X), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_I32, 0, 0, R(i), R(i), IMM(5), N_);
    emit(p, HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, a, R(x), R(i), N_, N_);
    emit(p, HG_OP_ST, HG_DTYPE_F32, HG_SPACE_GLOBAL, o, N_, S(GID_X), R(x), N_);
    float *ha, *ho;
    CHECK_OK(vt->mem_alloc(st, 100 * 4, 1, (void**)&ha));
    CHECK_OK(vt->mem_alloc(st, 100 * 4, 1, (void**)&ho));
    hg_bound_arg args[2] = {{ha, 100, 0}, {ho, 100, 0}};
    CHECK_STATUS(run(st, p, hg_launch_1d(100, 32), args, 2), HG_ERR_OUT_OF_BOUNDS);
    const char* m = hg_last_error();
    CHECK_MSG(strstr(m, "lane (31,0,0)") && strstr(m, "block (2,0,0)") && strstr(m, "instruction 2") &&
              strstr(m, "ld.global.f32") && strstr(m, "100"), "message: %s", m);
    hg_prog_free(p);

    // store with a guard region: buffer of 200, range (50, 100); lanes store to 2*gid.x
    p = hg_prog_new("oobst");
    o = buf(p, "o", HG_DTYPE_U32, 0);
    uint32_t t = reg(p, "t", HG_DTYPE_U32);
    emit(p, HG_OP_MUL, HG_DTYPE_U32, 0, 0, R(t), S(GID_X), IMM(2), N_);
    emit(p, HG_OP_ST, HG_DTYPE_U32, HG_SPACE_GLOBAL, o, N_, R(t), S(GID_X), N_);
    uint32_t* hb;
    CHECK_OK(vt->mem_alloc(st, 200 * 4, 1, (void**)&hb));
    for (int k = 0; k < 200; k++) hb[k] = 0xdeadbeef;
    hg_bound_arg sargs[1] = {{hb + 50, 100, 0}};
    CHECK_STATUS(run(st, p, hg_launch_1d(64, 64), sargs, 1), HG_ERR_OUT_OF_BOUNDS);
    m = hg_last_error();
    CHECK_MSG(strstr(m, "index 100") && strstr(m, "lane (50,0,0)") && strstr(m, "st.global.u32"),
              "message: %s", m);
    int guard_ok = 1;
    for (int k = 0; k < 50; k++) guard_ok &= hb[k] == 0xdeadbeef && hb[150 + k] == 0xdeadbeef;
    CHECK_MSG(guard_ok, "a store wrote outside the bound range");
    // negative index (i32) on a store
    hg_prog_free(p);
    p = hg_prog_new("oobneg");
    o = buf(p, "o", HG_DTYPE_U32, 0);
    uint32_t si = reg(p, "si", HG_DTYPE_I32);
    emit(p, HG_OP_CVT, HG_DTYPE_I32, HG_DTYPE_U32, 0, R(si), S(GID_X), N_, N_);
    emit(p, HG_OP_SUB, HG_DTYPE_I32, 0, 0, R(si), R(si), IMM(1), N_);
    emit(p, HG_OP_ST, HG_DTYPE_U32, HG_SPACE_GLOBAL, o, N_, R(si), S(GID_X), N_);
    CHECK_STATUS(run(st, p, hg_launch_1d(8, 8), sargs, 1), HG_ERR_OUT_OF_BOUNDS);
    CHECK_MSG(strstr(hg_last_error(), "index -1"), "message: %s", hg_last_error());
    CHECK(hb[49] == 0xdeadbeef);
    hg_prog_free(p);
    vt->mem_free(st, ha); vt->mem_free(st, ho); vt->mem_free(st, hb);
    vt->executor_destroy(st);
}

// ---- c = a + b over bound ranges, thread counts, fused store -----------------------------------
static void test_vadd_ranges(void) {
    const uint32_t n = 50000;
    for (int ti = 0; ti < 4; ti++) {
        const int threads[] = {1, 2, 3, 7};
        void* st = make_exec(threads[ti]);
        hg_prog* p = hg_prog_new("vadd");
        uint32_t a = buf(p, "a", HG_DTYPE_F32, 1), b = buf(p, "b", HG_DTYPE_F32, 1),
                 c = buf(p, "c", HG_DTYPE_F32, 0), np = 0;
        hg_prog_add_param(p, "n", HG_PARAM_SCALAR, HG_DTYPE_U32, 0, &np);
        uint32_t i = reg(p, "i", HG_DTYPE_U32), q = reg(p, "q", HG_DTYPE_BOOL),
                 x = reg(p, "x", HG_DTYPE_F32), y = reg(p, "y", HG_DTYPE_F32);
        emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(i), S(GID_X), N_, N_);
        emit(p, HG_OP_CMP, HG_DTYPE_U32, HG_CMP_LT, 0, R(q), R(i), hg_param(np), N_);
        emit(p, HG_OP_IF, 0, 0, 0, N_, R(q), N_, N_);
        emit(p, HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, a, R(x), R(i), N_, N_);
        emit(p, HG_OP_LD, HG_DTYPE_F32, HG_SPACE_GLOBAL, b, R(y), R(i), N_, N_);
        emit(p, HG_OP_ADD, HG_DTYPE_F32, 0, 0, R(x), R(x), R(y), N_);
        emit(p, HG_OP_ST, HG_DTYPE_F32, HG_SPACE_GLOBAL, c, N_, R(i), R(x), N_);
        emit(p, HG_OP_ENDIF, 0, 0, 0, N_, N_, N_, N_);
        float* mem;
        CHECK_OK(vt->mem_alloc(st, (3 * n + 30) * 4, 1, (void**)&mem));
        for (uint32_t k = 0; k < 3 * n + 30; k++) mem[k] = (float)k * 0.25f;
        // a = mem[10 ..], b = mem[n + 20 ..], c = mem[2n + 30 ..]
        hg_bound_arg args[4] = {{mem + 10, n, 0}, {mem + n + 20, n, 0}, {mem + 2 * n + 30, n, 0},
                                {NULL, 0, n}};
        CHECK_OK(run(st, p, hg_launch_1d(n, 256), args, 4));
        int bad = 0;
        for (uint32_t k = 0; k < n; k++)
            bad += mem[2 * n + 30 + k] != (float)(10 + k) * 0.25f + (float)(n + 20 + k) * 0.25f;
        CHECK_MSG(bad == 0, "vadd over ranges: %d wrong (%d threads)", bad, threads[ti]);
        // in place: a = a + b, reading and writing the same range
        hg_bound_arg args2[4] = {{mem + 10, n, 0}, {mem + n + 20, n, 0}, {mem + 10, n, 0}, {NULL, 0, n}};
        CHECK_OK(run(st, p, hg_launch_1d(n, 256), args2, 4));
        bad = 0;
        for (uint32_t k = 0; k < n; k++)
            bad += mem[10 + k] != (float)(10 + k) * 0.25f + (float)(n + 20 + k) * 0.25f;
        CHECK_MSG(bad == 0, "in-place vadd: %d wrong (%d threads)", bad, threads[ti]);
        vt->mem_free(st, mem);
        hg_prog_free(p);
        vt->executor_destroy(st);
    }
}

// A store to a buffer the kernel has loaded from (shifted): borrowed lanes must be given back.
static void test_load_store_hazard(void) {
    void* st = make_exec(1);
    const uint32_t n = 8192;
    hg_prog* p = hg_prog_new("shift");
    uint32_t a = buf(p, "a", HG_DTYPE_I32, 0);
    uint32_t i = reg(p, "i", HG_DTYPE_U32), j = reg(p, "j", HG_DTYPE_U32),
             x = reg(p, "x", HG_DTYPE_I32), y = reg(p, "y", HG_DTYPE_I32);
    // x = a[i]; y = a[i + 1]; a[i] = y (write over x's source); a[i] += x... via st of x+y
    emit(p, HG_OP_MOV, HG_DTYPE_U32, 0, 0, R(i), S(GID_X), N_, N_);
    emit(p, HG_OP_ADD, HG_DTYPE_U32, 0, 0, R(j), R(i), IMM(1), N_);
    emit(p, HG_OP_LD, HG_DTYPE_I32, HG_SPACE_GLOBAL, a, R(x), R(i), N_, N_);
    emit(p, HG_OP_LD, HG_DTYPE_I32, HG_SPACE_GLOBAL, a, R(y), R(j), N_, N_);
    emit(p, HG_OP_ST, HG_DTYPE_I32, HG_SPACE_GLOBAL, a, N_, R(i), R(y), N_);
    emit(p, HG_OP_ADD, HG_DTYPE_I32, 0, 0, R(x), R(x), R(x), N_);
    emit(p, HG_OP_ST, HG_DTYPE_I32, HG_SPACE_GLOBAL, a, N_, R(j), R(x), N_);
    int32_t* h;
    CHECK_OK(vt->mem_alloc(st, (n + 1) * 4, 1, (void**)&h));
    for (uint32_t k = 0; k <= n; k++) h[k] = (int32_t)k;
    hg_bound_arg args[1] = {{h, n + 1, 0}};
    // one block of 1024 lanes: lanes run each instruction together, so a[k] = 2*(k-1) for k >= 1
    CHECK_OK(run(st, p, hg_launch_1d(1024, 1024), args, 1));
    int bad = h[0] != 1;
    for (uint32_t k = 1; k <= 1024; k++) bad += h[k] != 2 * (int32_t)(k - 1);
    CHECK_MSG(bad == 0, "load/store hazard: %d wrong", bad);
    vt->mem_free(st, h);
    hg_prog_free(p);
    vt->executor_destroy(st);
}

// ---- f16 / bf16 memory and arithmetic ----------------------------------------------------------
static void test_half(hg_dtype t) {
    void* st = make_exec(2);
    const uint32_t n = 3000;
    hg_prog* p = hg_prog_new("half");
    uint32_t a = buf(p, "a", t, 1), o = buf(p, "o", t, 0);
    uint32_t x = reg(p, "x", t), y = reg(p, "y", t);
    emit(p, HG_OP_LD, t, HG_SPACE_GLOBAL, a, R(x), S(GID_X), N_, N_);
    hg_operand one = t == HG_DTYPE_F16 ? hg_imm_f16(1.0f) : hg_imm_bf16(1.0f);
    emit(p, HG_OP_MUL, t, 0, 0, R(y), R(x), R(x), N_);
    emit(p, HG_OP_ADD, t, 0, 0, R(y), R(y), one, N_);
    emit(p, HG_OP_ST, t, HG_SPACE_GLOBAL, o, N_, S(GID_X), R(y), N_);
    uint16_t *ha, *ho;
    CHECK_OK(vt->mem_alloc(st, n * 2, 1, (void**)&ha));
    CHECK_OK(vt->mem_alloc(st, n * 2, 1, (void**)&ho));
    uint64_t seed = 42;
    for (uint32_t i = 0; i < n; i++) ha[i] = (uint16_t)hg_test_rand(&seed);
    hg_bound_arg args[2] = {{ha, n, 0}, {ho, n, 0}};
    CHECK_OK(run(st, p, hg_launch_1d(n, 100), args, 2));
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint16_t want;
        if (t == HG_DTYPE_F16) {
            float v = hg_f16_to_f32(ha[i]);
            float sq = hg_f16_to_f32(hg_f32_to_f16(v * v));
            want = hg_f32_to_f16(sq + 1.0f);
        } else {
            float v = hg_bf16_to_f32(ha[i]);
            float sq = hg_bf16_to_f32(hg_f32_to_bf16(v * v));
            want = hg_f32_to_bf16(sq + 1.0f);
        }
        // NaNs: any quiet NaN is fine
        int wnan = (want & 0x7fff) > (t == HG_DTYPE_F16 ? 0x7c00 : 0x7f80);
        int gnan = (ho[i] & 0x7fff) > (t == HG_DTYPE_F16 ? 0x7c00 : 0x7f80);
        if (wnan ? !gnan : ho[i] != want) bad++;
    }
    CHECK_MSG(bad == 0, "%s x*x+1: %d wrong", hg_dtype_name(t), bad);
    vt->mem_free(st, ha);
    vt->mem_free(st, ho);
    hg_prog_free(p);
    vt->executor_destroy(st);
}

// ---- kernel sets: semantics and bit identity ----------------------------------------------------
static int is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

static void test_kernel_sets(void) {
    const hg_cpu_kernels* g = hg_cpu_kernels_named("generic");
    CHECK(g != NULL);
    // integer edge cases
    int32_t a[6] = {7, -7, INT32_MIN, 5, INT32_MIN, -1}, b[6] = {0, 2, -1, 0, 1, 33}, d[6];
    g->op[HG_OP_DIV][HG_DTYPE_I32](d, a, b, NULL, 6);
    CHECK(d[0] == -1 && d[1] == -3 && d[2] == INT32_MIN && d[3] == -1 && d[4] == INT32_MIN);
    g->op[HG_OP_REM][HG_DTYPE_I32](d, a, b, NULL, 6);
    CHECK(d[0] == 7 && d[1] == -1 && d[2] == 0 && d[3] == 5 && d[4] == 0);
    g->op[HG_OP_SHR][HG_DTYPE_I32](d, a, b, NULL, 6);
    CHECK(d[5] == -1 && d[1] == -2);
    g->op[HG_OP_SHL][HG_DTYPE_I32](d, a, b, NULL, 6);
    CHECK(d[5] == 0 && d[1] == -28);
    uint32_t ua[2] = {9, 9}, ub[2] = {0, 32}, ud[2];
    g->op[HG_OP_DIV][HG_DTYPE_U32](ud, ua, ub, NULL, 1);
    CHECK(ud[0] == UINT32_MAX);
    g->op[HG_OP_SHR][HG_DTYPE_U32](ud, ua, ub, NULL, 2);
    CHECK(ud[1] == 0);
    // float min/max: NaN and signed zeros
    float fa[3] = {-0.0f, 0.0f, NAN}, fb[3] = {0.0f, -0.0f, 1.0f}, fd[3];
    g->op[HG_OP_MIN][HG_DTYPE_F32](fd, fa, fb, NULL, 3);
    CHECK(signbit(fd[0]) && signbit(fd[1]) && isnan(fd[2]));
    g->op[HG_OP_MAX][HG_DTYPE_F32](fd, fa, fb, NULL, 3);
    CHECK(!signbit(fd[0]) && !signbit(fd[1]) && isnan(fd[2]));
    // cvt: saturation, NaN -> 0, round ties to even
    float cs[5] = {3e9f, -3e9f, NAN, -0.9f, 2.5f};
    int32_t ci[5];
    g->cvt[HG_DTYPE_I32][HG_DTYPE_F32](ci, cs, NULL, NULL, 5);
    CHECK(ci[0] == INT32_MAX && ci[1] == INT32_MIN && ci[2] == 0 && ci[3] == 0 && ci[4] == 2);
    uint8_t cu[5];
    g->cvt[HG_DTYPE_U8][HG_DTYPE_F32](cu, cs, NULL, NULL, 5);
    CHECK(cu[0] == 255 && cu[1] == 0 && cu[2] == 0 && cu[3] == 0 && cu[4] == 2);
    float rr[2] = {2.5f, -3.5f}, rd[2];
    g->op[HG_OP_ROUND][HG_DTYPE_F32](rd, rr, NULL, NULL, 2);
    CHECK(rd[0] == 2.0f && rd[1] == -4.0f);
    // int -> bf16 must round once: 2^24 + 2^16 + 1 rounds up to 2^24 + 2^17
    int32_t big = (1 << 24) + (1 << 16) + 1;
    float bf;
    g->cvt[HG_DTYPE_BF16][HG_DTYPE_I32](&bf, &big, NULL, NULL, 1);
    CHECK(bf == (float)((1 << 24) + (1 << 17)));
    // sigmoid does not overflow
    float sx[3] = {-1000.0f, 1000.0f, 0.0f}, sy[3];
    g->op[HG_OP_SIGMOID][HG_DTYPE_F32](sy, sx, NULL, NULL, 3);
    CHECK(sy[0] == 0.0f && sy[1] == 1.0f && sy[2] == 0.5f);

    const hg_cpu_kernels* v = hg_cpu_kernels_named("avx2");
    if (!v) {
        printf("avx2 kernel set not available: bit-identity check skipped\n");
        return;
    }
    enum { N = 4099 };
    static uint32_t x[N], y[N], z[N], r1[2 * N], r2[2 * N];
    uint64_t seed = 7;
    const unsigned ops[] = {HG_OP_ADD, HG_OP_SUB, HG_OP_MUL, HG_OP_DIV, HG_OP_FMA, HG_OP_SQRT,
                            HG_OP_MIN, HG_OP_MAX, HG_OP_ROUND, HG_OP_REM};
    const hg_dtype fts[] = {HG_DTYPE_F32, HG_DTYPE_F16, HG_DTYPE_BF16};
    for (size_t ti = 0; ti < 3; ti++) {
        hg_dtype t = fts[ti];
        for (int i = 0; i < N; i++) {
            // random floats of all magnitudes, rounded to the type first
            float f[3];
            for (int k = 0; k < 3; k++) {
                uint32_t u = (uint32_t)hg_test_rand(&seed);
                memcpy(&f[k], &u, 4);
                if (t == HG_DTYPE_F16) f[k] = hg_f16_to_f32((uint16_t)u);
                if (t == HG_DTYPE_BF16) f[k] = hg_bf16_to_f32((uint16_t)u);
            }
            memcpy(&x[i], &f[0], 4); memcpy(&y[i], &f[1], 4); memcpy(&z[i], &f[2], 4);
        }
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
            g->op[ops[oi]][t](r1, x, y, z, N);
            v->op[ops[oi]][t](r2, x, y, z, N);
            int diff = 0;
            for (int i = 0; i < N; i++) diff += r1[i] != r2[i] && !(is_nan_bits(r1[i]) && is_nan_bits(r2[i]));
            CHECK_MSG(diff == 0, "%s.%s: generic and avx2 kernels differ in %d lanes",
                      hg_opinfo_of(ops[oi])->name, hg_dtype_name(t), diff);
        }
        const hg_dtype dsts[] = {HG_DTYPE_I32, HG_DTYPE_U8, HG_DTYPE_I64, HG_DTYPE_F16,
                                 HG_DTYPE_BF16, HG_DTYPE_F64};
        for (size_t di = 0; di < 6; di++) {
            memset(r1, 0, sizeof r1);
            memset(r2, 0, sizeof r2);
            g->cvt[dsts[di]][t](r1, x, NULL, NULL, N);
            v->cvt[dsts[di]][t](r2, x, NULL, NULL, N);
            CHECK_MSG(!memcmp(r1, r2, sizeof r1), "cvt.%s.%s differs between kernel sets",
                      hg_dtype_name(dsts[di]), hg_dtype_name(t));
        }
    }
    // f64 -> f16/bf16 and i64 -> bf16
    static double dx[N];
    static int64_t ix[N];
    for (int i = 0; i < N; i++) {
        uint64_t u = hg_test_rand(&seed);
        dx[i] = ldexp((double)(u >> 11), (int)(u % 80) - 90);
        ix[i] = (int64_t)hg_test_rand(&seed) >> (u % 60);
    }
    for (int k = 0; k < 2; k++) {
        hg_dtype dt = k ? HG_DTYPE_BF16 : HG_DTYPE_F16;
        g->cvt[dt][HG_DTYPE_F64](r1, dx, NULL, NULL, N);
        v->cvt[dt][HG_DTYPE_F64](r2, dx, NULL, NULL, N);
        CHECK(!memcmp(r1, r2, N * 4));
        g->cvt[dt][HG_DTYPE_I64](r1, ix, NULL, NULL, N);
        v->cvt[dt][HG_DTYPE_I64](r2, ix, NULL, NULL, N);
        CHECK(!memcmp(r1, r2, N * 4));
    }
}

static void test_memory(void) {
    void* st = make_exec(0);
    CHECK(vt->num_threads(st) >= 1);
    void* m;
    const size_t big = (9u << 20) + 3;
    CHECK_OK(vt->mem_alloc(st, big, 1, &m));
    CHECK(((uintptr_t)m & 63) == 0);
    int zero = 1;
    for (size_t i = 0; i < big; i += 4093) zero &= ((uint8_t*)m)[i] == 0;
    CHECK(zero);
    double v = 2.5;
    CHECK_OK(vt->mem_fill(st, m, 1000, &v, 8));
    CHECK(((double*)m)[999] == 2.5 && ((double*)m)[0] == 2.5);
    memset(m, 0x5A, big);
    vt->mem_free(st, m);
    // The freed mapping is cached: the next allocation of that size reuses it, zeroed when
    // asked; a much smaller one does not take it (at most twice the size plus 2 MiB).
    void* m2;
    CHECK_OK(vt->mem_alloc(st, big - 1000, 1, &m2));
    CHECK(m2 == m);
    zero = 1;
    for (size_t i = 0; i < big - 1000; i++) zero &= ((uint8_t*)m2)[i] == 0;
    CHECK(zero);
    vt->mem_free(st, m2);
    void* small_big;
    CHECK_OK(vt->mem_alloc(st, 2u << 20, 0, &small_big));
    CHECK(small_big != m);
    void* m3;
    CHECK_OK(vt->mem_alloc(st, big, 0, &m3));
    CHECK(m3 == m);
    vt->mem_free(st, small_big);
    vt->mem_free(st, m3);
    CHECK_OK(vt->mem_alloc(st, 100, 1, &m));
    CHECK(((uintptr_t)m & 63) == 0);
    vt->mem_free(st, m);
    hg_device_info di;
    CHECK_OK(vt->device_info(0, &di));
    CHECK(di.name[0] && di.memory_bytes > 0);
    CHECK(vt->supports_op(HG_OP_ADD, HG_DTYPE_F16) && !vt->supports_op(HG_OP_SHL, HG_DTYPE_F32));
    CHECK(hg_cpu_features() != NULL);
    vt->executor_destroy(st);
}

int main(void) {
    test_memory();
    test_kernel_sets();
    const int threads[] = {1, 2, 3, 7};
    for (int i = 0; i < 4; i++) {
        test_specials(threads[i], 0);
        test_specials(threads[i], 1);
    }
    test_divergence();
    test_reduction(0, 2);
    test_reduction(1, 3);
    test_reduction(0, 1);
    test_atomics(1);
    test_atomics(2);
    test_atomics(7);
    test_oob();
    test_vadd_ranges();
    test_load_store_hazard();
    test_half(HG_DTYPE_F16);
    test_half(HG_DTYPE_BF16);
    return hg_test_finish("test_cpu_backend");
}
