// The measured region for the guard's Python case (python_case.py loads this with ctypes):
// Python cannot issue callgrind's client requests itself. Built by perf_guard.py with the
// system C compiler: cc -O2 -shared -fPIC callgrind_shim.c -o shim.so
#include "guard_region.h"

void hg_guard_begin(void);
void hg_guard_end(const char* name);

void hg_guard_begin(void) { guard_region_begin(); }

void hg_guard_end(const char* name) { guard_region_end(name); }
