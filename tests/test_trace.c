// hg_trace_start / hg_trace_stop from C: the file holds one op span per call (named by the op,
// with executor, dtype, shape, bytes and threads) and the kernel launches inside them; misuse
// gets clear statuses and leaves tracing off. (The JSON's structure and nesting are checked by
// tests/python/test_profile.py, which parses it.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hg_test.h"

static int count(const char* s, const char* sub) {
    int k = 0;
    for (const char* p = s; (p = strstr(p, sub)); p += strlen(sub)) k++;
    return k;
}

int main(void) {
    char path[] = "/tmp/hg_test_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    hg_executor ex;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    hg_buffer a, b, c;
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 15, &a));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 15, &b));
    CHECK_OK(hg_buffer_create(ex, HG_DTYPE_F32, 9, &c));
    int64_t s35[2] = {3, 5}, s53[2] = {5, 3}, s33[2] = {3, 3};
    hg_tensor ta, tb, tb2, tc;
    CHECK_OK(hg_tensor_from_buffer(a, 2, s35, &ta));
    CHECK_OK(hg_tensor_from_buffer(b, 2, s35, &tb));
    CHECK_OK(hg_tensor_from_buffer(b, 2, s53, &tb2));
    CHECK_OK(hg_tensor_from_buffer(c, 2, s33, &tc));

    CHECK(hg_trace_enabled() == 0);
    CHECK_OK(hg_trace_start(path));
    CHECK(hg_trace_enabled() == 1);
    CHECK_STATUS(hg_trace_start(path), HG_ERR_INVALID_ARGUMENT);   // one at a time
    CHECK_OK(hg_binary(HG_BINARY_ADD, &ta, &tb, &ta));
    CHECK_OK(hg_unary(HG_UNARY_EXP, &ta, &ta));
    CHECK_OK(hg_matmul(&ta, &tb2, &tc));
    CHECK_STATUS(hg_binary(HG_BINARY_ADD, &ta, &tc, &ta), HG_ERR_SIZE_MISMATCH);  // traced too
    CHECK_OK(hg_trace_stop());
    CHECK(hg_trace_enabled() == 0);
    CHECK_OK(hg_binary(HG_BINARY_ADD, &ta, &tb, &ta));   // after stop: not in the file

    char* j = hg_test_read_file(path, NULL);
    CHECK(j != NULL);
    if (j) {
        CHECK(strncmp(j, "{\"displayTimeUnit\"", 18) == 0);
        CHECK(strstr(j, "\"traceEvents\": [") != NULL);
        CHECK_MSG(count(j, "\"name\": \"add\"") == 2, "add spans: %d", count(j, "\"name\": \"add\""));
        CHECK(count(j, "\"name\": \"exp\"") == 1);
        CHECK(count(j, "\"name\": \"matmul\"") == 1);
        CHECK(count(j, "\"cat\": \"op\"") == 4);
        CHECK(count(j, "\"cat\": \"launch\"") >= 2);   // add and exp launch kernels
        CHECK(strstr(j, "\"shape\": [3, 5]") != NULL);
        CHECK(strstr(j, "\"shape\": [3, 3]") != NULL);
        CHECK(strstr(j, "\"bytes\": 180") != NULL);    // add: 3 tensors of 15 f32
        CHECK(strstr(j, "\"executor\": \"cpu\"") != NULL);
        CHECK(strstr(j, "\"dropped_events\": 0") != NULL);
        free(j);
    }

    CHECK_STATUS(hg_trace_stop(), HG_ERR_INVALID_ARGUMENT);        // none running
    CHECK_STATUS(hg_trace_start(NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_trace_start(""), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_trace_start("/nonexistent-dir/t.json"), HG_ERR_IO);
    CHECK(strstr(hg_last_error(), "cannot write") != NULL);
    CHECK(hg_trace_enabled() == 0);

    remove(path);
    hg_buffer_destroy(a);
    hg_buffer_destroy(b);
    hg_buffer_destroy(c);
    hg_executor_destroy(ex);
    return hg_test_finish("test_trace");
}
