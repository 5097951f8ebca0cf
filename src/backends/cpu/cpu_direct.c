// The direct path of the CPU backend: a kernel of the shape every one-op elementwise call of
// the op library compiles to,
//
//     p = %gid.x < n;  if p;  [ld.global r_k, buf_k[%gid.x]]*;  r = op(...);
//     st.global out[%gid.x], r;  endif
//
// launched 1-D on one worker, runs as one call of the op's kernel on the buffers themselves
// (constants as lanes on the stack). The general path costs ~750 instructions of fixed work
// per launch (arena, constants, chunk setup, the interpreter loop); this one ~100. Same kernel
// function, same lanes, same results: loads of plain types are the buffer's bytes, and the op
// writes the store's elements (find_store_fusion's conditions, checked at compile time).
#include "backends/cpu/cpu_internal.h"
#include "base/dtype.h"
#include "base/trace.h"

#define DIRECT_BLOCK 512u   // lanes per kernel call when a source is a constant

static int const_of_slot(const cpu_plan* p, uint32_t slot, uint32_t* index) {
    for (uint32_t i = 0; i < p->nconsts; i++)
        if (p->consts[i].slot == slot) {
            *index = i;
            return 1;
        }
    return 0;
}

static int plain(uint8_t t) {
    return t != HG_DTYPE_BOOL && t != HG_DTYPE_F16 && t != HG_DTYPE_BF16;
}

void hg_cpu_find_direct(cpu_plan* p) {
    cpu_direct* D = &p->direct;
    memset(D, 0, sizeof *D);
    uint32_t gid = p->special_slot[HG_SREG_GID_X];
    if (p->block_mode || p->lane_specials || p->nzero || gid == CPU_NO_SLOT || p->nops < 5)
        return;
    uint32_t nld = p->nops - 5;
    const cpu_op* guard = &p->ops[0];
    const cpu_op* iff = &p->ops[1];
    const cpu_op* alu = &p->ops[2 + nld];
    const cpu_op* st = &p->ops[3 + nld];
    if (guard->kind != CPU_K_ALU || guard->guard != 2 || !guard->tail_guard || guard->a != gid ||
        !const_of_slot(p, guard->b, &D->bound) || iff->kind != CPU_K_IF ||
        iff->a != guard->d || p->ops[p->nops - 1].kind != CPU_K_ENDIF)
        return;
    for (uint32_t i = 2; i < 2 + nld; i++) {
        const cpu_op* ld = &p->ops[i];
        if (ld->kind != CPU_K_LD || ld->space != HG_SPACE_GLOBAL || ld->a != gid ||
            !plain(ld->type))
            return;
    }
    if (alu->kind != CPU_K_ALU || !alu->fuse_st || alu->guard || alu->borrow || !alu->fn ||
        st->kind != CPU_K_ST || st->space != HG_SPACE_GLOBAL || st->a != gid || st->b != alu->d)
        return;
    const uint32_t src[3] = {alu->a, alu->b, alu->c};
    for (int k = 0; k < 3; k++) {
        if (src[k] == p->idx_slot) continue;   // absent operand (CPU_DIRECT_NONE)
        uint32_t j = 2;
        while (j < 2 + nld && p->ops[j].d != src[k]) j++;
        if (j < 2 + nld) {
            D->src_kind[k] = CPU_DIRECT_LOAD;
            D->src_ref[k] = j;
        } else if (const_of_slot(p, src[k], &D->src_ref[k])) {
            D->src_kind[k] = CPU_DIRECT_CONST;
        } else {
            return;
        }
    }
    D->alu = 2 + nld;
    D->st = 3 + nld;
    D->ok = 1;
}

static uint64_t const_bits(const cpu_launch* L, uint32_t index) {
    const cpu_const* c = &L->plan->consts[index];
    return c->is_param ? L->args[c->param].bits : c->bits;
}

int hg_cpu_run_direct(const cpu_launch* L) {
    const cpu_plan* p = L->plan;
    const cpu_direct* D = &p->direct;
    uint64_t bound = (uint32_t)const_bits(L, D->bound);
    uint64_t n = L->total_lanes < bound ? L->total_lanes : bound;
    const cpu_op* st = &p->ops[D->st];
    const hg_bound_arg* out = &L->args[st->mem];
    size_t es_out = hg_dtype_size((hg_dtype)st->type);
    uint8_t* dst = out->base;
    if (n > out->count) return 0;   // the general path reports the access
    _Alignas(64) uint8_t lanes[3][DIRECT_BLOCK * 8];
    const uint8_t* src[3];
    size_t step[3];
    int consts = 0;
    for (int k = 0; k < 3; k++) {
        step[k] = 0;
        switch (D->src_kind[k]) {
        case CPU_DIRECT_LOAD: {
            const cpu_op* ld = &p->ops[D->src_ref[k]];
            const hg_bound_arg* a = &L->args[ld->mem];
            size_t es = hg_dtype_size((hg_dtype)ld->type);
            if (n > a->count) return 0;
            const uint8_t* base = a->base;
            // The same elements as the output (in-place) are read before they are written;
            // any other overlap takes the general path, which copies the loads first.
            if (n && base != dst && base < dst + n * es_out && dst < base + n * es) return 0;
            src[k] = base;
            step[k] = es;
            break;
        }
        case CPU_DIRECT_CONST: {
            const cpu_const* c = &p->consts[D->src_ref[k]];
            uint32_t m = n < DIRECT_BLOCK ? (uint32_t)n : DIRECT_BLOCK;
            hg_cpu_fill_lanes(lanes[k], hg_cpu_storage_bits(c->type, const_bits(L, D->src_ref[k])),
                              hg_cpu_storage_size(c->type), m);
            src[k] = lanes[k];
            consts = 1;
            break;
        }
        default:
            src[k] = lanes[k];   // never read
            break;
        }
    }
    if (hg_trace_on()) hg_trace_note_threads(1);
    hg_cpu_kfn fn = p->ops[D->alu].fn;
    uint64_t block = consts ? DIRECT_BLOCK : n;
    // The first few lanes alone, so that the rest stores whole 64-byte lines: memory from
    // numpy is 16-byte aligned, and a 64-byte store across two lines cost a 65,536-element
    // add or exp 15-25% in L2.
    uint64_t i = 0, head = 0;
    uintptr_t mis = (uintptr_t)dst & 63;
    if (n >= 256 && mis && mis % es_out == 0) head = (64 - mis) / es_out;
    if (head) {
        fn(dst, src[0], src[1], src[2], (size_t)head);
        i = head;
    }
    for (; i < n; i += block) {
        size_t m = (size_t)(n - i < block ? n - i : block);
        fn(dst + i * es_out, src[0] + i * step[0], src[1] + i * step[1], src[2] + i * step[2], m);
    }
    return 1;
}
