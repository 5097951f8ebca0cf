// Tiny launches on the CPU backend: a compiled `c[i] = a[i] + b[i]` kernel launched with 1..64
// lanes (and a few larger sizes around the one-chunk limit) must give exact results and leave
// the elements past n untouched, through hg_kernel_launch and through the backend's vtable call.
// Also prints the per-launch latency (best and median ns of batches) of both paths for
// 1 lane, the number the CPU backend's inline small-launch path is tuned for (target: vtable
// call <= 100 ns in Release). The only timing check is a loose sanity bound, so the test does
// not fail on a loaded machine.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/handles.h"
#include "runtime/objects.h"
#include "hg_test.h"

static hg_program make_add(void) {
    hg_program p;
    uint32_t a, b, c, n, i, pr, x, y;
    if (hg_program_create("vector_add", &p) != HG_OK) return p;
    hg_program_add_buffer_param(p, "a", HG_DTYPE_F32, 1, &a);
    hg_program_add_buffer_param(p, "b", HG_DTYPE_F32, 1, &b);
    hg_program_add_buffer_param(p, "c", HG_DTYPE_F32, 0, &c);
    hg_program_add_scalar_param(p, "n", HG_DTYPE_U32, &n);
    hg_program_add_reg(p, "i", HG_DTYPE_U32, &i);
    hg_program_add_reg(p, "p", HG_DTYPE_BOOL, &pr);
    hg_program_add_reg(p, "x", HG_DTYPE_F32, &x);
    hg_program_add_reg(p, "y", HG_DTYPE_F32, &y);
    hg_emit_unary(p, HG_OP_MOV, HG_DTYPE_U32, i, hg_sreg(HG_SREG_GID_X));
    hg_emit_cmp(p, HG_CMP_LT, HG_DTYPE_U32, pr, hg_reg(i), hg_param(n));
    hg_emit_control(p, HG_OP_IF, hg_reg(pr));
    hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, x, a, hg_reg(i));
    hg_emit_load(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, y, b, hg_reg(i));
    hg_emit_binary(p, HG_OP_ADD, HG_DTYPE_F32, x, hg_reg(x), hg_reg(y));
    hg_emit_store(p, HG_SPACE_GLOBAL, HG_DTYPE_F32, c, hg_reg(i), hg_reg(x));
    hg_emit_control(p, HG_OP_ENDIF, hg_none());
    return p;
}

static void* buffer_mem(hg_buffer b) {
    hg_buffer_obj* o = hg_handle_get(b.handle, HG_HANDLE_BUFFER);
    return o ? o->mem : NULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

enum { MAXN = 8192, BATCHES = 41, PER_BATCH = 2000 };

typedef struct fixture {
    hg_executor ex;
    hg_kernel k;
    hg_buffer A, B, C;
    float a[MAXN], b[MAXN], c[MAXN];
} fixture;

// Launches over n lanes (grid of blocks of `block` lanes) through hg_kernel_launch and checks
// c[0..n) = a + b exactly and c[n..] untouched (the guard i < n).
static void check_size(fixture* f, uint32_t n, uint32_t block, int via_vtable) {
    CHECK_OK(hg_buffer_fill(f->C, -7.0));
    hg_launch_config cfg = hg_launch_1d(n, block);
    hg_arg args[4] = {hg_arg_buffer(f->A), hg_arg_buffer(f->B), hg_arg_buffer(f->C),
                      hg_arg_u32(n)};
    if (via_vtable) {
        hg_kernel_obj* ko = hg_handle_get(f->k.handle, HG_HANDLE_KERNEL);
        hg_bound_arg bound[4] = {{buffer_mem(f->A), MAXN, 0}, {buffer_mem(f->B), MAXN, 0},
                                 {buffer_mem(f->C), MAXN, 0}, {NULL, 0, n}};
        CHECK_OK(ko->ex->vt->kernel_launch(ko->ex->state, ko->compiled, &cfg, bound, 4));
    } else {
        CHECK_OK(hg_kernel_launch(f->k, &cfg, args, 4));
    }
    CHECK_OK(hg_buffer_read(f->C, 0, f->c, MAXN));
    size_t bad = 0;
    for (uint32_t i = 0; i < MAXN; i++) {
        float want = i < n ? f->a[i] + f->b[i] : -7.0f;
        bad += memcmp(&f->c[i], &want, 4) != 0;
    }
    CHECK_MSG(bad == 0, "n=%u block=%u%s: %zu wrong elements", n, block,
              via_vtable ? " (vtable)" : "", bad);
}

// Best and median ns per launch over batches of PER_BATCH launches of 1 lane.
static void time_launch(fixture* f, int via_vtable, double* best, double* median) {
    hg_launch_config cfg = hg_launch_1d(1, 1);
    hg_arg args[4] = {hg_arg_buffer(f->A), hg_arg_buffer(f->B), hg_arg_buffer(f->C), hg_arg_u32(1)};
    hg_kernel_obj* ko = hg_handle_get(f->k.handle, HG_HANDLE_KERNEL);
    hg_bound_arg bound[4] = {{buffer_mem(f->A), MAXN, 0}, {buffer_mem(f->B), MAXN, 0},
                             {buffer_mem(f->C), MAXN, 0}, {NULL, 0, 1}};
    double t[BATCHES];
    hg_status s = HG_OK;
    for (int r = 0; r < BATCHES; r++) {
        double t0 = now_ns();
        for (int i = 0; i < PER_BATCH; i++) {
            hg_status si = via_vtable
                               ? ko->ex->vt->kernel_launch(ko->ex->state, ko->compiled, &cfg, bound, 4)
                               : hg_kernel_launch(f->k, &cfg, args, 4);
            s |= si;
        }
        t[r] = (now_ns() - t0) / PER_BATCH;
    }
    CHECK(s == HG_OK);
    qsort(t, BATCHES, sizeof t[0], cmp_double);
    *best = t[0];
    *median = t[BATCHES / 2];
}

int main(void) {
    static fixture f;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &f.ex));
    hg_program prog = make_add();
    CHECK_OK(hg_kernel_create(f.ex, prog, &f.k));
    hg_program_destroy(prog);
    for (int i = 0; i < MAXN; i++) {
        f.a[i] = (float)i * 0.25f - 100.0f;
        f.b[i] = 1.0f / (float)(i + 1);
    }
    CHECK_OK(hg_buffer_create(f.ex, HG_DTYPE_F32, MAXN, &f.A));
    CHECK_OK(hg_buffer_create(f.ex, HG_DTYPE_F32, MAXN, &f.B));
    CHECK_OK(hg_buffer_create(f.ex, HG_DTYPE_F32, MAXN, &f.C));
    CHECK_OK(hg_buffer_write(f.A, 0, f.a, MAXN));
    CHECK_OK(hg_buffer_write(f.B, 0, f.b, MAXN));

    for (uint32_t n = 1; n <= 64; n++) {
        check_size(&f, n, 64, 0);
        check_size(&f, n, n, 1);
    }
    const uint32_t bigger[] = {65, 127, 1000, 4095, 4096, 4097, 8191, 8192};
    for (size_t j = 0; j < sizeof bigger / sizeof bigger[0]; j++) {
        check_size(&f, bigger[j], 256, 0);
        check_size(&f, bigger[j], 1, 1);
    }

    double vb, vm, kb, km;
    time_launch(&f, 1, &vb, &vm);
    time_launch(&f, 0, &kb, &km);
    printf("1-lane launch of a compiled c = a + b kernel (ns per launch, best / median of %d "
           "batches of %d):\n  backend vtable kernel_launch: %.1f / %.1f\n  hg_kernel_launch:       "
           "      %.1f / %.1f\n", BATCHES, PER_BATCH, vb, vm, kb, km);
    // Sanity only: even sanitized debug builds on a loaded machine stay far below this.
    CHECK_MSG(vb < 1e5 && kb < 1e5, "1-lane launch takes %.0f / %.0f ns", vb, kb);

    hg_buffer_destroy(f.A);
    hg_buffer_destroy(f.B);
    hg_buffer_destroy(f.C);
    hg_kernel_destroy(f.k);
    hg_executor_destroy(f.ex);
    return hg_test_finish("test_launch_latency");
}
