// Independent reference for the tensor view and copy tests. A view is read by enumerating all
// its indices in C order and computing offset + sum(index * stride) into a host array, so the
// library's stride arithmetic is checked against the definition, not against itself. Views
// are made over an "iota" buffer (i32, value i at element i), so the value read at an index
// names the element it reached.
//
// All state (executor, iota buffer, RNG) lives in a tref_ctx owned by the test; nothing here
// keeps globals.
#ifndef HG_TENSOR_REF_H
#define HG_TENSOR_REF_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hg_test.h"

enum { TREF_IOTA_N = 4096 };  // elements in the iota buffer

typedef struct {
    hg_executor ex;        // borrowed: created and destroyed by the test
    uint64_t rng;          // hg_test_rand state
    hg_buffer iota;        // i32, TREF_IOTA_N elements, value i at element i
    int32_t* iota_host;    // its mapping
} tref_ctx;

// Creates and fills the iota buffer on ex and seeds the RNG. On failure ctx->iota_host is NULL.
hg_status tref_init(tref_ctx* ctx, hg_executor ex, uint64_t seed);
// Destroys the iota buffer (not the executor).
void tref_fini(tref_ctx* ctx);

// Uniform in [lo, hi].
int64_t tref_rnd(tref_ctx* ctx, int64_t lo, int64_t hi);
// n random bytes.
void tref_fill_random(tref_ctx* ctx, unsigned char* p, size_t n);

// ---- index enumeration and element lookup ---------------------------------------------------
// Advances idx in C order; 0 when it wraps around (all indices visited).
int tref_next_index(int32_t ndim, const int64_t* shape, int64_t* idx);
int64_t tref_numel(int32_t ndim, const int64_t* shape);
// Element index of idx in view t (the definition of a strided view).
int64_t tref_elem_of(const hg_tensor* t, const int64_t* idx);
// A view's elements in C order (any strides), read from its buffer into new host memory (free
// it); NULL when the buffer cannot be read.
unsigned char* tref_read_view(const hg_tensor* t);
// 1 if the element at p of a float dtype is a NaN (any sign or payload); 0 otherwise.
int tref_is_nan(hg_dtype dt, const unsigned char* p);
// All element indices of t in C order (malloc'd, numel entries; NULL for an empty view).
int64_t* tref_elems_of(const hg_tensor* t);
// Value of a view of ctx->iota at idx, read from the host array (equals the element index).
int64_t tref_value_at(const tref_ctx* ctx, const hg_tensor* t, const int64_t* idx);

// ---- random shapes and views ----------------------------------------------------------------
// Random sizes 0..5 (mostly >= 1), total at most cap elements.
void tref_rand_shape(tref_ctx* ctx, int32_t ndim, int64_t* shape, int64_t cap);
// A random view of ctx->iota: either arbitrary strides in [-6, 6] (zero = broadcast) or a
// contiguous tensor sliced with random steps and permuted. 0 when the view could not be made.
int tref_rand_view(tref_ctx* ctx, hg_tensor* out);
// Result shares the input's buffer and dtype, and its unused entries are zero.
int tref_same_base(const hg_tensor* r, const hg_tensor* t);

// ---- error paths ----------------------------------------------------------------------------
enum { TREF_N_BAD = 5 };
// Five malformed copies of the valid tensor t (over a 24-element buffer, offset 0, shape
// (4, 6)) and the status each must produce: a destroyed buffer (dead), a dtype that differs
// from the buffer's, too many dims, an offset reaching element 24, a negative size.
void tref_bad_tensors(const hg_tensor* t, hg_buffer dead, hg_tensor bad[TREF_N_BAD],
                      hg_status want[TREF_N_BAD]);

// Byte written over an out parameter before a call that must fail.
enum { TREF_SENTINEL = 0xAB };
// Whether *out still holds only TREF_SENTINEL bytes.
int tref_untouched(const hg_tensor* out);
// Checks that expr fails with want, leaves *out untouched and sets a message.
#define TREF_CHECK_ERR(out, expr, want)                                                     \
    do {                                                                                    \
        memset((out), TREF_SENTINEL, sizeof *(out));                                        \
        CHECK_STATUS(expr, want);                                                           \
        CHECK_MSG(tref_untouched(out), "%s wrote out on failure", #expr);                   \
        CHECK(hg_last_error()[0] != 0);                                                     \
    } while (0)

#endif
