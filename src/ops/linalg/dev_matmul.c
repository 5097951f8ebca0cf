// Matrix products on devices that sgemm does not cover (f64, f16/bf16, integers, bool, mixed
// dtypes, layouts without a unit stride, gemm's alpha/beta for non-f32): one tiled Atlas ISA
// kernel. A 16 x 16 block computes a 16 x 16 tile of O: for each 16-wide step along k the
// block stages a tile of A and of B in shared memory (zeros past the edges), then every lane
// accumulates its element from the two tiles. grid = (column tiles, row tiles, batch).
#include <stdio.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "ops/common/dev_kernel.h"
#include "ops/common/dev_text.h"
#include "ops/common/dev_ops.h"

#define MM_TILE 16
#define MM_MAX_GRID_YZ 65535u

static const char* zero_of(hg_dtype t) { return t == HG_DTYPE_BOOL ? "false" : "0"; }

// Loads operand X (A or B) element (r, q) into the compute-type register dst when in range.
static void tile_load(hg_sb* b, const char* X, hg_dtype xdt, hg_dtype ct, const char* r,
                      const char* q, const char* rlim, const char* qlim, const char* rs,
                      const char* cs, const char* base, const char* xr, const char* dst) {
    hg_sb_put(b, "    mov.%s %s, %s\n    cmp.lt.u64 ok, %s, %s\n    cmp.lt.u64 ok2, %s, %s\n"
                 "    and.bool ok, ok, ok2\n    if ok\n    cvt.i64.u64 ri, %s\n"
                 "    mul.i64 off, ri, %s\n    cvt.i64.u64 ri, %s\n    mul.i64 dt, ri, %s\n"
                 "    add.i64 off, off, dt\n    add.i64 off, off, %s\n    ld.global.%s %s, %s[off]\n",
              hg_dk_dt(ct), dst, zero_of(ct), r, rlim, q, qlim, r, rs, q, cs, base, hg_dk_dt(xdt), xr, X);
    hg_dk_cvt(b, dst, ct, xr, xdt);
    hg_sb_put(b, "    endif\n");
}

static void kernel_text(hg_sb* b, const hg_dev_mm* p, hg_dtype adt, hg_dtype bdt, hg_dtype rt,
                        hg_dtype ct, hg_dtype odt, int gemm) {
    hg_sb_put(b, ".kernel hg_dev_matmul\n.param A: global const %s\n.param B: global const %s\n"
                 ".param O: global %s\n.param m: u64\n.param n: u64\n.param k: u64\n"
                 ".param aoff: i64\n.param boff: i64\n.param ooff: i64\n.param ars: i64\n"
                 ".param acs: i64\n.param brs: i64\n.param bcs: i64\n.param ors: i64\n"
                 ".param ocs: i64\n.param r0: u64\n.param z0: u64\n.param alpha: f64\n"
                 ".param beta: f64\n",
              hg_dk_dt(adt), hg_dk_dt(bdt), hg_dk_dt(odt));
    hg_dk_param_dims_text(b, "z", p->nbatch, 3);
    hg_sb_put(b, ".shared sa: %s[%d]\n.shared sb: %s[%d]\n", hg_dk_dt(ct), MM_TILE * MM_TILE, hg_dk_dt(ct),
              MM_TILE * MM_TILE);
    hg_sb_put(b, ".reg u64 tx, ty, row, col, kt, ka, kb, z, dq, dr, li, ra, ix\n"
                 ".reg i64 ab, bb, ob, off, dc, dt, ri\n.reg %s av\n.reg %s bv\n"
                 ".reg %s ca, cb, acc, pr\n.reg %s rv\n.reg %s ov\n.reg f64 f1, f2\n"
                 ".reg bool ok, ok2, done, az, bz\n",
              hg_dk_dt(adt), hg_dk_dt(bdt), hg_dk_dt(ct), hg_dk_dt(rt), hg_dk_dt(odt));
    hg_sb_put(b, "    cvt.u64.u32 tx, %%tid.x\n    cvt.u64.u32 ty, %%tid.y\n"
                 "    cvt.u64.u32 col, %%ctaid.x\n    mul.u64 col, col, %d\n    add.u64 col, col, tx\n"
                 "    cvt.u64.u32 row, %%ctaid.y\n    mul.u64 row, row, %d\n    add.u64 row, row, ty\n"
                 "    add.u64 row, row, r0\n    cvt.u64.u32 z, %%ctaid.z\n    add.u64 z, z, z0\n"
                 "    mov.i64 ab, aoff\n    mov.i64 bb, boff\n    mov.i64 ob, ooff\n",
              MM_TILE, MM_TILE);
    static const char* const offs[3] = {"ab", "bb", "ob"};
    hg_dk_emit_offsets_text(b, "z", p->nbatch, 3, "z", offs);
    hg_sb_put(b, "    mov.%s acc, %s\n    mul.u64 ra, ty, %d\n    add.u64 li, ra, tx\n"
                 "    mov.u64 kt, 0\n    loop\n    cmp.ge.u64 done, kt, k\n    break done\n"
                 "    add.u64 ka, kt, tx\n",
              hg_dk_dt(ct), zero_of(ct), MM_TILE);
    tile_load(b, "A", adt, ct, "row", "ka", "m", "k", "ars", "acs", "ab", "av", "ca");
    hg_sb_put(b, "    st.shared.%s sa[li], ca\n    add.u64 kb, kt, ty\n", hg_dk_dt(ct));
    tile_load(b, "B", bdt, ct, "kb", "col", "k", "n", "brs", "bcs", "bb", "bv", "cb");
    hg_sb_put(b, "    st.shared.%s sb[li], cb\n    bar\n", hg_dk_dt(ct));
    for (int q = 0; q < MM_TILE; q++) {
        hg_sb_put(b, "    add.u64 ix, ra, %d\n    ld.shared.%s ca, sa[ix]\n"
                     "    add.u64 ix, tx, %d\n    ld.shared.%s cb, sb[ix]\n",
                  q, hg_dk_dt(ct), q * MM_TILE, hg_dk_dt(ct));
        if (ct == HG_DTYPE_BOOL) hg_sb_put(b, "    and.bool pr, ca, cb\n    or.bool acc, acc, pr\n");
        else hg_sb_put(b, "    fma.%s acc, ca, cb, acc\n", hg_dk_dt(ct));
    }
    hg_sb_put(b, "    bar\n    add.u64 kt, kt, %d\n    endloop\n"
                 "    cmp.lt.u64 ok, row, m\n    cmp.lt.u64 ok2, col, n\n    and.bool ok, ok, ok2\n"
                 "    if ok\n    cvt.i64.u64 ri, row\n    mul.i64 off, ri, ors\n"
                 "    cvt.i64.u64 ri, col\n    mul.i64 dt, ri, ocs\n    add.i64 off, off, dt\n"
                 "    add.i64 off, off, ob\n",
              MM_TILE);
    hg_dk_cvt(b, "rv", rt, "acc", ct);
    if (gemm) {
        hg_dk_cvt(b, "f1", HG_DTYPE_F64, "rv", rt);
        hg_sb_put(b, "    mul.f64 f1, f1, alpha\n    cmp.eq.f64 az, alpha, 0\n"
                     "    sel.f64 f1, az, 0, f1\n    cmp.ne.f64 bz, beta, 0\n    if bz\n"
                     "    ld.global.%s ov, O[off]\n", hg_dk_dt(odt));
        hg_dk_cvt(b, "f2", HG_DTYPE_F64, "ov", odt);
        hg_sb_put(b, "    fma.f64 f1, beta, f2, f1\n    endif\n");
        hg_dk_cvt(b, "ov", odt, "f1", HG_DTYPE_F64);
    } else {
        hg_dk_cvt(b, "ov", odt, "rv", rt);
    }
    hg_sb_put(b, "    st.global.%s O[off], ov\n    endif\n", hg_dk_dt(odt));
}

hg_status hg_dev_matmul(hg_op_ctx* c, const hg_dev_mm* p, const hg_tensor* a, const hg_tensor* b,
                        hg_dtype rt, const hg_tensor* out, int gemm, double alpha, double beta) {
    if (p->m == 0 || p->n == 0) return HG_OK;
    hg_dtype ct = rt == HG_DTYPE_F16 || rt == HG_DTYPE_BF16 ? HG_DTYPE_F32 : rt;
    hg_sb kb = {0};
    kernel_text(&kb, p, a->dtype, b->dtype, rt, ct, out->dtype, gemm);
    uint64_t nz = 1;
    for (int32_t d = 0; d < p->nbatch; d++) nz *= (uint64_t)p->bshape[d];
    uint64_t row_tiles = ((uint64_t)p->m + MM_TILE - 1) / MM_TILE;
    uint64_t col_tiles = ((uint64_t)p->n + MM_TILE - 1) / MM_TILE;
    hg_status st = HG_OK;
    hg_arg args[24 + 4 * HG_MAX_DIMS];
    if (col_tiles > UINT32_MAX / MM_TILE)
        st = hg_error(HG_ERR_UNSUPPORTED, "%s: %lld columns exceed the device kernel's grid",
                      c->fn, (long long)p->n);
    for (uint64_t z0 = 0; z0 < nz && !st; z0 += MM_MAX_GRID_YZ)
        for (uint64_t t0 = 0; t0 < row_tiles && !st; t0 += MM_MAX_GRID_YZ) {
            uint64_t zc = nz - z0 < MM_MAX_GRID_YZ ? nz - z0 : MM_MAX_GRID_YZ;
            uint64_t tc = row_tiles - t0 < MM_MAX_GRID_YZ ? row_tiles - t0 : MM_MAX_GRID_YZ;
            size_t k = 0;
            args[k++] = hg_arg_buffer(a->buffer);
            args[k++] = hg_arg_buffer(b->buffer);
            args[k++] = hg_arg_buffer(out->buffer);
            args[k++] = hg_arg_u64((uint64_t)p->m);
            args[k++] = hg_arg_u64((uint64_t)p->n);
            args[k++] = hg_arg_u64((uint64_t)p->k);
            args[k++] = hg_arg_i64(a->offset);
            args[k++] = hg_arg_i64(b->offset);
            args[k++] = hg_arg_i64(out->offset);
            args[k++] = hg_arg_i64(p->a_rs);
            args[k++] = hg_arg_i64(p->a_cs);
            args[k++] = hg_arg_i64(p->b_rs);
            args[k++] = hg_arg_i64(p->b_cs);
            args[k++] = hg_arg_i64(p->o_rs);
            args[k++] = hg_arg_i64(p->o_cs);
            args[k++] = hg_arg_u64(t0 * MM_TILE);
            args[k++] = hg_arg_u64(z0);
            args[k++] = hg_arg_f64(alpha);
            args[k++] = hg_arg_f64(beta);
            for (int32_t d = 0; d < p->nbatch; d++) {
                args[k++] = hg_arg_u64((uint64_t)p->bshape[d]);
                args[k++] = hg_arg_i64(p->a_bs[d]);
                args[k++] = hg_arg_i64(p->b_bs[d]);
                args[k++] = hg_arg_i64(p->o_bs[d]);
            }
            hg_launch_config cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.grid.x = (uint32_t)col_tiles;
            cfg.grid.y = (uint32_t)tc;
            cfg.grid.z = (uint32_t)zc;
            cfg.block.x = cfg.block.y = MM_TILE;
            cfg.block.z = 1;
            st = hg_dk_launch_text(c->ex, c->fn, &kb, &cfg, args, k);
        }
    hg_sb_free(&kb);
    return st;
}
