// API misuse: bad handles of every kind for every handle-taking function, NULL out pointers,
// out-of-range accesses, launch argument and config errors. Each must give its status, a
// message that names the problem, and leave data intact.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/handles.h"
#include "hg_test.h"

#define CHECK_ERR(expr, want, needle)                                                        \
    do {                                                                                     \
        hg_clear_error();                                                                    \
        CHECK_STATUS(expr, want);                                                            \
        CHECK_MSG(hg_last_error()[0] != 0, "empty message after %s", #expr);                 \
        CHECK_MSG(msg_has(needle), "message of %s lacks '%s': %s", #expr,                    \
                  (needle) ? (const char*)(needle) : "", hg_last_error());                   \
    } while (0)

// Whether the last error message contains needle (NULL: no particular text expected).
static int msg_has(const char* needle) {
    return !needle || strstr(hg_last_error(), needle) != NULL;
}

// c[i] = a[i] + b[i] for i < n; with guard = 0 the bound check is left out.
static hg_program make_vadd(int guard) {
    hg_program p;
    uint32_t a, b, c, n, i, pr, x, y;
    CHECK_OK(hg_program_create(guard ? "vadd" : "vadd_unguarded", &p));
    CHECK_OK(hg_program_add_buffer_param(p, "a", HG_DTYPE_F32, 1, &a));
    CHECK_OK(hg_program_add_buffer_param(p, "b", HG_DTYPE_F32, 1, &b));
    CHECK_OK(hg_program_add_buffer_param(p, "c", HG_DTYPE_F32, 0, &c));
    CHECK_OK(hg_program_add_scalar_param(p, "n", HG_DTYPE_U32, &n));
    CHECK_OK(hg_program_add_reg(p, "i", HG_DTYPE_U32, &i));
    CHECK_OK(hg_program_add_reg(p, "p", HG_DTYPE_BOOL, &pr));
    CHECK_OK(hg_program_add_reg(p, "x", HG_DTYPE_F32, &x));
    CHECK_OK(hg_program_add_reg(p, "y", HG_DTYPE_F32, &y));
    CHECK_OK(hg_emit_unary(p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X)));
    CHECK_OK(hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, pr, hg_reg(i), hg_param(n)));
    if (guard) CHECK_OK(hg_emit_control(p, HG_OP_IF, hg_reg(pr)));
    CHECK_OK(hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, x, a, hg_reg(i)));
    CHECK_OK(hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, y, b, hg_reg(i)));
    CHECK_OK(hg_emit_binary(p, HG_OP_ADD, HG_DTYPE_F32, x, hg_reg(x), hg_reg(y)));
    CHECK_OK(hg_emit_store(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, c, hg_reg(i), hg_reg(x)));
    if (guard) CHECK_OK(hg_emit_control(p, HG_OP_ENDIF, hg_none()));
    CHECK_OK(hg_program_validate(p));
    return p;
}

// A program with an unsized shared array of f32 (no instructions needed beyond one bar).
static hg_program make_shared_prog(void) {
    hg_program p;
    uint32_t s;
    CHECK_OK(hg_program_create("dyn_shared", &p));
    CHECK_OK(hg_program_add_shared(p, "tile", HG_DTYPE_F32, 64, &s));
    CHECK_OK(hg_program_add_shared(p, "dyn", HG_DTYPE_F32, 0, &s));
    CHECK_OK(hg_emit_control(p, HG_OP_BAR, hg_none()));
    CHECK_OK(hg_program_validate(p));
    return p;
}

// Handles that must all be rejected for a given kind.
typedef struct bad_handles { uint64_t h[8]; int n; } bad_handles;

static bad_handles bad_for(uint64_t destroyed, uint64_t wrong1, uint64_t wrong2) {
    bad_handles b;
    uint64_t rs = destroyed ^ 0x1234;
    b.n = 0;
    b.h[b.n++] = 0;
    b.h[b.n++] = destroyed;
    b.h[b.n++] = hg_test_rand(&rs);           // random bits
    b.h[b.n++] = hg_test_rand(&rs) | 1;
    b.h[b.n++] = UINT64_MAX;
    b.h[b.n++] = (destroyed & 0xFF00000000000000ull) | 0x00FFFFFF7FFFFFFFull;  // right kind, far index
    b.h[b.n++] = wrong1;
    b.h[b.n++] = wrong2;
    return b;
}

static void test_bad_handles(void) {
    hg_executor ex, dead_ex;
    hg_buffer buf, dead_buf;
    hg_program prog, dead_prog;
    hg_kernel kern, dead_kern;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &dead_ex));
    CHECK_OK(hg_executor_destroy(dead_ex));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 8, &buf));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 8, &dead_buf));
    CHECK_OK(hg_buffer_destroy(dead_buf));
    prog = make_vadd(1);
    dead_prog = make_vadd(1);
    CHECK_OK(hg_program_destroy(dead_prog));
    CHECK_OK(hg_kernel_create(ex, prog, &kern));
    CHECK_OK(hg_kernel_create(ex, prog, &dead_kern));
    CHECK_OK(hg_kernel_destroy(dead_kern));
    float host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out8[8];
    CHECK_OK(hg_buffer_write(buf, 0, host, 8));

    bad_handles bx = bad_for(dead_ex.handle, buf.handle, prog.handle);
    bad_handles bb = bad_for(dead_buf.handle, ex.handle, kern.handle);
    bad_handles bp = bad_for(dead_prog.handle, buf.handle, ex.handle);
    bad_handles bk = bad_for(dead_kern.handle, prog.handle, buf.handle);
    hg_launch_config cfg = hg_launch_1d(8, 8);
    hg_arg args[4] = {hg_arg_buffer(buf), hg_arg_buffer(buf), hg_arg_buffer(buf), hg_arg_u32(8)};

    for (int i = 0; i < bx.n; i++) {
        hg_executor e = {bx.h[i]};
        hg_backend_kind k;
        hg_device_info di;
        int n;
        hg_buffer ob;
        hg_kernel ok;
        CHECK_ERR(hg_executor_destroy(e), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_executor_backend(e, &k), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_executor_device(e, &di), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_executor_num_threads(e, &n), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_executor_synchronize(e), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_buffer_create(e, HG_DTYPE_F32, 4, &ob), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_buffer_wrap(e, HG_DTYPE_F32, host, 4, &ob), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_kernel_create(e, prog, &ok), HG_ERR_INVALID_HANDLE, "executor");
        CHECK_ERR(hg_launch(e, prog, &cfg, args, 4), HG_ERR_INVALID_HANDLE, "executor");
    }
    for (int i = 0; i < bb.n; i++) {
        hg_buffer b = {bb.h[i]};
        size_t n;
        hg_dtype t;
        hg_executor oe;
        void* p;
        CHECK_ERR(hg_buffer_destroy(b), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_write(b, 0, host, 1), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_read(b, 0, out8, 1), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_fill(b, 1.0), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_copy(b, 0, buf, 0, 1), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_copy(buf, 0, b, 0, 1), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_map(b, &p), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_count(b, &n), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_dtype(b, &t), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_nbytes(b, &n), HG_ERR_INVALID_HANDLE, "buffer");
        CHECK_ERR(hg_buffer_executor(b, &oe), HG_ERR_INVALID_HANDLE, "buffer");
        hg_arg a2[4] = {hg_arg_buffer(buf), hg_arg_buffer(b), hg_arg_buffer(buf), hg_arg_u32(8)};
        CHECK_ERR(hg_launch(ex, prog, &cfg, a2, 4), HG_ERR_INVALID_HANDLE, "'b'");
        CHECK_ERR(hg_kernel_launch(kern, &cfg, a2, 4), HG_ERR_INVALID_HANDLE, "'b'");
    }
    for (int i = 0; i < bp.n; i++) {
        hg_program p = {bp.h[i]};
        uint32_t u;
        const char* s;
        hg_param_info pi;
        char* text;
        size_t len;
        void* bytes;
        uint64_t h;
        int eq;
        hg_kernel ok;
        hg_instr in;
        memset(&in, 0, sizeof in);
        CHECK_ERR(hg_program_destroy(p), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_add_buffer_param(p, "q", HG_DTYPE_F32, 0, &u), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_add_scalar_param(p, "q", HG_DTYPE_F32, &u), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_add_shared(p, "q", HG_DTYPE_F32, 4, &u), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_add_reg(p, "q", HG_DTYPE_F32, &u), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_emit(p, &in), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_emit_unary(p, HG_OP_MOV, HG_DTYPE_F32, 0, hg_reg(0)), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_emit_binary(p, HG_OP_ADD, HG_DTYPE_F32, 0, hg_reg(0), hg_reg(0)), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_emit_cmp(p, HG_CMP_EQ, HG_DTYPE_F32, 0, hg_reg(0), hg_reg(0)), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, 0, 0, hg_reg(0)), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_emit_store(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, 0, hg_reg(0), hg_reg(0)), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_emit_control(p, HG_OP_ENDIF, hg_none()), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_name(p, &s), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_instr_count(p, &u), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_param_count(p, &u), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_param(p, 0, &pi), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_validate(p), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_print(p, &text, &len), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_save(p, &bytes, &len), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_hash(p, &h), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_equal(p, prog, &eq), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_program_equal(prog, p, &eq), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_kernel_create(ex, p, &ok), HG_ERR_INVALID_HANDLE, "program");
        CHECK_ERR(hg_launch(ex, p, &cfg, args, 4), HG_ERR_INVALID_HANDLE, "program");
    }
    for (int i = 0; i < bk.n; i++) {
        hg_kernel k = {bk.h[i]};
        CHECK_ERR(hg_kernel_destroy(k), HG_ERR_INVALID_HANDLE, "kernel");
        CHECK_ERR(hg_kernel_launch(k, &cfg, args, 4), HG_ERR_INVALID_HANDLE, "kernel");
    }
    // Wrong-kind messages say what was expected.
    size_t n;
    hg_buffer as_buf = {ex.handle};
    CHECK_ERR(hg_buffer_count(as_buf, &n), HG_ERR_INVALID_HANDLE, "expected a buffer handle");
    hg_buffer zero = {0};
    CHECK_ERR(hg_buffer_count(zero, &n), HG_ERR_INVALID_HANDLE, "zero");

    // Nothing above disturbed the live objects.
    CHECK_OK(hg_buffer_read(buf, 0, out8, 8));
    CHECK(memcmp(out8, host, sizeof host) == 0);
    uint32_t cnt;
    CHECK_OK(hg_program_instr_count(prog, &cnt));
    CHECK(cnt == 8);

    // NULL out pointers.
    CHECK_ERR(hg_executor_create(HG_BACKEND_CPU, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_executor_create_by_name(NULL, &ex), HG_ERR_NULL_POINTER, "name");
    CHECK_ERR(hg_executor_backend(ex, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_executor_device(ex, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_executor_num_threads(ex, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_create(ex, HG_DTYPE_F32, 4, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_wrap(ex, HG_DTYPE_F32, host, 4, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_write(buf, 0, NULL, 1), HG_ERR_NULL_POINTER, "src");
    CHECK_ERR(hg_buffer_read(buf, 0, NULL, 1), HG_ERR_NULL_POINTER, "dst");
    CHECK_ERR(hg_buffer_map(buf, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_count(buf, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_dtype(buf, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_nbytes(buf, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_buffer_executor(buf, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_create("x", NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_create(NULL, &prog), HG_ERR_NULL_POINTER, "name");
    CHECK_ERR(hg_program_name(prog, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_instr_count(prog, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_param_count(prog, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_param(prog, 0, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_emit(prog, NULL), HG_ERR_NULL_POINTER, "instr");
    CHECK_ERR(hg_program_print(prog, NULL, &n), HG_ERR_NULL_POINTER, "out_text");
    void* bytes;
    CHECK_ERR(hg_program_save(prog, NULL, &n), HG_ERR_NULL_POINTER, "out_bytes");
    CHECK_ERR(hg_program_save(prog, &bytes, NULL), HG_ERR_NULL_POINTER, "out_len");
    CHECK_ERR(hg_program_hash(prog, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_equal(prog, prog, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_parse(NULL, 4, &prog), HG_ERR_NULL_POINTER, "text");
    CHECK_ERR(hg_program_parse(".kernel k\n", 10, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_program_load(NULL, 4, &prog), HG_ERR_NULL_POINTER, "bytes");
    CHECK_ERR(hg_program_load(host, 4, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_kernel_create(ex, prog, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_launch(ex, prog, NULL, args, 4), HG_ERR_NULL_POINTER, "cfg");
    CHECK_ERR(hg_kernel_launch(kern, NULL, args, 4), HG_ERR_NULL_POINTER, "cfg");
    CHECK_ERR(hg_launch(ex, prog, &cfg, NULL, 4), HG_ERR_NULL_POINTER, "args");
    CHECK_ERR(hg_backend_query(HG_BACKEND_CPU, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_device_query(HG_BACKEND_CPU, 0, NULL), HG_ERR_NULL_POINTER, "out");
    CHECK_ERR(hg_dtype_from_name(NULL, NULL), HG_ERR_NULL_POINTER, "name");

    // Builder misuse.
    uint32_t idx;
    CHECK_ERR(hg_program_create("1bad", &dead_prog), HG_ERR_INVALID_ARGUMENT, "1bad");
    CHECK_ERR(hg_program_add_reg(prog, "x", HG_DTYPE_F32, &idx), HG_ERR_INVALID_ARGUMENT, "x");
    CHECK_ERR(hg_program_add_reg(prog, "z", HG_DTYPE_COUNT, &idx), HG_ERR_INVALID_ARGUMENT, "dtype");
    CHECK_ERR(hg_emit_binary(prog, HG_OP_LD, HG_DTYPE_F32, 0, hg_reg(0), hg_reg(0)), HG_ERR_INVALID_ARGUMENT, "ld");
    CHECK_ERR(hg_emit_binary(prog, (hg_opcode)999, HG_DTYPE_F32, 0, hg_reg(0), hg_reg(0)), HG_ERR_INVALID_ARGUMENT, "999");
    CHECK_ERR(hg_emit_unary(prog, HG_OP_ADD, HG_DTYPE_F32, 0, hg_reg(0)), HG_ERR_INVALID_ARGUMENT, "add");
    CHECK_ERR(hg_emit_cmp(prog, (hg_cmp)17, HG_DTYPE_F32, 0, hg_reg(0), hg_reg(0)), HG_ERR_INVALID_ARGUMENT, "17");
    CHECK_ERR(hg_emit_load(prog, (hg_space)5, HG_DTYPE_F32, 0, 0, hg_reg(0)), HG_ERR_INVALID_ARGUMENT, "space");
    CHECK_ERR(hg_emit_load_vector(prog, HG_SPACE_GLOBAL, HG_DTYPE_F32, 3, 0, 0, hg_reg(0)), HG_ERR_INVALID_ARGUMENT, "width 3");
    CHECK_ERR(hg_emit_store_vector(prog, (hg_space)5, HG_DTYPE_F32, 4, 0, hg_reg(0), 0), HG_ERR_INVALID_ARGUMENT, "space");
    CHECK_ERR(hg_emit_load_vector(dead_prog, HG_SPACE_GLOBAL, HG_DTYPE_F32, 4, 0, 0, hg_reg(0)), HG_ERR_INVALID_HANDLE, "hg_emit_load_vector");
    CHECK_ERR(hg_emit_control(prog, HG_OP_ADD, hg_none()), HG_ERR_INVALID_ARGUMENT, "add");
    CHECK_ERR(hg_emit_control(prog, HG_OP_IF, hg_none()), HG_ERR_INVALID_ARGUMENT, "condition");
    CHECK_ERR(hg_emit_control(prog, HG_OP_ENDIF, hg_reg(1)), HG_ERR_INVALID_ARGUMENT, "no condition");
    hg_param_info pi;
    CHECK_ERR(hg_program_param(prog, 4, &pi), HG_ERR_OUT_OF_RANGE, "4");
    CHECK_OK(hg_program_param(prog, 3, &pi));
    CHECK(strcmp(pi.name, "n") == 0 && pi.kind == HG_PARAM_SCALAR && pi.dtype == HG_DTYPE_U32);
    CHECK_OK(hg_program_instr_count(prog, &cnt));
    CHECK(cnt == 8);  // rejected emits added nothing

    // An invalid program (register index out of range) is refused by validate, kernel, launch.
    hg_program badp;
    CHECK_OK(hg_program_create("bad", &badp));
    CHECK_OK(hg_program_add_reg(badp, "r", HG_DTYPE_F32, &idx));
    CHECK_OK(hg_emit_binary(badp, HG_OP_ADD, HG_DTYPE_F32, 7, hg_reg(0), hg_reg(0)));
    CHECK_ERR(hg_program_validate(badp), HG_ERR_INVALID_PROGRAM, NULL);
    hg_kernel kk;
    CHECK_ERR(hg_kernel_create(ex, badp, &kk), HG_ERR_INVALID_PROGRAM, NULL);
    hg_launch_config one = hg_launch_1d(1, 1);
    CHECK_ERR(hg_launch(ex, badp, &one, NULL, 0), HG_ERR_INVALID_PROGRAM, NULL);
    CHECK_OK(hg_program_destroy(badp));

    CHECK_OK(hg_kernel_destroy(kern));
    CHECK_OK(hg_program_destroy(prog));
    CHECK_OK(hg_executor_destroy(ex));
}

static void test_launch_errors(void) {
    enum { N = 20 };
    hg_executor ex, ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    hg_program prog = make_vadd(1);
    hg_buffer a, b, c, ai, far;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &a));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &b));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, N, &c));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_I32, N, &ai));
    CHECK_OK(hg_buffer_create(ex2, HG_DTYPE_F32, N, &far));
    float ha[N], hb[N], hc[N], sentinel[N], got[N];
    for (int i = 0; i < N; i++) {
        ha[i] = (float)i;
        hb[i] = (float)(100 * i);
        sentinel[i] = -1.0f;
    }
    CHECK_OK(hg_buffer_write(a, 0, ha, N));
    CHECK_OK(hg_buffer_write(b, 0, hb, N));
    CHECK_OK(hg_buffer_write(c, 0, sentinel, N));

    hg_launch_config cfg = hg_launch_1d(N, 8);
    hg_arg good[4] = {hg_arg_buffer(a), hg_arg_buffer(b), hg_arg_buffer(c), hg_arg_u32(N)};
    hg_arg args[4];
    hg_kernel k;
    CHECK_OK(hg_kernel_create(ex, prog, &k));

    // Argument binding. Each failing case runs with both hg_launch and hg_kernel_launch.
#define BOTH(status, needle)                                                                 \
    do {                                                                                     \
        CHECK_ERR(hg_launch(ex, prog, &cfg, args, 4), status, needle);                       \
        CHECK_ERR(hg_kernel_launch(k, &cfg, args, 4), status, needle);                       \
    } while (0)
    memcpy(args, good, sizeof args);
    args[0] = hg_arg_buffer(ai);
    BOTH(HG_ERR_DTYPE_MISMATCH, "'a'");
    CHECK(strstr(hg_last_error(), "i32") && strstr(hg_last_error(), "f32"));
    memcpy(args, good, sizeof args);
    args[3] = hg_arg_i32(N);
    BOTH(HG_ERR_DTYPE_MISMATCH, "'n'");
    memcpy(args, good, sizeof args);
    args[1] = hg_arg_u32(3);
    BOTH(HG_ERR_ARGUMENT_BINDING, "'b'");
    memcpy(args, good, sizeof args);
    args[3] = hg_arg_buffer(a);
    BOTH(HG_ERR_ARGUMENT_BINDING, "argument 3");
    memcpy(args, good, sizeof args);
    args[2] = hg_arg_buffer(far);
    BOTH(HG_ERR_ARGUMENT_BINDING, "another executor");
    memcpy(args, good, sizeof args);
    args[2] = hg_arg_buffer_range(c, N + 1, 0);
    BOTH(HG_ERR_ARGUMENT_BINDING, "'c'");
    args[2] = hg_arg_buffer_range(c, 5, N - 4);
    BOTH(HG_ERR_ARGUMENT_BINDING, "'c'");
    args[2] = hg_arg_buffer_range(c, 5, UINT64_MAX - 2);
    BOTH(HG_ERR_ARGUMENT_BINDING, "'c'");
    args[2].kind = 7;
    BOTH(HG_ERR_ARGUMENT_BINDING, "'c'");
    memcpy(args, good, sizeof args);
    CHECK_ERR(hg_launch(ex, prog, &cfg, args, 3), HG_ERR_ARGUMENT_BINDING, "takes 4 arguments");
    CHECK_ERR(hg_kernel_launch(k, &cfg, args, 5), HG_ERR_ARGUMENT_BINDING, "got 5");
    CHECK_ERR(hg_launch(ex, prog, &cfg, args, 0), HG_ERR_ARGUMENT_BINDING, "got 0");

    // Launch configuration.
    cfg = hg_launch_1d(N, 8);
    cfg.grid.y = 0;
    BOTH(HG_ERR_LAUNCH_CONFIG, "grid.y");
    cfg = hg_launch_1d(N, 8);
    cfg.block.z = 0;
    BOTH(HG_ERR_LAUNCH_CONFIG, "block.z");
    cfg = hg_launch_1d(N, 1025);
    BOTH(HG_ERR_LAUNCH_CONFIG, "1024");
    cfg = hg_launch_1d(N, 32);
    cfg.block.y = 32;
    cfg.block.z = 2;
    BOTH(HG_ERR_LAUNCH_CONFIG, "1024");
    cfg = hg_launch_1d(N, 1);
    cfg.block.y = 65536;
    cfg.block.z = 65536;  // product wraps to 0 in 32 bits
    BOTH(HG_ERR_LAUNCH_CONFIG, "1024");
    cfg = hg_launch_1d(N, 1024);
    cfg.grid.x = 1u << 22;  // 2^32 lanes in x: %gid.x would not fit in u32
    BOTH(HG_ERR_LAUNCH_CONFIG, "gid");
    // More lanes than one launch may have (each dimension's %gid fits): 2^56, then 2^40 + 2^20
    // just past the bound (HG_MAX_LAUNCH_LANES = 2^40).
    cfg = hg_launch_1d(N, 256);
    cfg.grid.x = cfg.grid.y = cfg.grid.z = 65536;
    BOTH(HG_ERR_LAUNCH_CONFIG, "2^40");
    cfg = hg_launch_1d(N, 1024);
    cfg.grid.x = (1u << 20) + 1;
    cfg.grid.y = 1024;
    BOTH(HG_ERR_LAUNCH_CONFIG, "split the work");
    cfg = hg_launch_1d(N, 8);
    cfg.shared_bytes = 4;
    BOTH(HG_ERR_LAUNCH_CONFIG, "unsized");
    CHECK_OK(hg_buffer_read(c, 0, got, N));
    CHECK(memcmp(got, sentinel, sizeof got) == 0);  // nothing ran

    // Shared memory limits need a program with an unsized array.
    hg_program sp = make_shared_prog();
    hg_launch_config sc = hg_launch_1d(1, 32);
    sc.shared_bytes = 6;
    CHECK_ERR(hg_launch(ex, sp, &sc, NULL, 0), HG_ERR_LAUNCH_CONFIG, "multiple of 4");
    sc.shared_bytes = 0xFFFFFFF0u;
    CHECK_ERR(hg_launch(ex, sp, &sc, NULL, 0), HG_ERR_LAUNCH_CONFIG, "exceed");
    sc.shared_bytes = 1024;
    CHECK_OK(hg_launch(ex, sp, &sc, NULL, 0));
    CHECK_OK(hg_program_destroy(sp));

    // The good launch works after all that, also on a sub-range.
    cfg = hg_launch_1d(N, 8);
    CHECK_OK(hg_launch(ex, prog, &cfg, good, 4));
    CHECK_OK(hg_buffer_read(c, 0, got, N));
    for (int i = 0; i < N; i++) hc[i] = ha[i] + hb[i];
    CHECK(memcmp(got, hc, sizeof got) == 0);
    CHECK_OK(hg_buffer_write(c, 0, sentinel, N));
    memcpy(args, good, sizeof args);
    args[2] = hg_arg_buffer_range(c, 4, UINT64_MAX);  // c[4 + i] = a[i] + b[i], i < 16
    args[3] = hg_arg_u32(N - 4);
    CHECK_OK(hg_kernel_launch(k, &cfg, args, 4));
    CHECK_OK(hg_buffer_read(c, 0, got, N));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= got[i] == (i < 4 ? -1.0f : ha[i - 4] + hb[i - 4]);
    CHECK_MSG(ok, "sub-range launch");

    // Out of bounds: the unguarded kernel with c bound to 10 elements and 16 lanes.
    hg_program up = make_vadd(0);
    CHECK_OK(hg_buffer_write(c, 0, sentinel, N));
    memcpy(args, good, sizeof args);
    args[2] = hg_arg_buffer_range(c, 0, 10);
    cfg = hg_launch_1d(16, 16);
    CHECK_ERR(hg_launch(ex, up, &cfg, args, 4), HG_ERR_OUT_OF_BOUNDS, NULL);
    CHECK_OK(hg_buffer_read(c, 0, got, N));
    ok = 1;
    for (int i = 10; i < N; i++) ok &= got[i] == -1.0f;  // nothing written past the range
    CHECK_MSG(ok, "out-of-bounds store wrote past the bound range");
    CHECK_OK(hg_program_destroy(up));

    // The executor goes away: its kernels and buffers go with it.
    CHECK_OK(hg_executor_destroy(ex));
    cfg = hg_launch_1d(N, 8);
    CHECK_ERR(hg_launch(ex, prog, &cfg, good, 4), HG_ERR_INVALID_HANDLE, "executor");
    CHECK_ERR(hg_kernel_launch(k, &cfg, good, 4), HG_ERR_INVALID_HANDLE, "kernel");
    CHECK_ERR(hg_buffer_read(a, 0, got, 1), HG_ERR_INVALID_HANDLE, "buffer");
    CHECK_ERR(hg_kernel_destroy(k), HG_ERR_INVALID_HANDLE, "kernel");
    // The program is independent of executors.
    uint32_t cnt;
    CHECK_OK(hg_program_instr_count(prog, &cnt));
    // A buffer of a destroyed executor passed to a live one.
    hg_arg g2[4] = {hg_arg_buffer(far), hg_arg_buffer(far), hg_arg_buffer(far), hg_arg_u32(N)};
    CHECK_OK(hg_launch(ex2, prog, &cfg, g2, 4));
    g2[0] = hg_arg_buffer(a);
    CHECK_ERR(hg_launch(ex2, prog, &cfg, g2, 4), HG_ERR_INVALID_HANDLE, "'a'");
    CHECK_OK(hg_program_destroy(prog));
    CHECK_OK(hg_executor_destroy(ex2));
    CHECK(hg_handle_live_count(HG_HANDLE_BUFFER) == 0);
    CHECK(hg_handle_live_count(HG_HANDLE_KERNEL) == 0);
    CHECK(hg_handle_live_count(HG_HANDLE_EXECUTOR) == 0);
    CHECK(hg_handle_live_count(HG_HANDLE_PROGRAM) == 0);
#undef BOTH
}

int main(void) {
    test_bad_handles();
    test_launch_errors();
    return hg_test_finish("test_api_misuse");
}
