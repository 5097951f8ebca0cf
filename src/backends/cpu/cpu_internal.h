// Internal (CPU backend): the execution plan a kernel compiles to, the per-worker scratch, and
// the functions the backend's files share.
//
// The files call one another in this order, each using only the ones below it (check_layers.py
// FILE_ORDER checks it):
//   cpu_backend.c   the vtable: compile, launch, launch_rows, memory, library calls
//   cpu_rows.c      row launches            -> cpu_exec, cpu_direct, cpu_lanes
//   cpu_exec.c      chunks and the mask stack -> cpu_direct, cpu_strip, cpu_memory_ops, cpu_lanes
//   cpu_compile.c   plans                   -> cpu_direct (find), cpu_strip (mark)
//   cpu_direct.c    direct-shaped launches  -> cpu_lanes
//   cpu_strip.c     strip-mined runs        -> cpu_lanes, cpu_stream
//   cpu_memory_ops.c ld/st/atom/shfl/ldv/stv -> cpu_lanes
//   cpu_lanes.c     errors, lane names, constant lanes, borrowed lanes, row gathers
//   cpu_memory.c, cpu_stream.c, cpu_kernels.c, thread_pool.c, gemm/, simd/: leaves
//
// Execution model: every instruction runs over a chunk of lanes at once. A register is an
// array of `chunk` lanes (8 bytes reserved per lane, typed dense view); immediates and scalar
// parameters are constant registers filled once per worker and launch, special registers are
// filled per chunk, so every kernel is a register-to-register loop. Programs without bar and
// shared memory use chunks of consecutive global lanes spanning blocks; programs with them use
// exactly one block per chunk, whose lanes run each instruction in lockstep (so bar is a no-op).
// Divergence runs under byte masks; the all-active case calls kernels without masks.
#ifndef HG_BACKENDS_CPU_INTERNAL_H
#define HG_BACKENDS_CPU_INTERNAL_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "backends/backend.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/thread_pool.h"

#define HG_CPU_MAX_SHARED_BYTES (1u << 20)
#define HG_CPU_CHUNK 4096u          // lanes per chunk for programs without bar/shared memory
#define HG_CPU_STRIP_CHUNK 65536u   // ... whose body is strip-mined (chunk work is then O(1))
#define HG_CPU_MAX_ARENA (8u << 20) // the chunk shrinks for programs with many registers
// Lanes per worker at least (a launch of fewer runs on the caller alone): the best split of
// the lightest kernel, an f32 add (docs/performance.md); heavier kernels gain from threads at
// smaller sizes still: never a loss for them.
#define HG_CPU_PARALLEL_LANES 16384u
// Launches of a direct-shaped plan (cpu_direct) skip the chunk machinery (~750 instructions of
// a 1-element add) at any size, except those of more than this many lanes whose output is
// written with streaming stores (the strip path does those); row launches take the direct path
// for rows of up to this many lanes.
#define HG_CPU_DIRECT_MAX_LANES 65536u
#define HG_CPU_STRIP 512u           // lanes per strip of a strip-mined run (cpu_strip.c); a
                                    // chunk of at most this many lanes runs op by op

// What an operation does (plan kinds).
typedef enum cpu_kind {
    CPU_K_ALU = 0,   // fn(d, a, b, c, n); blended under a partial mask
    CPU_K_LD, CPU_K_ST, CPU_K_ATOM,
    CPU_K_IF, CPU_K_ELSE, CPU_K_ENDIF, CPU_K_LOOP, CPU_K_ENDLOOP,
    CPU_K_BREAK, CPU_K_EXIT, CPU_K_BAR, CPU_K_FENCE,
    CPU_K_SHFL,      // d = a of lane (lane, b, mode in aop) of the warp; the chunk is one block
    CPU_K_LDV, CPU_K_STV,   // lane by lane (no host path uses them for speed)
    CPU_K_COUNT
} cpu_kind;

#define CPU_NO_SLOT UINT32_MAX
#define CPU_CHAIN_A_K 8u    // chain_form: the first op's first operand is a constant
#define CPU_CHAIN_TEE 16u   // chain_form: the op's result is also written to its register

typedef struct cpu_op {
    hg_cpu_kfn fn;         // ALU kernel
    uint32_t d, a, b, c;   // slots (CPU_NO_SLOT when absent); a = condition for if/break
    uint32_t target;       // if: its else (or endif); else: endif; loop: endloop; endloop: loop
    uint32_t mem;          // ld/st/atom: buffer parameter or shared array index
    uint8_t kind;          // cpu_kind
    uint8_t type;          // instruction type
    uint8_t dlog2;         // log2 of the destination's storage size
    uint8_t idx_type;      // ld/st/atom: dtype of the index operand
    uint8_t space;         // ld/st/atom: hg_space
    uint8_t aop;           // atom: hg_atomic_op; shfl: hg_shfl_mode; ldv/stv: the vector width
    uint8_t borrow;        // mov from a constant/special register: borrow its lanes
    uint8_t fuse_st;       // the next op stores this result, which nothing reads afterwards:
                           // when that store is full and contiguous, compute straight into it
    uint8_t guard;         // cmp.lt.u32 with a constant bound: the `i < n` of every elementwise
                           // kernel, decided per chunk when i is %gid.x (see run_chunk);
                           // 2: its result is read only by the `if` right after it
    uint8_t tail_guard;    // guard 2 at the top level whose if (no else) runs to the end of the
                           // program: lanes failing it do nothing more (see run_chunk)
    uint8_t slog2[3];      // log2 of the storage size of sources a, b, c
    uint8_t strip_zero;    // in a strip-mined run: operands read / result written at offset 0
    uint8_t pair;          // in a strip-mined run: this f32 op and the next run as one pass of
                           // pair_f32 (1 + (op1 * 5 + op2) * 4 + variant; 0: not paired)
    uint8_t chain;         // in a strip-mined run: this f32 op starts a chain of that many ALU
                           // ops run in registers (chain_f32, cpu_strip.c mark_chains)
    uint8_t chain_op;      // in a chain: the op (HG_OP_*) and its HG_CPU_CHAIN_* form, plus
    uint8_t chain_form;    // CPU_CHAIN_A_K / CPU_CHAIN_TEE
    uint32_t strip_end;    // first op of a strip-mined run: the op after it (0: none)
    uint8_t b_once;        // ALU: the kernel reads lane 0 of source b only (a constant: K2K)
    uint8_t strip_whole;   // first op of such a run: every ALU result goes straight to a store,
                           // no register holds an intermediate: one pass over the chunk
} cpu_op;

// A constant register: an immediate or a scalar parameter, in the storage layout of `type`.
typedef struct cpu_const {
    uint32_t slot;
    uint8_t type;
    uint8_t is_param;
    uint32_t param;        // parameter index when is_param
    uint64_t bits;         // immediate bits otherwise
} cpu_const;

// A kernel of the shape `if (%gid.x < n) { ld*; r = op(...); st buf[%gid.x], r }` (one ALU op
// over loaded and constant operands: an elementwise op of the op library): a small 1-D launch
// on one worker calls the op's kernel on the buffers themselves (cpu_direct.c).
enum { CPU_DIRECT_NONE, CPU_DIRECT_LOAD, CPU_DIRECT_CONST };
typedef struct cpu_direct {
    int ok;
    uint32_t bound;           // the const index of n
    uint32_t alu, st;         // op indices
    uint8_t src_kind[3];      // per ALU source: CPU_DIRECT_NONE / LOAD / CONST
    uint32_t src_ref[3];      // the load's op index or the const index
} cpu_direct;

typedef struct cpu_plan {
    uint64_t id;              // unique per compiled plan (never reused, unlike its address)
    const hg_prog* prog;
    cpu_op* ops;
    uint32_t nops;
    uint32_t nslots;          // registers, constants, specials, temporaries
    uint32_t tmp_slot;        // result of a masked ALU op before blending
    uint32_t idx_slot;        // memory indices widened to int64
    uint32_t special_slot[HG_SREG_COUNT];  // CPU_NO_SLOT when unused
    int lane_specials;        // reads %tid, %ctaid, %gid.y or %gid.z (filled per chunk)
    cpu_const* consts;
    uint32_t nconsts;
    uint8_t* reg_size;        // storage bytes per lane of each register
    uint32_t* zero_regs;      // registers some lane may read before writing: zeroed per chunk
    uint32_t nzero;
    uint32_t max_depth;       // deepest if/loop nesting
    int block_mode;           // 1: one block per chunk (bar or shared memory)
    uint32_t chunk;           // lanes per chunk when !block_mode
    // shared arrays: byte offset in the worker's shared area (64-aligned), static counts
    uint32_t* shared_off;
    uint32_t shared_static_bytes;
    int has_dynamic_shared;
    uint32_t dynamic_shared_index;
    cpu_direct direct;
    int uniform;              // no loops: every chunk of a 1-D launch costs about the same
} cpu_plan;

// Per-worker scratch, reused across launches (grown when a launch needs more).
#define CPU_FILLED_MAX 8       // constants remembered per worker (plans with more refill)

// What the constant registers of a worker's arena hold now (fill_constants skips refilling
// them when a launch needs the same: a 64K-lane chunk's bound register is 256 KiB of stores).
typedef struct cpu_filled {
    uint64_t plan_id;         // 0: nothing valid
    uint64_t chunk;
    uint32_t dims[6];         // block and grid (the %ntid / %nctaid registers)
    uint64_t bits[CPU_FILLED_MAX];
} cpu_filled;

typedef struct cpu_worker {
    uint8_t* arena;           // slots * chunk * 8 bytes + masks, 64-byte aligned
    size_t arena_cap;
    cpu_filled filled;        // constants in the arena
    uint32_t mask_ones;       // leading lanes of the active mask that are 1 (same key)
    uint8_t* shared;          // shared memory of the block being run
    size_t shared_cap;
} cpu_worker;

// Freed large mappings kept for reuse (cpu_memory.c); and freed heap blocks of 512 B..64 KiB,
// a few per size class (4 per octave), in lock-free slots.
#define HG_CPU_MEM_CACHE_SLOTS 64
#define HG_CPU_SMALL_CLASSES 28
#define HG_CPU_SMALL_SLOTS 4
typedef struct cpu_mem_cache {
    pthread_mutex_t lock;
    struct { void* mem; size_t capacity; } blocks[HG_CPU_MEM_CACHE_SLOTS];
    int n;
    size_t bytes;             // sum of the cached capacities
    size_t budget;            // at most this many bytes cached
    _Atomic(void*) small[HG_CPU_SMALL_CLASSES][HG_CPU_SMALL_SLOTS];
} cpu_mem_cache;

typedef struct cpu_state {
    int nthreads;
    hg_pool* pool;
    cpu_worker* workers;      // nthreads entries; guarded by lock
    pthread_mutex_t lock;     // one launch at a time per executor
    cpu_mem_cache mem_cache;
    size_t stream_bytes;      // outputs from this size on are written with streaming stores
} cpu_state;

// cpu_stream.c: dst[0..bytes) = src[0..bytes) with non-temporal stores where the CPU has them
// (x86-64: SSE2), else memcpy. Such stores are weakly ordered: hg_cpu_stream_fence() before
// another thread may read dst.
void hg_cpu_stream_copy(void* dst, const void* src, size_t bytes);
void hg_cpu_stream_fence(void);

// cpu_memory.c: the backend's mem_alloc / mem_free and the cache's lifetime.
hg_status hg_cpu_mem_alloc(void* state, size_t nbytes, int zero, void** out);
void hg_cpu_mem_free(void* state, void* mem);
void hg_cpu_mem_cache_init(cpu_mem_cache* c, size_t budget);
void hg_cpu_mem_cache_release(cpu_mem_cache* c);

// The launch being run, shared by all workers.
typedef struct cpu_launch {
    const cpu_plan* plan;
    const hg_cpu_kernels* k;
    hg_launch_config cfg;
    const hg_bound_arg* args;
    uint64_t lanes_per_block;
    uint64_t total_lanes;
    uint64_t chunk;           // lanes per chunk
    uint64_t nchunks;
    uint64_t group;           // chunks taken per grab
    size_t slot_bytes;        // chunk * 8 rounded to 64
    uint32_t dyn_shared_count;
    size_t shared_bytes;      // per block
    int x_linear;             // 1-D launch: %gid.x of lane i of a chunk is first + i
    int static_parts;         // part w runs its own contiguous share of the chunks
    int nparts;
    atomic_uint_fast64_t next;  // next chunk to hand out
    atomic_int failed;
    hg_status err;
    char msg[1024];
    cpu_state* st;
} cpu_launch;

// One chunk being executed by one worker.
typedef struct cpu_chunk {
    cpu_launch* L;
    cpu_worker* w;
    uint8_t* base;            // arena
    uint64_t first;           // global linear lane of lane 0
    uint32_t n;               // lanes in this chunk
    uint8_t* cur;             // active mask
    uint32_t cnt;             // active lanes
    // Where each slot's lanes are now. Usually the slot's own arena storage, but a register
    // may borrow read-only lanes instead of copying them: a full contiguous load points it at
    // the buffer itself, a full mov from a constant or special register at that register. The
    // first write to a borrowing register takes back its own storage (cpu_wslot).
    void** ptr;
    uint32_t* borrowed;       // registers pointing into buffers (may hold stale entries)
    uint32_t nborrowed;
    const uint8_t* arena_end; // slots below this are arena storage
    const void* gid_x;        // own lanes of %gid.x (NULL when unused)
    // In 1-D launches %gid.x of lane i is first + i, so its lanes are only written when
    // something reads their values: `lazy` is gid_x until then (NULL once filled). Code that
    // only compares pointers with gid_x reads c->ptr directly.
    void* lazy;
    uint32_t ones_pc;         // a guard at this op found every lane of the chunk in bounds
} cpu_chunk;

// ---- cpu_lanes.c: the helpers under every execution file ----
// Records the launch's first error (later ones are dropped) and stops other workers.
void hg_cpu_fail(cpu_launch* L, hg_status s, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
// Coordinates of a global linear lane (x fastest: lanes of a block, then blocks).
typedef struct hg_cpu_lane_pos { uint64_t t[3], c[3]; } hg_cpu_lane_pos;
hg_cpu_lane_pos hg_cpu_lane_at(const cpu_launch* L, uint64_t lane);
// "block (x,y,z) lane (x,y,z)" of lane i of the chunk.
void hg_cpu_lane_name(const cpu_chunk* c, uint32_t i, char* buf, size_t len);
// n lanes of `bits` of `size` bytes; a constant's bits in register storage.
void hg_cpu_fill_lanes(void* dst, uint64_t bits, unsigned size, uint32_t n);
uint64_t hg_cpu_storage_bits(uint8_t type, uint64_t bits);
// d[i] = v + i for i < n (%gid.x and %tid.x along a row of lanes).
static inline void hg_cpu_fill_iota(uint32_t* d, uint32_t v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) d[i] = v + i;
}

static inline void* cpu_own(const cpu_chunk* c, uint32_t slot) {
    return c->base + (size_t)slot * c->L->slot_bytes;
}
void hg_cpu_fill_lazy(cpu_chunk* c);   // cpu_lanes.c
// Lanes of a slot for reading.
static inline void* cpu_slot(const cpu_chunk* c, uint32_t slot) {
    void* p = c->ptr[slot];
    if (__builtin_expect(p == c->lazy && p != NULL, 0)) hg_cpu_fill_lazy((cpu_chunk*)c);
    return p;
}
// Lanes of a register about to be written: its own storage (with the borrowed values copied
// in first when only some lanes are written).
static inline void* cpu_wslot(cpu_chunk* c, uint32_t reg, int full) {
    void* own = cpu_own(c, reg);
    if (c->ptr[reg] != own) {
        if (!full) memcpy(own, cpu_slot(c, reg), (size_t)c->n * c->L->plan->reg_size[reg]);
        c->ptr[reg] = own;
    }
    return own;
}
// cpu_lanes.c: gives back borrowed buffer lanes (copying them) for every register borrowing from
// [lo, hi); all of them when lo == hi == NULL. Called before anything writes memory.
void hg_cpu_unborrow(cpu_chunk* c, const uint8_t* lo, const uint8_t* hi);

// cpu_direct.c: finds the direct shape in a built plan; runs a launch of it split into `parts`
// on the pool (1: on the caller alone) (1 when it ran, 0 when the launch must take the general
// path: out-of-bounds or overlapping operands, or an output written with streaming stores).
void hg_cpu_find_direct(cpu_plan* p);
int hg_cpu_run_direct(const cpu_launch* L, int parts);
// Rows r0 .. r1-1 of a row launch (kernel_launch_rows) of a direct plan on the calling thread,
// gathered arguments through `scratch` (lanes elements per argument with a lane step); returns
// the first row it left to the general path (r1 when none).
uint64_t hg_cpu_run_direct_rows(const cpu_plan* p, const hg_bound_arg* args, uint64_t lanes,
                                uint64_t r0, uint64_t r1, const hg_row_args* ra,
                                uint8_t* const* scratch);

// cpu_compile.c
hg_status hg_cpu_plan_build(const hg_prog* prog, const hg_cpu_kernels* k, cpu_plan** out);
void hg_cpu_plan_free(cpu_plan* p);

// cpu_exec.c
hg_status hg_cpu_launch(cpu_state* st, const cpu_plan* plan, const hg_launch_config* cfg,
                        const hg_bound_arg* args, size_t nargs);
// A launch of plan over cfg's lanes set up to run on one worker at a time, the arenas of
// workers 0 .. parts-1 grown for it (row launches of a general plan: each part runs its rows
// on its own worker); then one run of it with args on worker w, on the calling thread (its
// status; the message in L->msg).
hg_status hg_cpu_launch_serial_setup(cpu_state* st, const cpu_plan* plan,
                                     const hg_launch_config* cfg, int parts, cpu_launch* L);
hg_status hg_cpu_launch_serial_run(cpu_launch* L, const hg_bound_arg* args, int w);
// cpu_rows.c: the backend's kernel_launch_rows (backend.h).
hg_status hg_cpu_launch_rows(cpu_state* st, const cpu_plan* plan, const hg_launch_config* cfg,
                             const hg_bound_arg* args, size_t nargs, uint64_t rows,
                             const hg_row_args* ra);
// cpu_lanes.c: n elements of es bytes, step bytes apart at s, to d adjacent.
void hg_cpu_gather_lanes(uint8_t* d, const uint8_t* s, uint64_t n, int64_t step, size_t es);
// Row launches gather an input whose consecutive rows are adjacent elements (a transposed
// operand) HG_CPU_ROW_TILE rows at a time: each line read once for all of them.
#define HG_CPU_ROW_TILE 16u
static inline int hg_cpu_rows_tiled(const hg_row_args* ra, uint32_t i, size_t es) {
    return ra->row_step[i] == (int64_t)es && !(ra->spread && ra->spread[i]);
}
// cpu_lanes.c: a tile of nsub sub-rows of cols elements (d or s adjacent, sub-row after
// sub-row) from / to sub-row t at base + t * sub_step bytes, element i lane bytes further;
// sub-rows one element apart (a transposed operand) go through hg_transpose_32.
void hg_cpu_gather_subrows(uint8_t* d, const uint8_t* s, uint64_t nsub, uint64_t cols,
                           int64_t sub_step, int64_t lane, size_t es);
void hg_cpu_scatter_subrows(uint8_t* d, const uint8_t* s, uint64_t nsub, uint64_t cols,
                            int64_t sub_step, int64_t lane, size_t es);
// cpu_lanes.c: n / cols values of es bytes, step bytes apart at s, each written cols times to d.
void hg_cpu_spread_lanes(uint8_t* d, const uint8_t* s, uint64_t n, uint64_t cols, int64_t step,
                         size_t es);
// cpu_lanes.c: rows t < nr of such an input: d[t * n + i] = the element at s + i * step + t * es.
void hg_cpu_gather_tile(uint8_t* d, const uint8_t* s, uint64_t n, uint64_t nr, int64_t step,
                        size_t es);

// cpu_strip.c: straight-line runs of ld/ALU/st replayed in L1-sized strips of lanes.
#define HG_CPU_STRIP_MAX_OPS 64
void hg_cpu_mark_strips(const hg_prog* g, cpu_plan* p, const hg_cpu_kernels* k);
// Runs the run starting at op pc: 1 when done, 0 when it does not apply to this chunk (the
// caller then runs its ops one by one).
int hg_cpu_run_strips(cpu_chunk* c, uint32_t pc);

// cpu_memory_ops.c: 0 on success, -1 after hg_cpu_fail.
int hg_cpu_exec_ld(cpu_chunk* c, const cpu_op* op, uint32_t pc);
int hg_cpu_exec_st(cpu_chunk* c, const cpu_op* op, uint32_t pc);
int hg_cpu_exec_atom(cpu_chunk* c, const cpu_op* op, uint32_t pc);
// shfl over the chunk's lanes (one block, lane i = linear lane id i).
void hg_cpu_exec_shfl(cpu_chunk* c, const cpu_op* op);
int hg_cpu_exec_vec(cpu_chunk* c, const cpu_op* op, uint32_t pc);   // ldv and stv
// The memory a full, contiguous, in-bounds store `st` would write (after giving back borrowed
// lanes of that memory), or NULL when the store must run lane by lane.
void* hg_cpu_store_target(cpu_chunk* c, const cpu_op* st);

#endif
