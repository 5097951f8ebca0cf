// npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0) for the CLI.
//
//     npy_array arr;  char err[512];
//     if (npy_read("a.npy", 0, &arr, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); ... }
//     ... arr.dtype, arr.count, arr.data ...
//     npy_write("out.npy", HG_DTYPE_F32, arr.shape, arr.ndim, arr.data, 0, err, sizeof err);
//     npy_array_free(&arr);
//
// Supported: little-endian (or byte-order-free) numeric dtypes <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1
// <u2 <u4 <u8 |b1, C order, any shape (the data is handed out flattened). Big-endian data,
// Fortran order and object/structured dtypes are rejected with a message. NumPy has no bfloat16:
// with bf16_as_u16 set, bf16 data is written as '<u2' (raw bits) and npy_read leaves '<u2' files
// as u16 for the caller to reinterpret.
#ifndef HG_CLI_NPY_H
#define HG_CLI_NPY_H
#include <stddef.h>
#include <stdint.h>
#include "hologram.h"

#define NPY_MAX_DIMS 32

typedef struct npy_array {
    hg_dtype dtype;
    int ndim;                       // 0 for a 0-d array (count 1)
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t count;                 // product of shape
    void* data;                     // malloc'd, count elements in native (little-endian) order
} npy_array;

// Reads path into *out. Returns 0 on success; otherwise -1 with a message in err.
int npy_read(const char* path, npy_array* out, char* err, size_t errlen);
// Parses an in-memory .npy image (used by npy_read; exposed for tests).
int npy_parse(const unsigned char* bytes, size_t len, npy_array* out, char* err, size_t errlen);
void npy_array_free(npy_array* a);

// Writes count = prod(shape) elements of dtype from data. ndim 0 writes a 0-d array.
// bf16 is refused unless bf16_as_u16 is set (then written as '<u2' raw bits).
int npy_write(const char* path, hg_dtype dtype, const uint64_t* shape, int ndim,
              const void* data, int bf16_as_u16, char* err, size_t errlen);

// The numpy descr of a dtype ("<f4"), or NULL where numpy has none (bf16).
const char* npy_descr_of(hg_dtype dtype);

#endif
