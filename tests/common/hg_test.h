// Minimal test harness shared by the C tests: CHECK macros that count failures and a summary
// line ("N passed, N failed") that CI's runner reads.
#ifndef HG_TEST_H
#define HG_TEST_H
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hologram.h"

extern int hg_test_passed;
extern int hg_test_failed;

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (cond) { hg_test_passed++; }                                                      \
        else { hg_test_failed++;                                                             \
               fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); }    \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                 \
    do {                                                                                     \
        if (cond) { hg_test_passed++; }                                                      \
        else { hg_test_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__,      \
               __LINE__, #cond); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); }        \
    } while (0)

// Checks that an expression returns the given status; prints hg_last_error() otherwise.
#define CHECK_STATUS(expr, want)                                                             \
    do {                                                                                     \
        hg_status s_ = (expr);                                                               \
        if (s_ == (want)) { hg_test_passed++; }                                              \
        else { hg_test_failed++; fprintf(stderr, "%s:%d: %s returned %s, want %s (%s)\n",    \
               __FILE__, __LINE__, #expr, hg_status_string(s_), hg_status_string(want),      \
               hg_last_error()); }                                                           \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, HG_OK)

// Prints the summary line and returns the process exit code.
int hg_test_finish(const char* name);

// Path of a file in the source tree (HG_SOURCE_DIR env var, set by ctest); static buffer.
const char* hg_test_source_path(const char* rel);

// The whole file at path, NUL-terminated (malloc'd; *len its size, len may be NULL); NULL when
// it cannot be read.
char* hg_test_read_file(const char* path, size_t* len);

// The main of op tests that run on HG_TEST_BACKEND when it names a device backend (once, with
// on_device = 1; exit code 77, skipped, when that backend is unavailable) and otherwise on CPU
// executors of 1 and 2 threads (on_device = 0): *ex is the executor of each run. Returns the
// process exit code (hg_test_finish's).
int hg_test_run_executors(const char* name, hg_executor* ex, void (*run)(int on_device));

// Deterministic PRNG for tests (splitmix64).
uint64_t hg_test_rand(uint64_t* state);

#endif
