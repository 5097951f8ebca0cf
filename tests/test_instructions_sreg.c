// Special registers (%tid %ntid %ctaid %nctaid %gid, x y z) read with mov.u32 on the CPU
// backend under several 3-D grid/block shapes, against a C enumeration of the launch. Each lane
// computes its own linear id from the specials and writes all 15 values to out[id*15 + k]; the
// buffer starts with a sentinel, so a lane that never ran or ran twice under another id shows.
#include "instr_harness.h"

#define K(expr) IH_K(&k, expr)
#define BIN(op, d, a, b) K(hg_emit_binary(k.p, op, HG_DTYPE_U32, d, a, b))

static void test_shape(hg_dim3 grid, hg_dim3 block) {
    uint64_t lanes = (uint64_t)grid.x * grid.y * grid.z * block.x * block.y * block.z;
    size_t n = (size_t)lanes * HG_SREG_COUNT;
    ih_kb k;
    ih_kb_begin(&k, "sregs");
    uint32_t bo = ih_kb_buf(&k, "out", HG_DTYPE_U32, 0);
    uint32_t s[HG_SREG_COUNT];
    char name[16];
    for (int q = 0; q < HG_SREG_COUNT; q++) {
        snprintf(name, sizeof name, "s%d", q);
        s[q] = ih_kb_reg(&k, name, HG_DTYPE_U32);
    }
    uint32_t blk = ih_kb_reg(&k, "blk", HG_DTYPE_U32), lane = ih_kb_reg(&k, "lane", HG_DTYPE_U32);
    uint32_t tmp = ih_kb_reg(&k, "tmp", HG_DTYPE_U32), idx = ih_kb_reg(&k, "idx", HG_DTYPE_U32);
    for (int q = 0; q < HG_SREG_COUNT; q++)
        K(hg_emit_unary(k.p, HG_OP_MOV, HG_DTYPE_U32, s[q], hg_sreg((hg_special)q)));
    // blk = (ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x
    BIN(HG_OP_MUL, blk, hg_reg(s[HG_SREG_CTAID_Z]), hg_reg(s[HG_SREG_NCTAID_Y]));
    BIN(HG_OP_ADD, blk, hg_reg(blk), hg_reg(s[HG_SREG_CTAID_Y]));
    BIN(HG_OP_MUL, blk, hg_reg(blk), hg_reg(s[HG_SREG_NCTAID_X]));
    BIN(HG_OP_ADD, blk, hg_reg(blk), hg_reg(s[HG_SREG_CTAID_X]));
    // lane = (tid.z * ntid.y + tid.y) * ntid.x + tid.x   (special registers as direct operands)
    BIN(HG_OP_MUL, lane, hg_sreg(HG_SREG_TID_Z), hg_sreg(HG_SREG_NTID_Y));
    BIN(HG_OP_ADD, lane, hg_reg(lane), hg_sreg(HG_SREG_TID_Y));
    BIN(HG_OP_MUL, lane, hg_reg(lane), hg_sreg(HG_SREG_NTID_X));
    BIN(HG_OP_ADD, lane, hg_reg(lane), hg_sreg(HG_SREG_TID_X));
    // id = blk * (ntid.x * ntid.y * ntid.z) + lane; idx = id * 15
    BIN(HG_OP_MUL, tmp, hg_reg(s[HG_SREG_NTID_X]), hg_reg(s[HG_SREG_NTID_Y]));
    BIN(HG_OP_MUL, tmp, hg_reg(tmp), hg_reg(s[HG_SREG_NTID_Z]));
    BIN(HG_OP_MUL, tmp, hg_reg(tmp), hg_reg(blk));
    BIN(HG_OP_ADD, tmp, hg_reg(tmp), hg_reg(lane));
    BIN(HG_OP_MUL, idx, hg_reg(tmp), hg_imm_u64(HG_SREG_COUNT));
    for (int q = 0; q < HG_SREG_COUNT; q++) {
        K(hg_emit_store(k.p, HG_SPACE_GLOBAL, HG_DTYPE_U32, bo, hg_reg(idx), hg_reg(s[q])));
        BIN(HG_OP_ADD, idx, hg_reg(idx), hg_imm_u64(1));
    }
    uint64_t* want = malloc(n * 8);
    uint64_t* got = malloc(n * 8);
    for (size_t q = 0; q < n; q++) got[q] = 0xFFFFFFFFu;
    hg_buffer b = ih_make_buf(HG_DTYPE_U32, n, got);
    size_t id = 0;
    for (uint32_t bz = 0; bz < grid.z; bz++)
        for (uint32_t by = 0; by < grid.y; by++)
            for (uint32_t bx = 0; bx < grid.x; bx++)
                for (uint32_t tz = 0; tz < block.z; tz++)
                    for (uint32_t ty = 0; ty < block.y; ty++)
                        for (uint32_t tx = 0; tx < block.x; tx++, id++) {
                            const uint64_t v[HG_SREG_COUNT] = {
                                tx, ty, tz, block.x, block.y, block.z, bx, by, bz,
                                grid.x, grid.y, grid.z, bx * block.x + tx, by * block.y + ty,
                                bz * block.z + tz};
                            memcpy(want + id * HG_SREG_COUNT, v, sizeof v);
                        }
    hg_launch_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid = grid;
    cfg.block = block;
    hg_arg args[] = {hg_arg_buffer(b)};
    if (ih_kb_launch(&k, cfg, args, 1) == HG_OK) {
        ih_read_buf(b, HG_DTYPE_U32, n, got);
        size_t bad = 0;
        for (size_t q = 0; q < n; q++)
            if (got[q] != want[q] && bad++ < 3)
                fprintf(stderr, "MISMATCH grid %ux%ux%u block %ux%ux%u: lane %zu %s = %llu, want "
                        "%llu\n", grid.x, grid.y, grid.z, block.x, block.y, block.z,
                        q / HG_SREG_COUNT, (const char*[]){"%tid.x", "%tid.y", "%tid.z",
                        "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
                        "%nctaid.x", "%nctaid.y", "%nctaid.z", "%gid.x", "%gid.y",
                        "%gid.z"}[q % HG_SREG_COUNT], (unsigned long long)got[q],
                        (unsigned long long)want[q]);
        CHECK_MSG(bad == 0, "special registers, grid %ux%ux%u block %ux%ux%u: %zu wrong", grid.x,
                  grid.y, grid.z, block.x, block.y, block.z, bad);
        printf("  grid %ux%ux%u block %ux%ux%u: %llu lanes x 15 specials  %s\n", grid.x, grid.y,
               grid.z, block.x, block.y, block.z, (unsigned long long)lanes,
               bad ? "MISMATCH" : "ok");
    }
    hg_buffer_destroy(b);
    ih_kb_end(&k);
    free(want);
    free(got);
}

int main(void) {
    const hg_dim3 shapes[][2] = {
        {{3, 2, 2}, {4, 3, 2}}, {{2, 3, 1}, {5, 1, 7}}, {{1, 1, 1}, {1, 1, 1}},
        {{7, 1, 1}, {33, 1, 1}}, {{1, 1, 5}, {2, 2, 2}}, {{2, 2, 2}, {8, 8, 16}},
        {{300, 1, 1}, {1, 1, 1}}, {{1, 4, 1}, {1, 1, 64}}, {{2, 1, 1}, {1024, 1, 1}},
    };
    for (size_t q = 0; q < sizeof shapes / sizeof shapes[0]; q++)
        test_shape(shapes[q][0], shapes[q][1]);
    ih_shutdown();
    return hg_test_finish("test_instructions_sreg");
}
