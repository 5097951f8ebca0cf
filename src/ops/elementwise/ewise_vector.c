// The elementwise kernels' vector variant for device backends (docs/cuda.md, "Elementwise
// kernels"): where every operand is linear (or a scalar parameter) and every bound base is
// aligned to its vector, each lane moves W elements per operand with one ldv / stv (at most 16
// bytes: W = 16 / the widest operand's element size) in a grid-stride loop over the vectors,
// and the last n mod W elements run as the scalar body in the lanes of the first block. The
// expression is emitted W times (one copy per element of the vector), so a lane keeps W
// independent chains in flight. Host-visible backends (the CPU) never take it: their strip-mined
// kernels are faster there.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/dtype.h"
#include "ops/elementwise/ewise_internal.h"
#include "ops/elementwise/ewise_vector.h"

#define EW_VEC_BLOCK 256u
// Blocks per SM at most: 8 x 256 lanes fill an SM of 2,048 resident threads (H100/H200); more
// vectors than that many lanes loop.
#define EW_VEC_BLOCKS_PER_SM 8u
// The copies of the expression (W x its instructions) stay well below the ISA's 4,096 registers.
#define EW_VEC_MAX_INSTRS 2048

int hg_ew_vector_enabled(void) {
    static int on = -1;   // read once: a benchmark switch, not a per-call option
    if (on < 0) on = hg_config_bool("HOLOGRAM_EW_VECTOR", 1);
    return on;
}

uint32_t hg_ew_vector_width(int32_t nops, const void* const* base, const size_t* es,
                            int64_t numel, int32_t instr_count) {
    size_t widest = 0;
    for (int32_t o = 0; o < nops; o++)
        if (base[o] && es[o] > widest) widest = es[o];
    if (!widest) return 0;
    uint32_t w = (uint32_t)(HG_VEC_MAX_BYTES / widest);
    while (w >= 2 && (int64_t)w * instr_count > EW_VEC_MAX_INSTRS) w /= 2;
    // Launches are split every hg_ew_launch_max lanes: each part must start aligned too.
    if (w < 2 || numel < (int64_t)w || hg_ew_launch_max % HG_VEC_MAX_BYTES) return 0;
    for (int32_t o = 0; o < nops; o++)
        if (base[o] && (uintptr_t)base[o] % (w * es[o])) return 0;
    return w;
}

hg_launch_config hg_ew_vector_launch(int num_sm, uint64_t n, uint32_t w) {
    uint64_t blocks = (n / w + EW_VEC_BLOCK - 1) / EW_VEC_BLOCK;
    uint64_t cap = (uint64_t)(num_sm > 0 ? num_sm : 1) * EW_VEC_BLOCKS_PER_SM;
    hg_launch_config cfg = hg_launch_1d(1, EW_VEC_BLOCK);
    cfg.grid.x = (uint32_t)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
    return cfg;
}

// A run of w new registers of type t (consecutive: nothing else is declared in between).
static uint32_t reg_run(hg_kb* m, hg_dtype t, uint32_t w) {
    uint32_t first = hg_kb_new_reg(m, t);
    for (uint32_t q = 1; q < w; q++) hg_kb_new_reg(m, t);
    return first;
}

// One copy of the expression over inputs `ins`; output j's value (in its dtype) into register
// dst[j] + q.
static void emit_copy(hg_kb* m, const hg_ew_expr* e, const hg_operand* ins, const uint32_t* dst,
                      uint32_t q) {
    hg_operand nodes[HG_EW_MAX_NODES];
    if (!m->err) m->err = hg_ew_emit_ops(m->p, e, ins, nodes);
    for (int32_t j = 0; j < e->noutputs && !m->err; j++) {
        int32_t node = e->outputs[j].node;
        hg_kb_set_cvt(m, e->outputs[j].dtype, e->nodes[node].dtype, dst[j] + q, nodes[node]);
    }
}

hg_status hg_ew_build_vector(const hg_ew_expr* e, const uint8_t* scalar, uint32_t w,
                             hg_prog** out) {
    hg_kb m = hg_kb_new("elementwise_v");
    int32_t nin = e->ninputs;
    char name[16];
    for (int32_t i = 0; i < nin; i++) {
        snprintf(name, sizeof name, scalar[i] ? "s%d" : "in%d", (int)i);
        if (scalar[i]) hg_kb_scalar(&m, name, e->inputs[i].dtype);
        else hg_kb_buffer(&m, name, e->inputs[i].dtype, 1);
    }
    for (int32_t j = 0; j < e->noutputs; j++) {
        snprintf(name, sizeof name, "out%d", (int)j);
        hg_kb_buffer(&m, name, e->outputs[j].dtype, 0);
    }
    hg_operand n = hg_kb_scalar(&m, "n", HG_DTYPE_U32);
    uint32_t lg = 0;
    while ((1u << lg) < w) lg++;
    const hg_dtype U = HG_DTYPE_U32;
    hg_operand nv = hg_kb_op2(&m, HG_OP_SHR, U, n, hg_imm_u64(lg));
    hg_operand step = hg_kb_op2(&m, HG_OP_MUL, U, hg_sreg(HG_SREG_NTID_X),
                                hg_sreg(HG_SREG_NCTAID_X));
    uint32_t v = hg_kb_new_reg(&m, U);
    hg_kb_mov(&m, U, v, hg_sreg(HG_SREG_GID_X));
    uint32_t run[HG_EW_MAX_INPUTS], res[HG_EW_MAX_OUTPUTS];
    for (int32_t i = 0; i < nin; i++)
        if (!scalar[i]) run[i] = reg_run(&m, e->inputs[i].dtype, w);
    for (int32_t j = 0; j < e->noutputs; j++) res[j] = reg_run(&m, e->outputs[j].dtype, w);
    // for (v = gid; v < nv; v += lanes) { W elements from v * W }
    hg_kb_loop(&m);
    hg_kb_break(&m, hg_kb_cmp(&m, HG_CMP_GE, U, hg_reg(v), nv).index);
    hg_operand idx = hg_kb_op2(&m, HG_OP_SHL, U, hg_reg(v), hg_imm_u64(lg));
    for (int32_t i = 0; i < nin; i++)
        if (!scalar[i]) hg_kb_ldv(&m, HG_SPACE_GLOBAL, e->inputs[i].dtype, w, run[i], (uint32_t)i, idx);
    hg_operand ins[HG_EW_MAX_INPUTS];
    for (uint32_t q = 0; q < w; q++) {
        for (int32_t i = 0; i < nin; i++)
            ins[i] = scalar[i] ? hg_param((uint32_t)i) : hg_reg(run[i] + q);
        emit_copy(&m, e, ins, res, q);
    }
    for (int32_t j = 0; j < e->noutputs; j++)
        hg_kb_stv(&m, HG_SPACE_GLOBAL, e->outputs[j].dtype, w, (uint32_t)(nin + j), idx, res[j]);
    hg_kb_set(&m, HG_OP_ADD, U, v, hg_reg(v), step, hg_none());
    hg_kb_endloop(&m);
    // The tail: elements nv * W + gid for gid < n mod W, one per lane.
    hg_operand t = hg_kb_op2(&m, HG_OP_ADD, U, hg_kb_op2(&m, HG_OP_SHL, U, nv, hg_imm_u64(lg)),
                             hg_sreg(HG_SREG_GID_X));
    hg_kb_if(&m, hg_kb_cmp(&m, HG_CMP_LT, U, t, n).index);
    for (int32_t i = 0; i < nin; i++) {
        if (scalar[i]) {
            ins[i] = hg_param((uint32_t)i);
            continue;
        }
        uint32_t r = hg_kb_new_reg(&m, e->inputs[i].dtype);
        hg_kb_ld(&m, HG_SPACE_GLOBAL, e->inputs[i].dtype, r, (uint32_t)i, t);
        ins[i] = hg_reg(r);
    }
    emit_copy(&m, e, ins, res, 0);
    for (int32_t j = 0; j < e->noutputs; j++)
        hg_kb_st(&m, HG_SPACE_GLOBAL, e->outputs[j].dtype, (uint32_t)(nin + j), t, hg_reg(res[j]));
    hg_kb_endif(&m);
    return hg_kb_finish(&m, out);   // validated by the kernel cache on a miss
}
