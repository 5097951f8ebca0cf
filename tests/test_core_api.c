// Core API: version, status names, dtypes, f16/bf16 conversions (exhaustive, against an
// independent double-precision reference), backends and executors, buffers of every dtype.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/config.h"
#include "base/handles.h"
#include "hg_test.h"

// ---------------------------------------------------------------------------------------------
// Version, status, dtypes
// ---------------------------------------------------------------------------------------------
static void test_version(void) {
    // The header's string is its numbers, and CMake's project version (read from the header)
    // is the same: one version, written once.
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", HG_VERSION_MAJOR, HG_VERSION_MINOR, HG_VERSION_PATCH);
    CHECK(strcmp(hg_version(), want) == 0);
    CHECK(strcmp(HG_VERSION_STRING, want) == 0);
    CHECK(strcmp(HG_CMAKE_PROJECT_VERSION, want) == 0);
    CHECK(hg_version_number() ==
          HG_VERSION_MAJOR * 10000 + HG_VERSION_MINOR * 100 + HG_VERSION_PATCH);
    CHECK(hg_version_number() == HG_VERSION_NUMBER);
    hg_build_info bi;
    memset(&bi, 0, sizeof bi);
    hg_build_info_get(&bi);
    CHECK(bi.version && strcmp(bi.version, want) == 0);
    CHECK(bi.compiler && bi.compiler[0]);
    CHECK(bi.build_type && bi.build_type[0]);
    CHECK(bi.features && strncmp(bi.features, "cpu", 3) == 0);
    hg_build_info_get(NULL);  // must not crash
    hg_free(NULL);
    hg_free(malloc(16));
}

static void test_status(void) {
    static const struct { hg_status s; const char* name; } rows[] = {
        {HG_OK, "HG_OK"}, {HG_ERR_INVALID_ARGUMENT, "HG_ERR_INVALID_ARGUMENT"},
        {HG_ERR_NULL_POINTER, "HG_ERR_NULL_POINTER"}, {HG_ERR_INVALID_HANDLE, "HG_ERR_INVALID_HANDLE"},
        {HG_ERR_DTYPE_MISMATCH, "HG_ERR_DTYPE_MISMATCH"}, {HG_ERR_SIZE_MISMATCH, "HG_ERR_SIZE_MISMATCH"},
        {HG_ERR_OUT_OF_RANGE, "HG_ERR_OUT_OF_RANGE"}, {HG_ERR_UNSUPPORTED, "HG_ERR_UNSUPPORTED"},
        {HG_ERR_PARSE, "HG_ERR_PARSE"}, {HG_ERR_INVALID_PROGRAM, "HG_ERR_INVALID_PROGRAM"},
        {HG_ERR_BAD_FORMAT, "HG_ERR_BAD_FORMAT"}, {HG_ERR_LAUNCH_CONFIG, "HG_ERR_LAUNCH_CONFIG"},
        {HG_ERR_ARGUMENT_BINDING, "HG_ERR_ARGUMENT_BINDING"},
        {HG_ERR_OUT_OF_BOUNDS, "HG_ERR_OUT_OF_BOUNDS"}, {HG_ERR_EXECUTION, "HG_ERR_EXECUTION"},
        {HG_ERR_EXECUTOR_DEAD, "HG_ERR_EXECUTOR_DEAD"}, {HG_ERR_OUT_OF_MEMORY, "HG_ERR_OUT_OF_MEMORY"},
        {HG_ERR_BACKEND_UNAVAILABLE, "HG_ERR_BACKEND_UNAVAILABLE"}, {HG_ERR_IO, "HG_ERR_IO"},
        {HG_ERR_INTERNAL, "HG_ERR_INTERNAL"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        CHECK_MSG(strcmp(hg_status_string(rows[i].s), rows[i].name) == 0, "%s", rows[i].name);
    CHECK(strcmp(hg_status_string((hg_status)7), "HG_UNKNOWN_STATUS") == 0);
    CHECK(strcmp(hg_status_string((hg_status)-1), "HG_UNKNOWN_STATUS") == 0);
    // Numeric values are part of the ABI.
    CHECK(HG_ERR_INVALID_HANDLE == 102 && HG_ERR_LAUNCH_CONFIG == 203 && HG_ERR_IO == 402);
    hg_clear_error();
    CHECK(hg_last_error()[0] == 0);
}

static void test_dtypes(void) {
    static const struct { hg_dtype t; const char* name; size_t size; const char* numpy; } rows[] = {
        {HG_DTYPE_BOOL, "bool", 1, "bool_"}, {HG_DTYPE_I8, "i8", 1, "int8"},
        {HG_DTYPE_I16, "i16", 2, "int16"},   {HG_DTYPE_I32, "i32", 4, "int32"},
        {HG_DTYPE_I64, "i64", 8, "int64"},   {HG_DTYPE_U8, "u8", 1, "uint8"},
        {HG_DTYPE_U16, "u16", 2, "uint16"},  {HG_DTYPE_U32, "u32", 4, "uint32"},
        {HG_DTYPE_U64, "u64", 8, "uint64"},  {HG_DTYPE_F16, "f16", 2, "float16"},
        {HG_DTYPE_BF16, "bf16", 2, "bfloat16"}, {HG_DTYPE_F32, "f32", 4, "float32"},
        {HG_DTYPE_F64, "f64", 8, "float64"},
    };
    CHECK(sizeof rows / sizeof rows[0] == HG_DTYPE_COUNT);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK_MSG(hg_dtype_name(rows[i].t) && strcmp(hg_dtype_name(rows[i].t), rows[i].name) == 0,
                  "%s", rows[i].name);
        CHECK(hg_dtype_size(rows[i].t) == rows[i].size);
        hg_dtype t = HG_DTYPE_COUNT;
        CHECK_OK(hg_dtype_from_name(rows[i].name, &t));
        CHECK(t == rows[i].t);
        t = HG_DTYPE_COUNT;
        CHECK_OK(hg_dtype_from_name(rows[i].numpy, &t));
        CHECK_MSG(t == rows[i].t, "numpy name %s", rows[i].numpy);
    }
    hg_dtype t = HG_DTYPE_F64;
    CHECK_OK(hg_dtype_from_name("bool", &t));
    CHECK(t == HG_DTYPE_BOOL);
    CHECK(hg_dtype_name(HG_DTYPE_COUNT) == NULL);
    CHECK(hg_dtype_name((hg_dtype)-1) == NULL);
    CHECK(hg_dtype_size(HG_DTYPE_COUNT) == 0);
    t = HG_DTYPE_F64;
    CHECK_STATUS(hg_dtype_from_name("float128", &t), HG_ERR_INVALID_ARGUMENT);
    CHECK(t == HG_DTYPE_F64);  // out untouched on failure
    CHECK(strstr(hg_last_error(), "float128") != NULL);
    CHECK_STATUS(hg_dtype_from_name("F32", &t), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_dtype_from_name(NULL, &t), HG_ERR_NULL_POINTER);
    CHECK_STATUS(hg_dtype_from_name("f32", NULL), HG_ERR_NULL_POINTER);
}

// ---------------------------------------------------------------------------------------------
// f16 / bf16 against a reference built from the format definitions in double precision
// ---------------------------------------------------------------------------------------------
static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

// Value of a binary16 / bfloat16 pattern from its fields: (-1)^s * 2^(e-bias) * 1.m, or
// subnormal 2^(1-bias) * 0.m. NaN/inf are handled by the callers.
static double ref_decode(uint32_t h, int ebits, int mbits) {
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t s = h >> (ebits + mbits), e = (h >> mbits) & ((1u << ebits) - 1),
             m = h & ((1u << mbits) - 1);
    double v = e ? ldexp(1.0 + ldexp((double)m, -mbits), (int)e - bias)
                 : ldexp((double)m, 1 - bias - mbits);
    return s ? -v : v;
}

// Round-to-nearest-even by search over the table of all finite non-negative values (the
// value after the largest finite one is the overflow threshold 2^(emax+1), encoded as inf).
typedef struct rtable { double* v; uint32_t n; uint32_t inf_code; double beyond; } rtable;

static uint16_t ref_round(const rtable* t, float x, uint32_t sign_shift) {
    double a = fabs((double)x);
    uint32_t sign = signbit(x) ? 1u << sign_shift : 0;
    if (a >= t->beyond) return (uint16_t)(sign | t->inf_code);
    uint32_t lo = 0, hi = t->n - 1;  // largest k with v[k] <= a
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (t->v[mid] <= a) lo = mid; else hi = mid - 1;
    }
    uint32_t k = lo;
    if (t->v[k] == a) return (uint16_t)(sign | k);
    double next = k + 1 < t->n ? t->v[k + 1] : t->beyond;
    double d1 = a - t->v[k], d2 = next - a;
    uint32_t pick = d1 < d2 ? k : d2 < d1 ? k + 1 : ((k & 1) ? k + 1 : k);
    return (uint16_t)(sign | pick);  // k + 1 == n is the inf code itself
}

static void check_round_many(const rtable* t, uint16_t (*conv)(float), const char* name,
                             uint32_t sign_shift, int* fails, float x) {
    if (isnan(x)) return;
    uint16_t want = ref_round(t, x, sign_shift), got = conv(x);
    if (want != got && (*fails)++ < 10)
        fprintf(stderr, "%s(%a = 0x%08x): got 0x%04x want 0x%04x\n", name, (double)x, fbits(x), got,
                want);
}

static void test_half_kind(int ebits, int mbits, float (*to32)(uint16_t), uint16_t (*from32)(float),
                           const char* name) {
    uint32_t inf_code = ((1u << ebits) - 1) << mbits;
    uint32_t quiet = 1u << (mbits - 1);
    int fails = 0;
    // Widening: all 65536 patterns.
    for (uint32_t h = 0; h < 65536; h++) {
        uint32_t e = (h >> mbits) & ((1u << ebits) - 1), m = h & ((1u << mbits) - 1);
        uint32_t s = h >> 15;
        float got = to32((uint16_t)h);
        if (e == (1u << ebits) - 1) {
            if (m == 0) {
                if (!(isinf(got) && (signbit(got) != 0) == (s != 0)) && fails++ < 10)
                    fprintf(stderr, "%s widen 0x%04x: not inf\n", name, h);
            } else {
                // NaN: payload kept (moved to the top of the f32 mantissa), sign kept.
                uint32_t want = (s << 31) | 0x7F800000u | (m << (23 - mbits));
                if (fbits(got) != want && fails++ < 10)
                    fprintf(stderr, "%s widen NaN 0x%04x: got 0x%08x want 0x%08x\n", name, h,
                            fbits(got), want);
                // Narrowing keeps the payload: the round trip is bit-exact, also for
                // signalling NaNs (docs/isa.md §6).
                uint16_t back = from32(got);
                if (back != h && fails++ < 10)
                    fprintf(stderr, "%s narrow NaN 0x%04x: got 0x%04x (payload not kept)\n", name, h,
                            back);
            }
            continue;
        }
        double want = ref_decode(h, ebits, mbits);
        if (((double)got != want || (signbit(got) != 0) != (s != 0)) && fails++ < 10)
            fprintf(stderr, "%s widen 0x%04x: got %a want %a\n", name, h, (double)got, want);
        if (from32(got) != h && fails++ < 10)
            fprintf(stderr, "%s round trip 0x%04x: got 0x%04x\n", name, h, from32(got));
    }
    // Narrowing: every representable value, every midpoint and its float neighbours, then
    // random floats, specials.
    rtable t;
    t.n = inf_code;  // codes 0 .. inf_code-1 are the finite non-negative values, in order
    t.v = malloc(sizeof(double) * t.n);
    for (uint32_t k = 0; k < t.n; k++) t.v[k] = ref_decode(k, ebits, mbits);
    t.inf_code = inf_code;
    t.beyond = ldexp(1.0, (1 << (ebits - 1)));  // 2^(emax+1)
    for (uint32_t k = 0; k < t.n; k++) {
        double next = k + 1 < t.n ? t.v[k + 1] : t.beyond;
        float mids[3];
        mids[0] = (float)((t.v[k] + next) / 2);  // exact: needs one bit more than the format
        mids[1] = nextafterf(mids[0], INFINITY);
        mids[2] = nextafterf(mids[0], 0.0f);
        for (int i = 0; i < 3; i++) {
            check_round_many(&t, from32, name, 15, &fails, mids[i]);
            check_round_many(&t, from32, name, 15, &fails, -mids[i]);
        }
        check_round_many(&t, from32, name, 15, &fails, (float)t.v[k]);
    }
    uint64_t rs = 12345;
    for (int i = 0; i < (1 << 21); i++)
        check_round_many(&t, from32, name, 15, &fails, bitsf((uint32_t)hg_test_rand(&rs)));
    // Random floats near the format's range (where rounding is interesting).
    for (int i = 0; i < (1 << 20); i++) {
        uint64_t r = hg_test_rand(&rs);
        int e = (int)(r % (uint64_t)(2 * (1 << (ebits - 1)) + mbits + 4)) - (1 << (ebits - 1)) - mbits - 2;
        float x = ldexpf(1.0f + (float)((r >> 20) & 0x7FFFFF) / 8388608.0f, e);
        check_round_many(&t, from32, name, 15, &fails, (r >> 63) ? -x : x);
    }
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, 3.4028235e38f, -3.4028235e38f,
                              1.4e-45f, -1.4e-45f, 1.17549435e-38f, 65504.0f, 65519.99f, 65520.0f,
                              5.96046448e-8f, 2.98023224e-8f, 2.98023259e-8f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        check_round_many(&t, from32, name, 15, &fails, specials[i]);
    CHECK(from32(-0.0f) == 0x8000);
    CHECK(from32(INFINITY) == inf_code);
    CHECK(from32(-INFINITY) == (0x8000 | inf_code));
    uint16_t qn = from32(NAN);
    CHECK((qn & 0x7FFFu) > inf_code && (qn & quiet));
    // A signalling NaN whose payload lives only in the low bits must stay NaN (not become inf).
    uint16_t sn = from32(bitsf(0x7F800001u));
    CHECK((sn & 0x7FFFu) > inf_code);
    free(t.v);
    CHECK_MSG(fails == 0, "%s: %d mismatches", name, fails);
}

static void test_half(void) {
    test_half_kind(5, 10, hg_f16_to_f32, hg_f32_to_f16, "f16");
    test_half_kind(8, 7, hg_bf16_to_f32, hg_f32_to_bf16, "bf16");
    // Known values.
    CHECK(hg_f32_to_f16(1.0f) == 0x3C00);
    CHECK(hg_f32_to_f16(65504.0f) == 0x7BFF);
    CHECK(hg_f32_to_f16(65520.0f) == 0x7C00);        // the tie above max rounds to inf
    CHECK(hg_f32_to_f16(0.1f) == 0x2E66);
    CHECK(hg_f32_to_f16(ldexpf(1.0f, -24)) == 0x0001);
    CHECK(hg_f32_to_f16(ldexpf(1.0f, -25)) == 0x0000);  // tie to even: 0
    CHECK(hg_f32_to_f16(ldexpf(1.5f, -25)) == 0x0001);
    CHECK(hg_f16_to_f32(0x3555) == 0x1.554p-2f);
    CHECK(hg_f32_to_bf16(1.0f) == 0x3F80);
    CHECK(hg_f32_to_bf16(0.1f) == 0x3DCD);
    CHECK(hg_f32_to_bf16(bitsf(0x3F808000u)) == 0x3F80);  // tie, even
    CHECK(hg_f32_to_bf16(bitsf(0x3F818000u)) == 0x3F82);  // tie, odd: up
    CHECK(hg_f32_to_bf16(bitsf(0x7F7FFFFFu)) == 0x7F80);  // FLT_MAX rounds to inf
}

// ---------------------------------------------------------------------------------------------
// Backends and executors
// ---------------------------------------------------------------------------------------------
static void test_backends(void) {
    CHECK(strcmp(hg_backend_name(HG_BACKEND_AUTO), "auto") == 0);
    CHECK(strcmp(hg_backend_name(HG_BACKEND_CPU), "cpu") == 0);
    CHECK(strcmp(hg_backend_name(HG_BACKEND_CUDA), "cuda") == 0);
    CHECK(strcmp(hg_backend_name(HG_BACKEND_METAL), "metal") == 0);
    CHECK(hg_backend_name(HG_BACKEND_KIND_COUNT) == NULL);
    CHECK(hg_backend_name((hg_backend_kind)-3) == NULL);

    hg_backend_kind k = HG_BACKEND_AUTO;
    CHECK_OK(hg_backend_from_name("CPU", &k));
    CHECK(k == HG_BACKEND_CPU);
    CHECK_OK(hg_backend_from_name("Cuda", &k));
    CHECK(k == HG_BACKEND_CUDA);
    CHECK_OK(hg_backend_from_name("metal", &k));
    CHECK(k == HG_BACKEND_METAL);
    CHECK_OK(hg_backend_from_name("AuTo", &k));
    CHECK(k == HG_BACKEND_AUTO);
    k = HG_BACKEND_METAL;
    CHECK_STATUS(hg_backend_from_name("gpu", &k), HG_ERR_INVALID_ARGUMENT);
    CHECK(k == HG_BACKEND_METAL);
    CHECK(strstr(hg_last_error(), "gpu") && strstr(hg_last_error(), "auto, cpu, cuda, metal"));
    CHECK_STATUS(hg_backend_from_name("", &k), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_backend_from_name(NULL, &k), HG_ERR_NULL_POINTER);

    hg_backend_info bi;
    CHECK_OK(hg_backend_query(HG_BACKEND_CPU, &bi));
    CHECK(bi.kind == HG_BACKEND_CPU && bi.available == 1 && bi.device_count >= 1);
    CHECK(strcmp(bi.name, "cpu") == 0 && bi.reason[0] == 0);
    // CUDA is built in and found at run time: where it cannot run, the reason says what is
    // missing (no driver / no device); with a GPU (or HOLOGRAM_CUDA_EMULATE) it is available.
    CHECK_OK(hg_backend_query(HG_BACKEND_CUDA, &bi));
    int cuda_here = bi.available;
    CHECK(strcmp(bi.name, "cuda") == 0);
    if (!cuda_here)
        CHECK_MSG(bi.device_count == 0 && (strstr(bi.reason, "no driver") ||
                                           strstr(bi.reason, "no device")),
                  "cuda reason: %s", bi.reason);
    CHECK_OK(hg_backend_query(HG_BACKEND_METAL, &bi));
    CHECK(bi.available == 0 && bi.device_count == 0);
    CHECK_MSG(strstr(bi.reason, "not built in this version") != NULL, "metal reason: %s",
              bi.reason);
    CHECK_STATUS(hg_backend_query(HG_BACKEND_AUTO, &bi), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_backend_query(HG_BACKEND_KIND_COUNT, &bi), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_backend_query(HG_BACKEND_CPU, NULL), HG_ERR_NULL_POINTER);

    hg_device_info di;
    CHECK_OK(hg_device_query(HG_BACKEND_CPU, 0, &di));
    CHECK(di.backend == HG_BACKEND_CPU && di.index == 0 && di.name[0] && di.memory_bytes > 0);
    CHECK(di.compute_units >= 1 && di.capability_major == 0);
    CHECK_OK(hg_backend_query(HG_BACKEND_CPU, &bi));
    CHECK_STATUS(hg_device_query(HG_BACKEND_CPU, bi.device_count, &di), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_device_query(HG_BACKEND_CPU, -1, &di), HG_ERR_OUT_OF_RANGE);
    hg_executor ex = {0};
    if (!cuda_here) {
        CHECK_STATUS(hg_device_query(HG_BACKEND_CUDA, 0, &di), HG_ERR_BACKEND_UNAVAILABLE);
        CHECK(strstr(hg_last_error(), "libcuda") || strstr(hg_last_error(), "no device"));
        CHECK_STATUS(hg_executor_create(HG_BACKEND_CUDA, &ex), HG_ERR_BACKEND_UNAVAILABLE);
        CHECK(ex.handle == 0);
        CHECK_MSG(strstr(hg_last_error(), "cuda") && (strstr(hg_last_error(), "no driver") ||
                                                      strstr(hg_last_error(), "no device")),
                  "%s", hg_last_error());
    }
    CHECK_STATUS(hg_executor_create(HG_BACKEND_METAL, &ex), HG_ERR_BACKEND_UNAVAILABLE);
    CHECK(strstr(hg_last_error(), "metal") && strstr(hg_last_error(), "not built in"));
    CHECK_STATUS(hg_executor_create_by_name("opencl", &ex), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "auto, cpu, cuda, metal") != NULL);
    CHECK_STATUS(hg_executor_create((hg_backend_kind)9, &ex), HG_ERR_INVALID_ARGUMENT);
}

static void test_executors(void) {
    unsetenv("HOLOGRAM_BACKEND");
    hg_executor ex;
    hg_backend_kind k;
    // auto picks the first available of cuda, metal, cpu: cpu here, cuda on a GPU machine (or
    // on the CUDA emulation, HOLOGRAM_CUDA_EMULATE=1, as scripts/gpu_check.sh --emulate runs).
    hg_backend_info cuda;
    int has_cuda = hg_backend_query(HG_BACKEND_CUDA, &cuda) == HG_OK && cuda.available;
    hg_backend_kind want_auto = has_cuda ? HG_BACKEND_CUDA : HG_BACKEND_CPU;
    CHECK_OK(hg_executor_create(HG_BACKEND_AUTO, &ex));
    CHECK_OK(hg_executor_backend(ex, &k));
    CHECK(k == want_auto);
    hg_device_info di;
    CHECK_OK(hg_executor_device(ex, &di));
    CHECK(di.backend == want_auto && di.name[0]);
    CHECK_OK(hg_executor_destroy(ex));

    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    int nt = 0;
    CHECK_OK(hg_executor_num_threads(ex, &nt));
    CHECK(nt >= 1);
    CHECK_OK(hg_executor_synchronize(ex));
    CHECK_OK(hg_executor_destroy(ex));
    CHECK_STATUS(hg_executor_destroy(ex), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_executor_backend(ex, &k), HG_ERR_INVALID_HANDLE);

    CHECK_OK(hg_executor_create_by_name("CPU", &ex));
    CHECK_OK(hg_executor_destroy(ex));

    // HOLOGRAM_BACKEND overrides AUTO only; an explicit backend wins over it.
    setenv("HOLOGRAM_BACKEND", "cuda", 1);
    if (has_cuda) {
        CHECK_OK(hg_executor_create(HG_BACKEND_AUTO, &ex));
        CHECK_OK(hg_executor_backend(ex, &k));
        CHECK(k == HG_BACKEND_CUDA);
        CHECK_OK(hg_executor_destroy(ex));
    } else {
        CHECK_STATUS(hg_executor_create(HG_BACKEND_AUTO, &ex), HG_ERR_BACKEND_UNAVAILABLE);
        CHECK(strstr(hg_last_error(), "HOLOGRAM_BACKEND") != NULL);
    }
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    CHECK_OK(hg_executor_destroy(ex));
    setenv("HOLOGRAM_BACKEND", "Cpu", 1);
    CHECK_OK(hg_executor_create(HG_BACKEND_AUTO, &ex));
    CHECK_OK(hg_executor_destroy(ex));
    setenv("HOLOGRAM_BACKEND", "tpu", 1);
    CHECK_STATUS(hg_executor_create(HG_BACKEND_AUTO, &ex), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "HOLOGRAM_BACKEND") && strstr(hg_last_error(), "tpu"));
    unsetenv("HOLOGRAM_BACKEND");

    // Thread counts: explicit > HOLOGRAM_NUM_THREADS > OMP_NUM_THREADS > cores.
    setenv("HOLOGRAM_NUM_THREADS", "3", 1);
    setenv("OMP_NUM_THREADS", "5", 1);
    CHECK(hg_config_num_threads(2) == 2);
    CHECK(hg_config_num_threads(0) == 3);
    unsetenv("HOLOGRAM_NUM_THREADS");
    CHECK(hg_config_num_threads(0) == 5);
    setenv("OMP_NUM_THREADS", "4,2", 1);
    CHECK(hg_config_num_threads(0) == 4);
    setenv("OMP_NUM_THREADS", "zero", 1);
    hg_log_set_level(HG_LOG_OFF);  // the warning about the bad value is expected
    CHECK(hg_config_num_threads(0) == hg_config_num_cores());
    setenv("HOLOGRAM_NUM_THREADS", "-2", 1);
    CHECK(hg_config_num_threads(0) == hg_config_num_cores());
    hg_log_set_level(HG_LOG_WARN);
    unsetenv("OMP_NUM_THREADS");
    unsetenv("HOLOGRAM_NUM_THREADS");
    CHECK(hg_config_num_threads(0) == hg_config_num_cores());
    CHECK(hg_config_num_cores() >= 1);

    hg_executor_options o = {HG_BACKEND_CPU, 0, 3};
    CHECK_OK(hg_executor_create_ex(&o, &ex));
    CHECK_OK(hg_executor_num_threads(ex, &nt));
    CHECK_MSG(nt == 3, "num_threads %d", nt);
    CHECK_OK(hg_executor_destroy(ex));
    setenv("HOLOGRAM_NUM_THREADS", "2", 1);
    o.num_threads = 0;
    CHECK_OK(hg_executor_create_ex(&o, &ex));
    CHECK_OK(hg_executor_num_threads(ex, &nt));
    CHECK_MSG(nt == 2, "num_threads %d from HOLOGRAM_NUM_THREADS", nt);
    CHECK_OK(hg_executor_destroy(ex));
    unsetenv("HOLOGRAM_NUM_THREADS");
    o.num_threads = -1;
    CHECK_STATUS(hg_executor_create_ex(&o, &ex), HG_ERR_INVALID_ARGUMENT);
    o.num_threads = 1;
    o.device = 99;
    CHECK_STATUS(hg_executor_create_ex(&o, &ex), HG_ERR_OUT_OF_RANGE);
    o.device = -1;
    CHECK_STATUS(hg_executor_create_ex(&o, &ex), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_executor_create_ex(NULL, &ex), HG_ERR_NULL_POINTER);
}

// ---------------------------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------------------------

// Independent reference of hg_buffer_fill's conversion for the integer and bool types.
static void ref_fill_int(hg_dtype t, double v, void* out) {
    int64_t lo = 0;
    uint64_t hi = 0;
    int is_signed = 0;
    switch (t) {
    case HG_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; is_signed = 1; break;
    case HG_DTYPE_I16: lo = INT16_MIN; hi = INT16_MAX; is_signed = 1; break;
    case HG_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; is_signed = 1; break;
    case HG_DTYPE_I64: lo = INT64_MIN; hi = INT64_MAX; is_signed = 1; break;
    case HG_DTYPE_U8: hi = UINT8_MAX; break;
    case HG_DTYPE_U16: hi = UINT16_MAX; break;
    case HG_DTYPE_U32: hi = UINT32_MAX; break;
    case HG_DTYPE_U64: hi = UINT64_MAX; break;
    default: break;
    }
    uint64_t bits;
    double tv = trunc(v);
    if (isnan(v)) bits = 0;
    else if (is_signed) {
        int64_t r = tv >= (double)hi ? (int64_t)hi : tv <= (double)lo ? lo : (int64_t)tv;
        bits = (uint64_t)r;
    } else {
        bits = tv <= 0 ? 0 : tv >= (double)hi ? hi : (uint64_t)tv;
    }
    memcpy(out, &bits, hg_dtype_size(t));  // little-endian: the low bytes
}

static int all_equal(const unsigned char* data, size_t count, size_t es, const void* elem) {
    for (size_t i = 0; i < count; i++)
        if (memcmp(data + i * es, elem, es)) return 0;
    return 1;
}

static void check_fill(hg_buffer b, hg_dtype t, size_t n, double v, const void* want) {
    size_t es = hg_dtype_size(t);
    unsigned char* got = malloc(n * es);
    CHECK_OK(hg_buffer_fill(b, v));
    CHECK_OK(hg_buffer_read(b, 0, got, n));
    CHECK_MSG(all_equal(got, n, es, want), "fill %s with %g", hg_dtype_name(t), v);
    free(got);
}

static void test_buffer_dtype(hg_executor ex, hg_executor ex2, hg_dtype t) {
    const size_t n = 37;
    size_t es = hg_dtype_size(t);
    hg_buffer b, c;
    CHECK_OK(hg_buffer_create(ex, t, n, &b));
    size_t cnt = 0, nb = 0;
    hg_dtype dt = HG_DTYPE_COUNT;
    hg_executor owner = {0};
    CHECK_OK(hg_buffer_count(b, &cnt));
    CHECK_OK(hg_buffer_nbytes(b, &nb));
    CHECK_OK(hg_buffer_dtype(b, &dt));
    CHECK_OK(hg_buffer_executor(b, &owner));
    CHECK(cnt == n && nb == n * es && dt == t && owner.handle == ex.handle);

    unsigned char model[37 * 8], got[37 * 8], chunk[20 * 8];
    memset(model, 0, sizeof model);
    memset(got, 0xAB, sizeof got);
    CHECK_OK(hg_buffer_read(b, 0, got, n));
    CHECK_MSG(memcmp(got, model, n * es) == 0, "%s: new buffer is zero", hg_dtype_name(t));

    // Write at an offset, read back whole and in part.
    uint64_t rs = 99 + (uint64_t)t;
    for (size_t i = 0; i < sizeof chunk; i++) chunk[i] = (unsigned char)hg_test_rand(&rs);
    if (t == HG_DTYPE_BOOL)
        for (size_t i = 0; i < sizeof chunk; i++) chunk[i] &= 1;
    CHECK_OK(hg_buffer_write(b, 5, chunk, 20));
    memcpy(model + 5 * es, chunk, 20 * es);
    CHECK_OK(hg_buffer_read(b, 0, got, n));
    CHECK_MSG(memcmp(got, model, n * es) == 0, "%s: write at offset", hg_dtype_name(t));
    memset(got, 0, sizeof got);
    CHECK_OK(hg_buffer_read(b, 10, got, 27));
    CHECK(memcmp(got, model + 10 * es, 27 * es) == 0);
    CHECK_OK(hg_buffer_write(b, n, chunk, 0));  // empty write at the end is fine
    CHECK_STATUS(hg_buffer_write(b, 30, chunk, 8), HG_ERR_OUT_OF_RANGE);
    CHECK(strstr(hg_last_error(), "37") != NULL);
    CHECK_STATUS(hg_buffer_read(b, 38, got, 0), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_buffer_read(b, SIZE_MAX, got, 2), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_buffer_read(b, 2, got, SIZE_MAX), HG_ERR_OUT_OF_RANGE);
    CHECK_OK(hg_buffer_read(b, 0, got, n));
    CHECK(memcmp(got, model, n * es) == 0);  // failed calls changed nothing

    // Map: the same bytes.
    void* p = NULL;
    CHECK_OK(hg_buffer_map(b, &p));
    CHECK(p && memcmp(p, model, n * es) == 0);
    if (p) {
        memset((unsigned char*)p + 3 * es, 0, es);
        memset(model + 3 * es, 0, es);
        CHECK_OK(hg_buffer_read(b, 0, got, n));
        CHECK(memcmp(got, model, n * es) == 0);
    }

    // Fill, against the reference conversion.
    unsigned char want[8];
    const double values[] = {0.0, 1.0, 3.7, -3.7, -1.0, 255.5, 1e30, -1e30, NAN, INFINITY,
                             -INFINITY, 0.1, 65504.0, 70000.0, -0.0, 2147483647.9, 9.3e18};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        double v = values[i];
        if (t == HG_DTYPE_BOOL) want[0] = v != 0 || isnan(v);
        else if (t == HG_DTYPE_F64) memcpy(want, &v, 8);
        else if (t == HG_DTYPE_F32) { float f = (float)v; memcpy(want, &f, 4); }
        else if (t == HG_DTYPE_F16 || t == HG_DTYPE_BF16) {
            // Values here are exact in f32, so rounding via f32 is the reference.
            uint16_t h = t == HG_DTYPE_F16 ? hg_f32_to_f16((float)v) : hg_f32_to_bf16((float)v);
            if (isnan(v)) {  // any quiet NaN will do: compare classes below instead
                CHECK_OK(hg_buffer_fill(b, v));
                uint16_t g[37];
                CHECK_OK(hg_buffer_read(b, 0, g, n));
                float gv = t == HG_DTYPE_F16 ? hg_f16_to_f32(g[0]) : hg_bf16_to_f32(g[n - 1]);
                CHECK(isnan(gv));
                continue;
            }
            memcpy(want, &h, 2);
        } else ref_fill_int(t, v, want);
        check_fill(b, t, n, v, want);
    }
    // Rounding straight from double (no double rounding through f32).
    if (t == HG_DTYPE_F16) {
        uint16_t h = 0x3C01;  // 1 + 2^-11 + 2^-40 is above the tie between 1 and 1 + 2^-10
        check_fill(b, t, n, 1.0 + ldexp(1, -11) + ldexp(1, -40), &h);
    }
    if (t == HG_DTYPE_BF16) {
        uint16_t h = 0x3F81;
        check_fill(b, t, n, 1.0 + ldexp(1, -8) + ldexp(1, -40), &h);
    }
    if (t == HG_DTYPE_I64) {
        int64_t v = INT64_MAX;
        check_fill(b, t, n, 9.3e18, &v);
        v = INT64_MIN;
        check_fill(b, t, n, -9.3e18, &v);
    }

    // Copy within the executor, at offsets; overlapping copy inside one buffer.
    CHECK_OK(hg_buffer_create(ex, t, n, &c));
    for (size_t i = 0; i < sizeof model; i++) model[i] = (unsigned char)hg_test_rand(&rs);
    if (t == HG_DTYPE_BOOL)
        for (size_t i = 0; i < sizeof model; i++) model[i] &= 1;
    CHECK_OK(hg_buffer_write(b, 0, model, n));
    CHECK_OK(hg_buffer_copy(c, 4, b, 10, 20));
    unsigned char cm[37 * 8];
    memset(cm, 0, sizeof cm);
    memcpy(cm + 4 * es, model + 10 * es, 20 * es);
    CHECK_OK(hg_buffer_read(c, 0, got, n));
    CHECK_MSG(memcmp(got, cm, n * es) == 0, "%s: copy", hg_dtype_name(t));
    CHECK_OK(hg_buffer_copy(b, 3, b, 0, 30));  // overlapping: memmove semantics
    memmove(model + 3 * es, model, 30 * es);
    CHECK_OK(hg_buffer_read(b, 0, got, n));
    CHECK_MSG(memcmp(got, model, n * es) == 0, "%s: overlapping copy", hg_dtype_name(t));
    CHECK_OK(hg_buffer_copy(b, 0, b, 3, 30));
    memmove(model, model + 3 * es, 30 * es);
    CHECK_OK(hg_buffer_read(b, 0, got, n));
    CHECK(memcmp(got, model, n * es) == 0);
    CHECK_STATUS(hg_buffer_copy(c, 20, b, 0, 20), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_buffer_copy(c, 0, b, 30, 8), HG_ERR_OUT_OF_RANGE);
    hg_buffer other, far;
    hg_dtype ot = t == HG_DTYPE_F32 ? HG_DTYPE_I32 : HG_DTYPE_F32;
    CHECK_OK(hg_buffer_create(ex, ot, n, &other));
    CHECK_STATUS(hg_buffer_copy(other, 0, b, 0, 1), HG_ERR_DTYPE_MISMATCH);
    CHECK_OK(hg_buffer_create(ex2, t, n, &far));
    CHECK_STATUS(hg_buffer_copy(far, 0, b, 0, 1), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "executor") != NULL);
    CHECK_OK(hg_buffer_read(c, 0, got, n));
    CHECK(memcmp(got, cm, n * es) == 0);  // failed copies changed nothing

    CHECK_OK(hg_buffer_destroy(far));
    CHECK_OK(hg_buffer_destroy(other));
    CHECK_OK(hg_buffer_destroy(c));
    CHECK_OK(hg_buffer_destroy(b));
    CHECK_STATUS(hg_buffer_destroy(b), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_buffer_read(b, 0, got, 1), HG_ERR_INVALID_HANDLE);

    // Wrap: caller memory, shared both ways, never freed by the library (ASan would report a
    // double free below if it were).
    unsigned char* host = malloc(n * es);
    for (size_t i = 0; i < n * es; i++) host[i] = t == HG_DTYPE_BOOL ? (i & 1) : (unsigned char)i;
    hg_buffer w;
    CHECK_OK(hg_buffer_wrap(ex, t, host, n, &w));
    CHECK_OK(hg_buffer_read(w, 0, got, n));
    CHECK(memcmp(got, host, n * es) == 0);
    void* wp = NULL;
    CHECK_OK(hg_buffer_map(w, &wp));
    CHECK(wp == host);
    memset(chunk, t == HG_DTYPE_BOOL ? 1 : 0x5A, es * 2);
    CHECK_OK(hg_buffer_write(w, 7, chunk, 2));
    CHECK(memcmp(host + 7 * es, chunk, 2 * es) == 0);  // library -> caller
    memset(host, 0, es);
    CHECK_OK(hg_buffer_read(w, 0, got, 1));
    CHECK(memcmp(got, host, es) == 0);                 // caller -> library
    CHECK_OK(hg_buffer_fill(w, 1.0));
    CHECK_OK(hg_buffer_destroy(w));
    host[0] = 7;  // still ours
    free(host);
    if (es > 1) {
        unsigned char* raw = malloc(64);
        CHECK_STATUS(hg_buffer_wrap(ex, t, raw + 1, 4, &w), HG_ERR_INVALID_ARGUMENT);
        CHECK(strstr(hg_last_error(), "aligned") != NULL);
        free(raw);
    }
    CHECK_STATUS(hg_buffer_wrap(ex, t, NULL, 4, &w), HG_ERR_NULL_POINTER);

    // Zero-size buffers.
    hg_buffer z;
    CHECK_OK(hg_buffer_create(ex, t, 0, &z));
    CHECK_OK(hg_buffer_count(z, &cnt));
    CHECK_OK(hg_buffer_nbytes(z, &nb));
    CHECK(cnt == 0 && nb == 0);
    CHECK_OK(hg_buffer_write(z, 0, chunk, 0));
    CHECK_OK(hg_buffer_read(z, 0, got, 0));
    CHECK_OK(hg_buffer_read(z, 0, NULL, 0));
    CHECK_STATUS(hg_buffer_read(z, 0, got, 1), HG_ERR_OUT_OF_RANGE);
    CHECK_STATUS(hg_buffer_write(z, 1, chunk, 0), HG_ERR_OUT_OF_RANGE);
    CHECK_OK(hg_buffer_fill(z, 2.0));
    CHECK_OK(hg_buffer_copy(z, 0, z, 0, 0));
    CHECK_OK(hg_buffer_map(z, &p));
    CHECK_OK(hg_buffer_destroy(z));
}

static void test_buffers(void) {
    hg_executor ex, ex2;
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex));
    CHECK_OK(hg_executor_create(HG_BACKEND_CPU, &ex2));
    uint64_t base = hg_handle_live_count(HG_HANDLE_BUFFER);
    for (int t = 0; t < HG_DTYPE_COUNT; t++) test_buffer_dtype(ex, ex2, (hg_dtype)t);
    CHECK(hg_handle_live_count(HG_HANDLE_BUFFER) == base);

    hg_buffer b;
    CHECK_STATUS(hg_buffer_create(ex, HG_DTYPE_F32, SIZE_MAX, &b), HG_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hg_last_error(), "overflow") != NULL);
    CHECK_STATUS(hg_buffer_create(ex, HG_DTYPE_F64, SIZE_MAX / 4, &b), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_buffer_create(ex, HG_DTYPE_COUNT, 4, &b), HG_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hg_buffer_create(ex, (hg_dtype)-1, 4, &b), HG_ERR_INVALID_ARGUMENT);

    // No cap: 100000 created and destroyed one after another, then 10000 alive at once.
    int ok = 1;
    for (int i = 0; i < 100000 && ok; i++) {
        ok = hg_buffer_create(ex, HG_DTYPE_U8, (size_t)(i % 7), &b) == HG_OK &&
             hg_buffer_destroy(b) == HG_OK;
    }
    CHECK_MSG(ok, "create/destroy loop: %s", hg_last_error());
    enum { LIVE = 10000 };
    hg_buffer* many = malloc(sizeof *many * LIVE);
    for (int i = 0; i < LIVE && ok; i++) {
        ok = hg_buffer_create(ex, HG_DTYPE_I32, 2, &many[i]) == HG_OK;
        int32_t v[2] = {i, -i};
        ok = ok && hg_buffer_write(many[i], 0, v, 2) == HG_OK;
    }
    CHECK_MSG(ok, "10000 live buffers: %s", hg_last_error());
    CHECK(hg_handle_live_count(HG_HANDLE_BUFFER) == base + LIVE);
    for (int i = 0; i < LIVE && ok; i++) {
        int32_t v[2] = {0, 0};
        ok = hg_buffer_read(many[i], 0, v, 2) == HG_OK && v[0] == i && v[1] == -i;
    }
    CHECK_MSG(ok, "10000 live buffers keep their contents");
    // Half destroyed by hand, the rest by the executor.
    for (int i = 0; i < LIVE; i += 2) CHECK_OK(hg_buffer_destroy(many[i]));
    CHECK_OK(hg_executor_destroy(ex));
    CHECK(hg_handle_live_count(HG_HANDLE_BUFFER) == base);
    size_t cnt;
    CHECK_STATUS(hg_buffer_count(many[1], &cnt), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_buffer_count(many[LIVE - 1], &cnt), HG_ERR_INVALID_HANDLE);
    CHECK_STATUS(hg_buffer_create(ex, HG_DTYPE_U8, 1, &b), HG_ERR_INVALID_HANDLE);
    free(many);
    CHECK_OK(hg_executor_destroy(ex2));
}

int main(void) {
    test_version();
    test_status();
    test_dtypes();
    test_half();
    test_backends();
    test_executors();
    test_buffers();
    return hg_test_finish("test_core_api");
}
