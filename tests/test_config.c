// Configuration from the environment: the one parser (base/config.h) takes each variable's
// documented values (booleans in any case: 1/0, true/false, yes/no, on/off), and anything else
// gives a warning that names the variable, the value and what is accepted, with the default
// used. The variables read once per process (HOLOGRAM_LOG_LEVEL, HOLOGRAM_CPU_LEVEL) are
// checked in subprocesses by tests/python/test_config_env.py.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cuda/cuda_internal.h"
#include "base/config.h"
#include "graph/graph_internal.h"
#include "hg_test.h"

static char g_last[2048];
static int g_count;

static void capture(hg_log_level level, const char* msg, void* user) {
    (void)user;
    if (level != HG_LOG_WARN) return;
    g_count++;
    snprintf(g_last, sizeof g_last, "%s", msg);
}

static void reset(void) {
    g_count = 0;
    g_last[0] = 0;
}

// One warning naming all of the given words.
static int warned(const char* a, const char* b, const char* c) {
    return g_count == 1 && strstr(g_last, a) && strstr(g_last, b) && (!c || strstr(g_last, c));
}

static void test_bool(void) {
    static const char* const yes[] = {"1", "true", "TRUE", "Yes", "on", " ON "};
    static const char* const no[] = {"0", "false", "False", "NO", "off", "Off\n"};
    for (int i = 0; i < 6; i++) {
        reset();
        setenv("HG_TEST_FLAG", yes[i], 1);
        CHECK_MSG(hg_config_bool("HG_TEST_FLAG", 0) == 1, "'%s' is true", yes[i]);
        setenv("HG_TEST_FLAG", no[i], 1);
        CHECK_MSG(hg_config_bool("HG_TEST_FLAG", 1) == 0, "'%s' is false", no[i]);
        CHECK(g_count == 0);
    }
    unsetenv("HG_TEST_FLAG");
    CHECK(hg_config_bool("HG_TEST_FLAG", 1) == 1 && hg_config_bool("HG_TEST_FLAG", 0) == 0);
    setenv("HG_TEST_FLAG", "", 1);
    CHECK(hg_config_bool("HG_TEST_FLAG", 1) == 1 && g_count == 0);
    reset();
    setenv("HG_TEST_FLAG", "maybe", 1);
    CHECK(hg_config_bool("HG_TEST_FLAG", 0) == 0);
    CHECK_MSG(warned("HG_TEST_FLAG", "'maybe'", "true/false"), "warning: %s", g_last);
    // Once per variable and value: these are read on every probe.
    CHECK(hg_config_bool("HG_TEST_FLAG", 0) == 0 && g_count == 1);
    reset();
    setenv("HG_TEST_FLAG", "2", 1);
    CHECK(hg_config_bool("HG_TEST_FLAG", 1) == 1);
    CHECK_MSG(warned("HG_TEST_FLAG", "'2'", "using true"), "warning: %s", g_last);
    unsetenv("HG_TEST_FLAG");
}

static void test_choice_int_bytes(void) {
    static const char* const c[] = {"generic", "avx2", "avx512"};
    setenv("HG_TEST_CHOICE", "AVX2", 1);
    reset();
    CHECK(hg_config_choice("HG_TEST_CHOICE", c, 3, 2) == 1 && g_count == 0);
    setenv("HG_TEST_CHOICE", "sse9", 1);
    CHECK(hg_config_choice("HG_TEST_CHOICE", c, 3, 2) == 2);
    CHECK_MSG(warned("HG_TEST_CHOICE", "'sse9'", "generic, avx2, avx512"), "warning: %s", g_last);
    unsetenv("HG_TEST_CHOICE");

    setenv("HG_TEST_INT", " 86 ", 1);
    reset();
    CHECK(hg_config_int("HG_TEST_INT", 0, 100, 7) == 86 && g_count == 0);
    static const char* const bad[] = {"101", "-1", "8x", "x", "99999999999999999999999"};
    for (int i = 0; i < 5; i++) {
        reset();
        setenv("HG_TEST_INT", bad[i], 1);
        CHECK_MSG(hg_config_int("HG_TEST_INT", 0, 100, 7) == 7, "'%s'", bad[i]);
        CHECK_MSG(warned("HG_TEST_INT", bad[i], "[0, 100]"), "warning: %s", g_last);
    }
    unsetenv("HG_TEST_INT");

    setenv("HOLOGRAM_CPU_MEMORY_CACHE", "4096", 1);
    reset();
    CHECK(hg_config_cpu_memory_cache() == 4096 && g_count == 0);
    setenv("HOLOGRAM_CPU_MEMORY_CACHE", "-5", 1);
    CHECK(hg_config_cpu_memory_cache() == (size_t)1 << 30);
    CHECK_MSG(warned("HOLOGRAM_CPU_MEMORY_CACHE", "'-5'", "byte count"), "warning: %s", g_last);
    unsetenv("HOLOGRAM_CPU_MEMORY_CACHE");

    setenv("HOLOGRAM_NUM_THREADS", "two", 1);
    reset();
    CHECK(hg_config_num_threads(0) >= 1);
    CHECK_MSG(warned("HOLOGRAM_NUM_THREADS", "'two'", "positive integer"), "warning: %s", g_last);
    unsetenv("HOLOGRAM_NUM_THREADS");
}

// The variables the issue found read loosely.
static void test_variables(void) {
    static const char* const off[] = {"false", "no", "off", "0", "OFF"};
    for (int i = 0; i < 5; i++) {
        setenv("HOLOGRAM_CUDA_EMULATE", off[i], 1);
        CHECK_MSG(!hg_cuda_emulating(), "HOLOGRAM_CUDA_EMULATE=%s turns emulation on", off[i]);
        setenv("HOLOGRAM_DISABLE_FUSION", off[i], 1);
        hg_compile_opts o;
        hg_compile_opts_from_env(&o);
        CHECK_MSG(o.fusion == 1, "HOLOGRAM_DISABLE_FUSION=%s disables fusion", off[i]);
    }
    setenv("HOLOGRAM_CUDA_EMULATE", "Yes", 1);
    CHECK(hg_cuda_emulating());
    reset();
    setenv("HOLOGRAM_CUDA_EMULATE", "please", 1);
    CHECK(!hg_cuda_emulating());
    CHECK_MSG(warned("HOLOGRAM_CUDA_EMULATE", "'please'", "yes/no"), "warning: %s", g_last);
    unsetenv("HOLOGRAM_CUDA_EMULATE");

    hg_compile_opts o;
    setenv("HOLOGRAM_DISABLE_FUSION", "true", 1);
    hg_compile_opts_from_env(&o);
    CHECK(o.fusion == 0);
    unsetenv("HOLOGRAM_DISABLE_FUSION");
    setenv("HOLOGRAM_DUMP", "PASSES", 1);
    hg_compile_opts_from_env(&o);
    CHECK(o.fusion == 1 && o.dump == 1);
    reset();
    setenv("HOLOGRAM_DUMP", "kernels", 1);
    hg_compile_opts_from_env(&o);
    CHECK(o.dump == 0);
    CHECK_MSG(warned("HOLOGRAM_DUMP", "'kernels'", "passes"), "warning: %s", g_last);
    unsetenv("HOLOGRAM_DUMP");

    // A bad backend name is an error, not a warning: running elsewhere would mislead.
    setenv("HOLOGRAM_BACKEND", "gpu", 1);
    hg_executor ex;
    CHECK_STATUS(hg_executor_create(HG_BACKEND_AUTO, &ex), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "HOLOGRAM_BACKEND='gpu'") != NULL);
    setenv("HOLOGRAM_BACKEND", " CPU ", 1);
    CHECK_OK(hg_executor_create(HG_BACKEND_AUTO, &ex));
    hg_backend_kind k = HG_BACKEND_AUTO;
    CHECK_OK(hg_executor_backend(ex, &k));
    CHECK(k == HG_BACKEND_CPU);
    CHECK_OK(hg_executor_destroy(ex));
    unsetenv("HOLOGRAM_BACKEND");
}

int main(void) {
    hg_log_set_callback(capture, NULL);
    test_bool();
    test_choice_int_bytes();
    test_variables();
    hg_log_set_callback(NULL, NULL);
    return hg_test_finish("test_config");
}
