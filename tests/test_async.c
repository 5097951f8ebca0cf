// Asynchronous execution: hg_executor_set_stream / hg_executor_stream, events (record, query,
// synchronize, elapsed time against the host clock, wait, misuse, lifetime with the executor)
// and the deferred errors of asynchronous launches: a kernel that stores out of bounds is
// launched, the launch returns HG_OK on CUDA (the CPU reports at the launch), the next
// synchronizing call (hg_executor_synchronize, a host read, an event synchronize covering it)
// returns HG_ERR_OUT_OF_BOUNDS naming the kernel and the launch, once, and later work and ops
// give correct results. Runs on CPU executors, and on HG_TEST_BACKEND (tests/cuda_emu.cmake runs
// it on the CUDA emulation, whose errors take the same path as on a GPU).
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "base/handles.h"
#include "hg_test.h"

static hg_executor g_ex;
static int g_async;   // launches return before they ran (CUDA)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static hg_program parse(const char* text) {
    hg_program p = {0};
    CHECK_OK(hg_program_parse(text, strlen(text), &p));
    return p;
}

// y[i + 5] = 1 for every lane of a 16-lane launch: lanes 11..15 store out of bounds of 16.
static const char* k_oob = ".kernel oob\n.param y: global f32\n.reg u32 i\n"
                           "mov.u32 i, %gid.x\nadd.u32 i, i, 5\nst.global.f32 y[i], 1.0\n";
// y[i] = x[i] * 2 for i < n.
static const char* k_twice = ".kernel twice\n.param x: global const f32\n.param y: global f32\n"
                             ".param n: u32\n.reg u32 i\n.reg f32 v\n.reg bool p\n"
                             "mov.u32 i, %gid.x\ncmp.lt.u32 p, i, n\nif p\n"
                             "  ld.global.f32 v, x[i]\n  mul.f32 v, v, 2.0\n"
                             "  st.global.f32 y[i], v\nendif\n";

static int has(const char* needle) { return strstr(hg_last_error(), needle) != NULL; }

// The status the out-of-bounds launch of `k` gives: HG_OK on CUDA, the error on the CPU.
static void launch_oob(hg_kernel k, hg_buffer y) {
    hg_arg a = hg_arg_buffer(y);
    hg_launch_config cfg = hg_launch_1d(16, 16);
    hg_status s = hg_kernel_launch(k, &cfg, &a, 1);
    if (g_async) {
        CHECK_MSG(s == HG_OK, "asynchronous launch gave %s: %s", hg_status_string(s),
                  hg_last_error());
    } else {
        CHECK_STATUS(s, HG_ERR_OUT_OF_BOUNDS);
        CHECK_MSG(has("kernel 'oob'") && has("instruction 2"), "%s", hg_last_error());
    }
}

// An asynchronous out-of-bounds report: status, the kernel, the access and who found it.
static void check_report(hg_status s, const char* found_by) {
    CHECK_STATUS(s, HG_ERR_OUT_OF_BOUNDS);
    CHECK_MSG(has("kernel 'oob'") && has("instruction 2") && has("'y'") && has("of 16 elements")
              && has("launch ") && has(found_by), "message: %s", hg_last_error());
}

// y = 2 * x on n elements through the `twice` kernel; checks y on the host.
static void check_twice_works(hg_kernel twice) {
    enum { n = 1000 };
    float x[n], y[n];
    for (int i = 0; i < n; i++) x[i] = (float)i * 0.25f - 7.0f;
    hg_buffer bx, by;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, n, &bx));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, n, &by));
    CHECK_OK(hg_buffer_write(bx, 0, x, n));
    hg_arg a[3] = {hg_arg_buffer(bx), hg_arg_buffer(by), hg_arg_u32(n)};
    hg_launch_config cfg = hg_launch_1d(n, 128);
    CHECK_OK(hg_kernel_launch(twice, &cfg, a, 3));
    CHECK_OK(hg_buffer_read(by, 0, y, n));
    int bad = 0;
    for (int i = 0; i < n; i++) bad += y[i] != x[i] * 2.0f;
    CHECK_MSG(bad == 0, "%d of %d elements of 2x differ", bad, n);
    hg_buffer_destroy(bx);
    hg_buffer_destroy(by);
}

static void test_streams(int on_device) {
    void* st = (void*)0x77;
    CHECK_OK(hg_executor_stream(g_ex, &st));
    void* own = st;
    if (!on_device) CHECK(own == NULL);
    CHECK_OK(hg_executor_set_stream(g_ex, NULL));
    CHECK_OK(hg_executor_stream(g_ex, &st));
    CHECK(st == own);
    hg_clear_error();
    hg_status s = hg_executor_set_stream(g_ex, (void*)0x1234);
    if (on_device) {
        CHECK_OK(s);   // the emulation takes any value: its streams are names
        CHECK_OK(hg_executor_stream(g_ex, &st));
        CHECK(st == (void*)0x1234);
        hg_kernel_destroy((hg_kernel){0});   // unrelated failing call: the stream stays
        CHECK_OK(hg_executor_stream(g_ex, &st));
        CHECK(st == (void*)0x1234);
        CHECK_OK(hg_executor_set_stream(g_ex, NULL));
        CHECK_OK(hg_executor_stream(g_ex, &st));
        CHECK(st == own);
    } else {
        CHECK_STATUS(s, HG_ERR_UNSUPPORTED);
        CHECK_MSG(has("no streams") && has("only NULL"), "%s", hg_last_error());
        CHECK_OK(hg_executor_stream(g_ex, &st));
        CHECK(st == NULL);
    }
    CHECK_STATUS(hg_executor_stream(g_ex, NULL), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_executor_stream((hg_executor){0}, &st), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_executor_set_stream((hg_executor){0}, NULL), HG_ERR_INVALID_HANDLE);
}

// Work between two events: the device time they measure is within the host time around them.
static void test_event_timing(hg_kernel twice) {
    hg_event a, b;
    CHECK_OK(hg_event_create(g_ex, &a));
    CHECK_OK(hg_event_create(g_ex, &b));
    int done = -1;
    CHECK_OK(hg_event_query(a, &done));
    CHECK(done == 1);                              // never recorded: nothing to wait for
    CHECK_OK(hg_event_synchronize(a));
    CHECK_OK(hg_event_wait(a, NULL));
    double ms = -1;
    CHECK_STATUS(hg_event_elapsed_ms(a, b, &ms), HG_ERR_INVALID_ARGUMENT);
    CHECK_MSG(has("never recorded"), "%s", hg_last_error());
    CHECK(ms == -1);
    enum { n = 1 << 16 };
    hg_buffer bx, by;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, n, &bx));
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, n, &by));
    hg_arg args[3] = {hg_arg_buffer(bx), hg_arg_buffer(by), hg_arg_u32(n)};
    hg_launch_config cfg = hg_launch_1d(n, 256);
    CHECK_OK(hg_executor_synchronize(g_ex));
    double t0 = now_ms();
    CHECK_OK(hg_event_record(a));
    for (int r = 0; r < 3; r++) CHECK_OK(hg_kernel_launch(twice, &cfg, args, 3));
    CHECK_OK(hg_event_record(b));
    CHECK_OK(hg_event_wait(b, NULL));   // the executor's stream waits for itself: a no-op
    CHECK_OK(hg_event_synchronize(b));
    double t1 = now_ms();
    CHECK_OK(hg_event_query(b, &done));
    CHECK(done == 1);
    CHECK_OK(hg_event_elapsed_ms(a, b, &ms));
    CHECK_MSG(ms >= 0 && ms <= t1 - t0 + 1e-3, "elapsed %.6f ms, host saw %.6f ms", ms, t1 - t0);
    double back = 1;
    CHECK_OK(hg_event_elapsed_ms(b, a, &back));
    CHECK_MSG(back <= 0 && back >= -(t1 - t0) - 1e-3, "reverse elapsed %.6f", back);
    // Recording again moves the event.
    CHECK_OK(hg_event_record(a));
    CHECK_OK(hg_event_elapsed_ms(b, a, &ms));
    CHECK(ms >= 0);
    hg_buffer_destroy(bx);
    hg_buffer_destroy(by);
    CHECK_OK(hg_event_destroy(a));
    CHECK_OK(hg_event_destroy(b));
}

static void test_event_misuse(int on_device) {
    hg_event e, dead;
    CHECK_STATUS(hg_event_create((hg_executor){0}, &e), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_event_create(g_ex, NULL), HG_ERR_NULL_POINTER);
    CHECK_OK(hg_event_create(g_ex, &dead));
    CHECK_OK(hg_event_destroy(dead));
    CHECK_STATUS(hg_event_destroy(dead), HG_ERR_INVALID_HANDLE);
    CHECK_MSG(has("not live"), "%s", hg_last_error());
    CHECK_STATUS(hg_event_record(dead), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_event_synchronize(dead), HG_ERR_INVALID_HANDLE);
    int done = 0;
    CHECK_STATUS(hg_event_query(dead, &done), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_event_wait(dead, NULL), HG_ERR_INVALID_HANDLE);
    CHECK_OK(hg_event_create(g_ex, &e));
    CHECK_STATUS(hg_event_query(e, NULL), HG_ERR_NULL_POINTER);
    double ms = 0;
    CHECK_STATUS(hg_event_elapsed_ms(e, dead, &ms), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_event_elapsed_ms(e, e, NULL), HG_ERR_NULL_POINTER);
    hg_event wrong = {g_ex.handle};   // an executor handle is not an event
    CHECK_STATUS(hg_event_record(wrong), HG_ERR_INVALID_HANDLE);
    CHECK_MSG(has("executor handle"), "%s", hg_last_error());
    hg_status s = hg_event_wait(e, (void*)0x99);
    if (on_device) CHECK_OK(s);
    else CHECK_STATUS(s, HG_ERR_UNSUPPORTED);
    // Events of another executor: no elapsed time between them; they go with their executor.
    hg_executor other;
    hg_executor_options o = {HG_BACKEND_CPU, 0, 1};
    CHECK_OK(hg_executor_create_ex(&o, &other));
    hg_event oe;
    CHECK_OK(hg_event_create(other, &oe));
    CHECK_OK(hg_event_record(oe));
    CHECK_OK(hg_event_record(e));
    CHECK_STATUS(hg_event_elapsed_ms(e, oe, &ms), HG_ERR_INVALID_ARGUMENT);
    CHECK_MSG(has("different executors"), "%s", hg_last_error());
    uint64_t live = hg_handle_live_count(HG_HANDLE_EVENT);
    CHECK_OK(hg_executor_destroy(other));
    CHECK(hg_handle_live_count(HG_HANDLE_EVENT) == live - 1);
    CHECK_STATUS(hg_event_query(oe, &done), HG_ERR_INVALID_HANDLE);
    CHECK_OK(hg_event_destroy(e));
}

// Out-of-bounds launches: reported once, by the next synchronizing call, naming the launch.
static void test_deferred_errors(void) {
    hg_program po = parse(k_oob), pt = parse(k_twice);
    hg_kernel oob, twice;
    CHECK_OK(hg_kernel_create(g_ex, po, &oob));
    CHECK_OK(hg_kernel_create(g_ex, pt, &twice));
    hg_buffer y;
    CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 16, &y));

    // 1. hg_executor_synchronize reports it; once; the executor stays usable.
    launch_oob(oob, y);
    if (g_async) check_report(hg_executor_synchronize(g_ex), "hg_executor_synchronize");
    CHECK_OK(hg_executor_synchronize(g_ex));
    float h[16];
    CHECK_OK(hg_buffer_read(y, 0, h, 16));
    int ones = 0;
    for (int i = 0; i < 16; i++) ones += h[i] == 1.0f;
    // CUDA: the in-bounds lanes stored (5..15); the CPU may stop the launch before any store.
    CHECK_MSG(g_async ? ones == 11 && h[0] == 0.0f : ones == 0 || ones == 11,
              "in-bounds lanes: %d ones", ones);
    check_twice_works(twice);

    // 2. A host read reports it, with later work queued after the faulting launch.
    launch_oob(oob, y);
    CHECK_OK(hg_buffer_fill(y, 3.0));
    hg_status s = hg_buffer_read(y, 0, h, 16);
    if (g_async) check_report(s, "host read");
    else CHECK_OK(s);
    CHECK_OK(hg_buffer_read(y, 0, h, 16));
    CHECK(h[0] == 3.0f && h[15] == 3.0f);   // the fill after the fault ran

    // 3. An event synchronize reports the fault of a launch before its record, not after.
    hg_event before, after;
    CHECK_OK(hg_event_create(g_ex, &before));
    CHECK_OK(hg_event_create(g_ex, &after));
    CHECK_OK(hg_event_record(before));
    launch_oob(oob, y);
    CHECK_OK(hg_event_record(after));
    CHECK_OK(hg_event_synchronize(before));
    if (g_async) check_report(hg_event_synchronize(after), "hg_event_synchronize");
    CHECK_OK(hg_event_synchronize(after));
    CHECK_OK(hg_executor_synchronize(g_ex));
    hg_event_destroy(before);
    hg_event_destroy(after);

    // 4. The faulting kernel destroyed before anyone synchronized: still named in the report.
    launch_oob(oob, y);
    CHECK_OK(hg_kernel_destroy(oob));
    if (g_async) check_report(hg_executor_synchronize(g_ex), "hg_executor_synchronize");

    // 5. Through the launch cache the op layer's kernels use (hg_launch), with ops queued after
    //    it: the ops' results are right and the fault comes out at the host read of them.
    {
        hg_arg a = hg_arg_buffer(y);
        hg_launch_config cfg = hg_launch_1d(16, 16);
        s = hg_launch(g_ex, po, &cfg, &a, 1);
        CHECK_STATUS(s, g_async ? HG_OK : HG_ERR_OUT_OF_BOUNDS);
        float xs[6] = {1, -2, 3.5f, 0, 8, -0.25f}, out[6];
        hg_buffer bx;
        CHECK_OK(hg_buffer_create(g_ex, HG_DTYPE_F32, 6, &bx));
        CHECK_OK(hg_buffer_write(bx, 0, xs, 6));
        hg_tensor tx, ts = {0};
        CHECK_OK(hg_tensor_from_buffer(bx, 1, (int64_t[]){6}, &tx));
        CHECK_OK(hg_binary(HG_BINARY_ADD, &tx, &tx, &ts));
        s = hg_buffer_read(ts.buffer, 0, out, 6);
        if (g_async) check_report(s, "host read");
        CHECK_OK(hg_buffer_read(ts.buffer, 0, out, 6));
        int bad = 0;
        for (int i = 0; i < 6; i++) bad += out[i] != xs[i] + xs[i];
        CHECK_MSG(bad == 0, "%d sums differ", bad);
        hg_buffer_destroy(ts.buffer);
        hg_buffer_destroy(bx);
    }
    CHECK_OK(hg_executor_synchronize(g_ex));
    hg_buffer_destroy(y);
    hg_kernel_destroy(twice);
    hg_program_destroy(po);
    hg_program_destroy(pt);
}

static void run(int on_device) {
    hg_backend_kind kind = HG_BACKEND_CPU;
    CHECK_OK(hg_executor_backend(g_ex, &kind));
    g_async = kind == HG_BACKEND_CUDA;
    test_streams(on_device);
    hg_program pt = parse(k_twice);
    hg_kernel twice;
    CHECK_OK(hg_kernel_create(g_ex, pt, &twice));
    test_event_timing(twice);
    hg_kernel_destroy(twice);
    hg_program_destroy(pt);
    test_event_misuse(on_device);
    test_deferred_errors();
    // Events left alive go with their executor (hg_test_run_executors destroys it).
    hg_event left;
    CHECK_OK(hg_event_create(g_ex, &left));
    CHECK_OK(hg_event_record(left));
}

int main(void) {
    int rc = hg_test_run_executors("test_async", &g_ex, run);
    if (hg_handle_live_count(HG_HANDLE_EVENT) != 0) {
        fprintf(stderr, "test_async: %llu events outlived their executors\n",
                (unsigned long long)hg_handle_live_count(HG_HANDLE_EVENT));
        return 1;
    }
    return rc;
}
