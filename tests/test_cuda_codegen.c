// The CUDA code generator without a GPU: every example program, every valid corpus program and
// 300 random valid programs (all opcodes, types, operand kinds, shared memory, atomics, nested
// control flow) are turned into CUDA C and compiled by NVRTC for sm_80 and sm_90 (Ampere,
// Hopper). NVRTC is found as the backend finds it (HOLOGRAM_NVRTC, libnvrtc.so, ...); without it
// the test is skipped with the reason (exit 77). The generated code's semantics are checked by
// running the instruction, example and op tests on the CUDA backend's host emulation
// (tests/CMakeLists.txt: the *_cuda_emu tests).
//
// Also checks what needs no compiler: the argument-block layout, the structure of the source,
// the driver loader's message when no GPU driver is installed, and that the CUDA backend reports
// itself unavailable with that reason.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_codegen.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_internal.h"
#include "hg_test.h"
#include "isa/program.h"
#include "random_program.h"

static int g_compiled, g_failed;

// Generates and NVRTC-compiles p for the architectures (when NVRTC is there).
static void check_program(const hg_prog* p, const char* label, int have_nvrtc) {
    char* src = NULL;
    size_t len = 0;
    hg_status s = hg_cuda_codegen(p, &src, &len);
    CHECK_MSG(s == HG_OK, "%s: codegen failed: %s", label, hg_last_error());
    if (s) return;
    CHECK(strlen(src) == len);
    CHECK_MSG(strstr(src, "extern \"C\" __global__ void __launch_bounds__(1024) hg_kernel(") != NULL,
              "%s: no kernel entry point", label);
    if (have_nvrtc) {
        static const int arch[][2] = {{8, 0}, {9, 0}};
        for (int a = 0; a < 2; a++) {
            char key[40];
            void* img = NULL;
            size_t n = 0;
            s = hg_cuda_nvrtc_compile(src, len, arch[a][0], arch[a][1], p->name, key, &img, &n);
            CHECK_MSG(s == HG_OK, "%s: NVRTC sm_%d%d: %s", label, arch[a][0], arch[a][1],
                      hg_last_error());
            if (s == HG_OK) {
                CHECK(n > 0);
                g_compiled++;
            } else {
                g_failed++;
                if (g_failed == 1) fprintf(stderr, "---- generated source of %s ----\n%s\n", label, src);
            }
            free(img);
        }
    }
    free(src);
}

static void check_dir(const char* dir, int have_nvrtc) {
    DIR* d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d) return;
    struct dirent* e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".hasm")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = 0;
        char* text = hg_test_read_file(path, &len);
        CHECK_MSG(text != NULL, "cannot read %s", path);
        if (!text) continue;
        hg_prog* p = NULL;
        hg_status s = hg_prog_parse(text, len, &p);
        if (s == HG_OK) s = hg_prog_validate(p);
        CHECK_MSG(s == HG_OK, "%s: %s", path, hg_last_error());
        if (s == HG_OK) check_program(p, path, have_nvrtc);
        hg_prog_free(p);
        free(text);
        n++;
    }
    closedir(d);
    CHECK_MSG(n > 0, "no .hasm files in %s", dir);
}

static void test_layout(void) {
    CHECK(sizeof(hg_cuda_karg) == 24);
    CHECK(sizeof(hg_cuda_kerr) == 72);
    CHECK(hg_cuda_kargs_err_offset(3) == 72 && hg_cuda_kargs_dyn_offset(3) == 80 &&
          hg_cuda_kargs_launch_offset(3) == 88 && hg_cuda_kargs_size(3) == 104);
    CHECK(hg_cuda_kargs_size(0) == 56);   // a parameterless kernel still has one slot
}

// Without a GPU driver (the CI machine), the backend says exactly what is missing.
static void test_unavailable_reason(void) {
    if (hg_cuda_emulating()) return;
    char why[1024];
    const hg_cuda_api* a = hg_cuda_driver(why, sizeof why);
    hg_backend_info info;
    CHECK_OK(hg_backend_query(HG_BACKEND_CUDA, &info));
    if (a) {
        printf("  a CUDA driver is installed: backend available=%d (%s)\n", info.available,
               info.reason);
        return;
    }
    CHECK(!info.available);
    CHECK_MSG(strstr(info.reason, "libcuda.so.1") && strstr(info.reason, "HOLOGRAM_CUDA_DRIVER"),
              "reason: %s", info.reason);
    hg_executor ex;
    hg_status s = hg_executor_create(HG_BACKEND_CUDA, &ex);
    CHECK(s == HG_ERR_BACKEND_UNAVAILABLE);
    CHECK_MSG(strstr(hg_last_error(), "libcuda.so.1") != NULL, "message: %s", hg_last_error());
    printf("  no GPU driver here: %s\n", info.reason);
}

int main(void) {
    test_layout();
    test_unavailable_reason();
    char why[1024];
    int have_nvrtc = hg_cuda_nvrtc(why, sizeof why) != NULL;
    const char* src = getenv("HG_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/examples", src ? src : ".");
    check_dir(dir, have_nvrtc);
    snprintf(dir, sizeof dir, "%s/tests/corpus/valid", src ? src : ".");
    check_dir(dir, have_nvrtc);
    for (uint64_t seed = 1; seed <= 300; seed++) {
        hg_prog* p = hg_test_random_program(seed);
        CHECK(p != NULL);
        if (!p) continue;
        char label[64];
        snprintf(label, sizeof label, "random program %llu", (unsigned long long)seed);
        CHECK_MSG(hg_prog_validate(p) == HG_OK, "%s: %s", label, hg_last_error());
        check_program(p, label, have_nvrtc);
        hg_prog_free(p);
    }
    if (!have_nvrtc) {
        printf("test_cuda_codegen: generated source checked; NVRTC compilation SKIPPED: %s\n", why);
        int r = hg_test_finish("test_cuda_codegen");
        return r ? r : 77;
    }
    printf("test_cuda_codegen: %d NVRTC compilations (sm_80, sm_90) of generated kernels\n",
           g_compiled);
    return hg_test_finish("test_cuda_codegen");
}
