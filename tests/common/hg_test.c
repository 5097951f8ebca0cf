#include "hg_test.h"
#include <stdlib.h>

int hg_test_passed = 0;
int hg_test_failed = 0;

int hg_test_finish(const char* name) {
    printf("%s: %d passed, %d failed\n", name, hg_test_passed, hg_test_failed);
    return hg_test_failed ? 1 : 0;
}

int hg_test_run_executors(const char* name, hg_executor* ex, void (*run)(int on_device)) {
    const char* dev = getenv("HG_TEST_BACKEND");
    if (dev && dev[0] && strcmp(dev, "cpu") != 0) {
        if (hg_executor_create_by_name(dev, ex)) {
            printf("%s: SKIPPED (backend '%s' unavailable: %s)\n", name, dev, hg_last_error());
            return 77;
        }
        run(1);
        hg_executor_destroy(*ex);
        return hg_test_finish(name);
    }
    for (int k = 0; k < 2; k++) {
        hg_executor_options o = {HG_BACKEND_CPU, 0, k + 1};
        CHECK_OK(hg_executor_create_ex(&o, ex));
        run(0);
        hg_executor_destroy(*ex);
    }
    return hg_test_finish(name);
}

const char* hg_test_source_path(const char* rel) {
    static char buf[4096];
    const char* root = getenv("HG_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}

uint64_t hg_test_rand(uint64_t* state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

char* hg_test_read_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* t = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    fclose(f);
    if (t) t[n] = 0;
    if (t && len) *len = (size_t)n;
    return t;
}
