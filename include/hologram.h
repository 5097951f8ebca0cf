// hologram.h — the one public header of libhologram (C11).
//
// Quick example: c = a + b on the CPU with an Atlas ISA program written in text.
//
//     hg_executor ex;  hg_program prog;  hg_buffer a, b, c;
//     hg_executor_create(HG_BACKEND_AUTO, &ex);
//     hg_program_parse(text, strlen(text), &prog);          // see docs/isa.md
//     hg_buffer_create(ex, HG_DTYPE_F32, n, &a);  ...      // also b, c
//     hg_buffer_write(a, 0, host_a, n);  ...
//     hg_arg args[] = { hg_arg_buffer(a), hg_arg_buffer(b), hg_arg_buffer(c), hg_arg_u32(n) };
//     hg_launch_config cfg = hg_launch_1d(n, 256);
//     if (hg_launch(ex, prog, &cfg, args, 4) != HG_OK) fprintf(stderr, "%s\n", hg_last_error());
//     hg_buffer_read(c, 0, host_c, n);
//     hg_buffer_destroy(a); ...  hg_program_destroy(prog);  hg_executor_destroy(ex);
//
// Conventions
// - Every fallible call returns hg_status; results come back through out parameters, which are
//   written only on success. On failure hg_last_error() returns a thread-local message naming
//   what was wrong and what was expected; the message stays until the next failing call on the
//   same thread.
// - Handles (hg_executor, hg_buffer, hg_program, hg_kernel) are small values, not pointers. Each
//   carries a kind tag and a generation counter: a destroyed, zero, foreign or wrong-kind handle is
//   detected and gives HG_ERR_INVALID_HANDLE, never a crash.
// - Ownership: every *_create / *_parse / *_load names the *_destroy that releases it. Strings and
//   byte blocks the library returns are released with hg_free().
// - Thread safety: all functions may be called from any thread. One executor may be used from
//   several threads at once (launches on one executor are serialized internally; buffers may be
//   read and written concurrently as long as the regions written do not overlap). A program is
//   immutable once it has been launched or compiled into a kernel; building it (hg_program_add_*,
//   hg_program_emit) is not thread-safe for one program. Destroying a handle while another thread
//   is still using that same handle is a race the library does not guard against.
#ifndef HOLOGRAM_H
#define HOLOGRAM_H

// The API in parts, one concern each (all part of this one public header; include this file):
#include "hologram/core.h"     // version, status and errors, logging, dtypes, executors, buffers
#include "hologram/tensor.h"   // tensor views and strided copies
#include "hologram/isa.h"      // Atlas ISA programs, kernels, launches
#include "hologram/ops.h"      // the op library on tensor views
#include "hologram/graph.h"    // graphs and plans

#endif  // HOLOGRAM_H
