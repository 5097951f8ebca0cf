// End-to-end tests of the `hologram` CLI and the example programs in examples/: random inputs
// are written as .npy files, the CLI runs the example, and the output .npy is compared with a
// result computed here independently (elementwise: the same f32 operations, so exact; reductions
// and matmul: double accumulation, relative 1e-5 of the sum of |terms|). Also checks the CLI's
// error paths (exit codes and messages), --help everywhere, `info` and a tiny `bench`.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hg_test.h"

static char g_tmp[256];
static char g_bin[1024];

static const char* tmp_path(const char* name) {
    static char buf[8][512];
    static int k = 0;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_tmp, name);
    return buf[k];
}

// --- tiny .npy writer/reader (independent of tools/hologram/npy.c on purpose) -----------------
static int write_npy(const char* path, const char* descr, const char* shape, const void* data,
                     size_t nbytes) {
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                      descr, shape);
    size_t total = 10 + (size_t)dl + 1, padded = (total + 63) / 64 * 64;
    unsigned char head[512];
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (unsigned char)((padded - 10) & 0xff);
    head[9] = (unsigned char)((padded - 10) >> 8);
    memcpy(head + 10, dict, (size_t)dl);
    memset(head + 10 + dl, ' ', padded - total);
    head[padded - 1] = '\n';
    FILE* f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(head, 1, padded, f) == padded && fwrite(data, 1, nbytes, f) == nbytes;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int write_f32(const char* path, const float* x, size_t n) {
    char shape[64];
    snprintf(shape, sizeof shape, "(%zu,)", n);
    return write_npy(path, "<f4", shape, x, n * sizeof(float));
}

// Reads a '<f4' .npy; returns malloc'd data and the element count; copies the header dict text.
static float* read_f32(const char* path, size_t* count, char* header, size_t hcap) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char pre[10];
    float* data = NULL;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01", 7) != 0) goto fail;
    size_t hl = (size_t)pre[8] | ((size_t)pre[9] << 8);
    char h[1024];
    if (hl >= sizeof h || fread(h, 1, hl, f) != hl) goto fail;
    h[hl] = 0;
    if (header) snprintf(header, hcap, "%s", h);
    if (!strstr(h, "'descr': '<f4'")) goto fail;
    char* sp = strstr(h, "'shape': (");
    if (!sp) goto fail;
    sp += 10;
    size_t n = 1;
    while (*sp && *sp != ')') {
        char* end;
        unsigned long long d = strtoull(sp, &end, 10);
        if (end == sp) goto fail;
        n *= d;
        sp = end;
        while (*sp == ',' || *sp == ' ') sp++;
    }
    data = malloc(n ? n * sizeof(float) : 1);
    if (!data || fread(data, sizeof(float), n, f) != n) goto fail;
    fclose(f);
    *count = n;
    return data;
fail:
    free(data);
    fclose(f);
    return NULL;
}

// --- running the CLI ----------------------------------------------------------------------------
static char g_out[1 << 16], g_err[1 << 16];

static void slurp(const char* path, char* dst, size_t cap) {
    dst[0] = 0;
    FILE* f = fopen(path, "rb");
    if (!f) return;
    size_t n = fread(dst, 1, cap - 1, f);
    dst[n] = 0;
    fclose(f);
}

// Runs `hologram ARGS`, capturing stdout/stderr into g_out/g_err; returns the exit status.
static int cli(const char* args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s > '%s' 2> '%s'", g_bin, args, tmp_path("stdout.txt"),
             tmp_path("stderr.txt"));
    int st = system(cmd);
    slurp(tmp_path("stdout.txt"), g_out, sizeof g_out);
    slurp(tmp_path("stderr.txt"), g_err, sizeof g_err);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static const char* example(const char* name) {
    static char buf[1024];
    const char* root = getenv("HG_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/examples/%s", root ? root : ".", name);
    return buf;
}

static float* random_f32(size_t n, uint64_t* seed, float scale) {
    float* x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = ((float)(hg_test_rand(seed) >> 40) / 16777216.0f * 2.0f - 1.0f) * scale;
    return x;
}

// --- examples -----------------------------------------------------------------------------------
static void test_vector_add(size_t n, uint64_t seed) {
    float* a = random_f32(n, &seed, 100.0f);
    float* b = random_f32(n, &seed, 1.0f);
    CHECK(write_f32(tmp_path("a.npy"), a, n) == 0);
    CHECK(write_f32(tmp_path("b.npy"), b, n) == 0);
    char args[4096];
    snprintf(args, sizeof args, "run '%s' --backend cpu --arg a='%s' --arg b='%s' --arg c=zeros:%zu "
             "--arg n=%zu --out c='%s'", example("vector_add.hasm"), tmp_path("a.npy"),
             tmp_path("b.npy"), n, n, tmp_path("c.npy"));
    int rc = cli(args);
    CHECK_MSG(rc == 0, "vector_add n=%zu exit %d: %s", n, rc, g_err);
    size_t got_n = 0;
    float* c = read_f32(tmp_path("c.npy"), &got_n, NULL, 0);
    CHECK_MSG(c && got_n == n, "vector_add n=%zu: output missing or wrong size %zu", n, got_n);
    if (c && got_n == n) {
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += c[i] != a[i] + b[i];
        CHECK_MSG(bad == 0, "vector_add n=%zu: %zu wrong elements", n, bad);
    }
    free(a); free(b); free(c);
}

static void test_fused_chain(size_t n, uint64_t seed) {
    float* a = random_f32(n, &seed, 2.0f);
    float* b = random_f32(n, &seed, 2.0f);
    float* c = random_f32(n, &seed, 1.0f);
    CHECK(write_f32(tmp_path("a.npy"), a, n) == 0);
    CHECK(write_f32(tmp_path("b.npy"), b, n) == 0);
    CHECK(write_f32(tmp_path("c.npy"), c, n) == 0);
    char args[4096];
    snprintf(args, sizeof args, "run '%s' --block 128 --arg a='%s' --arg b='%s' --arg c='%s' "
             "--arg y=zeros:%zu --arg n=%zu --out y='%s'", example("fused_chain.hasm"),
             tmp_path("a.npy"), tmp_path("b.npy"), tmp_path("c.npy"), n, n, tmp_path("y.npy"));
    int rc = cli(args);
    CHECK_MSG(rc == 0, "fused_chain n=%zu exit %d: %s", n, rc, g_err);
    size_t got_n = 0;
    float* y = read_f32(tmp_path("y.npy"), &got_n, NULL, 0);
    CHECK_MSG(y && got_n == n, "fused_chain n=%zu: output missing or wrong size", n);
    if (y && got_n == n) {
        size_t bad = 0, zeros = 0;
        for (size_t i = 0; i < n; i++) {
            float t = a[i] * b[i];
            t = t + c[i];
            float want = (t > 0.0f ? t : 0.0f) * 0.5f;
            bad += y[i] != want;
            zeros += want == 0.0f;
        }
        CHECK_MSG(bad == 0, "fused_chain n=%zu: %zu wrong elements", n, bad);
        CHECK(n < 100 || (zeros > n / 5 && zeros < n * 4 / 5));   // relu really clamps some
    }
    free(a); free(b); free(c); free(y);
}

static void test_block_reduce(size_t n, unsigned block, uint64_t seed) {
    float* x = random_f32(n, &seed, 10.0f);
    CHECK(write_f32(tmp_path("x.npy"), x, n) == 0);
    size_t g = (n + block - 1) / block;
    char args[4096];
    snprintf(args, sizeof args, "run '%s' --block %u --grid %zu --arg x='%s' --arg partial=zeros:%zu "
             "--arg n=%zu --out partial='%s'", example("block_reduce.hasm"), block, g,
             tmp_path("x.npy"), g, n, tmp_path("p.npy"));
    int rc = cli(args);
    CHECK_MSG(rc == 0, "block_reduce n=%zu block=%u exit %d: %s", n, block, rc, g_err);
    size_t got = 0;
    float* p = read_f32(tmp_path("p.npy"), &got, NULL, 0);
    CHECK_MSG(p && got == g, "block_reduce: output missing or wrong size");
    if (p && got == g) {
        size_t bad = 0;
        for (size_t k = 0; k < g; k++) {
            double sum = 0, mag = 0;
            for (size_t i = k * block; i < (k + 1) * block && i < n; i++) {
                sum += x[i];
                mag += fabs(x[i]);
            }
            if (fabs((double)p[k] - sum) > 1e-5 * mag + 1e-30) {
                if (!bad) fprintf(stderr, "block_reduce block %zu: got %.9g want %.9g\n", k, p[k], sum);
                bad++;
            }
        }
        CHECK_MSG(bad == 0, "block_reduce n=%zu block=%u: %zu wrong partial sums", n, block, bad);
    }
    free(x); free(p);
}

static void test_matmul(unsigned M, unsigned N, unsigned K, uint64_t seed) {
    float* A = random_f32((size_t)M * K, &seed, 1.0f);
    float* B = random_f32((size_t)K * N, &seed, 1.0f);
    char shape[64];
    snprintf(shape, sizeof shape, "(%u, %u)", M, K);
    CHECK(write_npy(tmp_path("A.npy"), "<f4", shape, A, (size_t)M * K * 4) == 0);
    snprintf(shape, sizeof shape, "(%u, %u)", K, N);
    CHECK(write_npy(tmp_path("B.npy"), "<f4", shape, B, (size_t)K * N * 4) == 0);
    char args[4096];
    snprintf(args, sizeof args, "run '%s' --grid %u,%u --block 16,16 --arg A='%s' --arg B='%s' "
             "--arg C=zeros:%u --arg M=%u --arg N=%u --arg K=%u --out C='%s'",
             example("tiled_matmul.hasm"), (N + 15) / 16, (M + 15) / 16, tmp_path("A.npy"),
             tmp_path("B.npy"), M * N, M, N, K, tmp_path("C.npy"));
    int rc = cli(args);
    CHECK_MSG(rc == 0, "tiled_matmul %ux%ux%u exit %d: %s", M, N, K, rc, g_err);
    size_t got = 0;
    float* C = read_f32(tmp_path("C.npy"), &got, NULL, 0);
    CHECK_MSG(C && got == (size_t)M * N, "tiled_matmul: output missing or wrong size");
    if (C && got == (size_t)M * N) {
        size_t bad = 0;
        for (unsigned i = 0; i < M; i++)
            for (unsigned j = 0; j < N; j++) {
                double sum = 0, mag = 0;
                for (unsigned k = 0; k < K; k++) {
                    double t = (double)A[(size_t)i * K + k] * (double)B[(size_t)k * N + j];
                    sum += t;
                    mag += fabs(t);
                }
                if (fabs((double)C[(size_t)i * N + j] - sum) > 1e-5 * mag + 1e-30) {
                    if (!bad) fprintf(stderr, "matmul C[%u][%u] = %.9g want %.9g\n", i, j,
                                      C[(size_t)i * N + j], sum);
                    bad++;
                }
            }
        CHECK_MSG(bad == 0, "tiled_matmul %ux%ux%u: %zu wrong elements", M, N, K, bad);
    }
    free(A); free(B); free(C);
}

// --- CLI behaviour ------------------------------------------------------------------------------
static int write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static char* read_text(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}


// `info` prints the line "<label><value>" and `info --json` the pair "<key>": "<value>".
static void info_says(const char* label, const char* key, const char* value) {
    char want[1200];
    CHECK(cli("info") == 0);
    snprintf(want, sizeof want, "%s%s\n", label, value);
    CHECK_MSG(strstr(g_out, want), "no '%s' in info:\n%s", want, g_out);
    CHECK(cli("info --json") == 0);
    snprintf(want, sizeof want, "\"%s\": \"%s\"", key, value);
    CHECK_MSG(strstr(g_out, want), "no '%s' in info --json:\n%s", want, g_out);
}

// `info` names the CPU kernel set that runs (HOLOGRAM_CPU_LEVEL narrows it), where NVRTC and the
// kernel cache are, and says the same in text and JSON.
static void info_facts(void) {
    const char* mine = hg_cpu_kernel_set();   // before any HOLOGRAM_CPU_LEVEL below
    const char* levels[] = {"generic", "avx2", NULL};
    for (int k = 0; k < 3; k++) {
        const char* lv = levels[k];
        if (lv ? setenv("HOLOGRAM_CPU_LEVEL", lv, 1) : unsetenv("HOLOGRAM_CPU_LEVEL")) continue;
        // The narrower of the cap and this CPU's set.
        info_says("cpu kernels:  ", "cpu_kernels",
                  lv && (!strcmp(lv, "generic") || strcmp(mine, "generic")) ? lv : mine);
    }
    unsetenv("HOLOGRAM_CPU_LEVEL");
    // The kernel cache folder as HOLOGRAM_CACHE_DIR names it.
    char dir[600];   // tmp_path's buffers are reused by cli()
    snprintf(dir, sizeof dir, "%s", tmp_path("kcache"));
    setenv("HOLOGRAM_CACHE_DIR", dir, 1);
    info_says("kernel cache: ", "kernel_cache", dir);
    // A cache folder that cannot be made: none, with the reason, in both.
    setenv("HOLOGRAM_CACHE_DIR", "/proc/hologram-no-such-folder", 1);
    CHECK(cli("info") == 0 && strstr(g_out, "kernel cache: none: no usable kernel cache folder"));
    CHECK(cli("info --json") == 0 &&
          strstr(g_out, "\"kernel_cache\": null, \"kernel_cache_reason\": \"no usable"));
    unsetenv("HOLOGRAM_CACHE_DIR");
    // NVRTC from HOLOGRAM_NVRTC: a file that is not a library is named as the reason, in both.
    const char* saved = getenv("HOLOGRAM_NVRTC");
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", saved ? saved : "");
    setenv("HOLOGRAM_NVRTC", example("vector_add.hasm"), 1);
    CHECK(cli("info") == 0 && strstr(g_out, "nvrtc:        not found: no NVRTC") &&
          strstr(g_out, "vector_add.hasm"));
    CHECK(cli("info --json") == 0 &&
          strstr(g_out, "\"nvrtc\": null, \"nvrtc_reason\": \"no NVRTC"));
    if (keep[0]) {
        setenv("HOLOGRAM_NVRTC", keep, 1);   // the NVRTC the tests use: its path
        info_says("nvrtc:        ", "nvrtc", keep);
    } else {
        unsetenv("HOLOGRAM_NVRTC");
    }
}

static void test_cli_errors(void) {
    char args[4096];
    // Help and usage.
    CHECK(cli("--help") == 0 && strstr(g_out, "run"));
    CHECK(cli("--version") == 0 && strstr(g_out, HG_VERSION_STRING));
    const char* cmds[] = {"info", "check", "run", "bench"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        int rc = cli(args);
        CHECK_MSG(rc == 0 && strstr(g_out, "Usage: hologram"), "%s --help: exit %d", cmds[i], rc);
    }
    CHECK(cli("frobnicate") == 2 && strstr(g_err, "frobnicate"));
    CHECK(cli("") == 2);
    CHECK(cli("run --bogus-option x") == 2);

    // info.
    int rc = cli("info");
    CHECK_MSG(rc == 0 && strstr(g_out, "cpu"), "info exit %d: %s", rc, g_err);
    rc = cli("info --json");
    CHECK_MSG(rc == 0 && strstr(g_out, "\"backends\"") && strstr(g_out, "\"cpu\""), "info --json: %d", rc);
    info_facts();

    // check: valid program -> canonical text, and canonical text is a fixed point.
    snprintf(args, sizeof args, "check '%s'", example("tiled_matmul.hasm"));
    rc = cli(args);
    CHECK_MSG(rc == 0 && strstr(g_out, ".kernel tiled_matmul"), "check tiled_matmul: %d %s", rc, g_err);
    CHECK(write_text(tmp_path("canon.hasm"), g_out) == 0);
    char first[1 << 16];
    snprintf(first, sizeof first, "%s", g_out);
    snprintf(args, sizeof args, "check '%s'", tmp_path("canon.hasm"));
    CHECK(cli(args) == 0 && strcmp(g_out, first) == 0);
    const char* names[] = {"vector_add.hasm", "fused_chain.hasm", "block_reduce.hasm"};
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "check --quiet '%s'", example(names[i]));
        rc = cli(args);
        CHECK_MSG(rc == 0 && g_out[0] == 0, "check %s: exit %d: %s", names[i], rc, g_err);
    }
    // stdin.
    snprintf(args, sizeof args, "check - < '%s'", example("vector_add.hasm"));
    CHECK(cli(args) == 0 && strstr(g_out, ".kernel vector_add"));

    // check: a store into a const buffer is rejected by the validator.
    CHECK(write_text(tmp_path("bad.hasm"),
                     ".kernel bad\n.param a: global const f32\n.reg u32 i\n.reg f32 x\n"
                     "    mov.u32 i, %gid.x\n    st.global.f32 a[i], x\n") == 0);
    snprintf(args, sizeof args, "check '%s'", tmp_path("bad.hasm"));
    rc = cli(args);
    CHECK_MSG(rc == 1 && (strstr(g_err, "HG_ERR_INVALID_PROGRAM") || strstr(g_err, "HG_ERR_PARSE")) &&
              strlen(g_err) > 60, "check bad.hasm: exit %d: %s", rc, g_err);
    CHECK(g_out[0] == 0);
    // ... as is an operand of the wrong type; the message names the instruction.
    CHECK(write_text(tmp_path("bad3.hasm"),
                     ".kernel bad3\n.reg u32 i\n.reg f32 x\n    add.f32 x, i, x\n") == 0);
    snprintf(args, sizeof args, "check '%s'", tmp_path("bad3.hasm"));
    rc = cli(args);
    CHECK_MSG(rc == 1 && (strstr(g_err, "HG_ERR_INVALID_PROGRAM") || strstr(g_err, "HG_ERR_PARSE")) &&
              strstr(g_err, "add"), "check bad3.hasm: exit %d: %s", rc, g_err);
    // ... and an unknown mnemonic is a parse error.
    CHECK(write_text(tmp_path("bad2.hasm"),
                     ".kernel bad2\n.reg u32 i\n    frob.u32 i, i\n") == 0);
    snprintf(args, sizeof args, "check '%s'", tmp_path("bad2.hasm"));
    rc = cli(args);
    CHECK_MSG(rc == 1 && strstr(g_err, "HG_ERR_PARSE"), "check bad2.hasm: exit %d: %s", rc, g_err);
    snprintf(args, sizeof args, "check '%s'", tmp_path("does_not_exist.hasm"));
    CHECK(cli(args) == 1 && strstr(g_err, "does_not_exist"));

    // run: wrong dtype (f64 file for an f32 parameter) names the parameter and both dtypes.
    double d[4] = {1, 2, 3, 4};
    float f[4] = {1, 2, 3, 4};
    CHECK(write_npy(tmp_path("d.npy"), "<f8", "(4,)", d, sizeof d) == 0);
    CHECK(write_f32(tmp_path("f.npy"), f, 4) == 0);
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c=zeros:4 --arg n=4",
             example("vector_add.hasm"), tmp_path("d.npy"), tmp_path("f.npy"));
    rc = cli(args);
    CHECK_MSG(rc != 0 && strstr(g_err, "'a'") && strstr(g_err, "f64") && strstr(g_err, "f32"),
              "wrong dtype: exit %d: %s", rc, g_err);
    // missing --arg n: usage error listing the parameters.
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c=zeros:4",
             example("vector_add.hasm"), tmp_path("f.npy"), tmp_path("f.npy"));
    rc = cli(args);
    CHECK_MSG(rc == 2 && strstr(g_err, "missing") && strstr(g_err, "n (u32)") &&
              strstr(g_err, "a (global const f32)"), "missing arg: exit %d: %s", rc, g_err);
    // unknown --arg name.
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c=zeros:4 --arg n=4 --arg zz=1",
             example("vector_add.hasm"), tmp_path("f.npy"), tmp_path("f.npy"));
    rc = cli(args);
    CHECK_MSG(rc == 2 && strstr(g_err, "zz"), "unknown arg: exit %d: %s", rc, g_err);
    // scalar out of range for u32.
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c=zeros:4 --arg n=-1",
             example("vector_add.hasm"), tmp_path("f.npy"), tmp_path("f.npy"));
    rc = cli(args);
    CHECK_MSG(rc == 2 && strstr(g_err, "out of range"), "n=-1: exit %d: %s", rc, g_err);
    // n larger than the buffers: the launch fails with an out-of-bounds error, exit 1.
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c=zeros:4 --arg n=8 --grid 1 --block 8",
             example("vector_add.hasm"), tmp_path("f.npy"), tmp_path("f.npy"));
    rc = cli(args);
    CHECK_MSG(rc == 1 && strstr(g_err, "HG_ERR_OUT_OF_BOUNDS"), "out of bounds: exit %d: %s", rc, g_err);
    // --out keeps the shape of the .npy the buffer came from.
    float z[6] = {0};
    CHECK(write_npy(tmp_path("z23.npy"), "<f4", "(2, 3)", z, sizeof z) == 0);
    float six[6] = {1, 2, 3, 4, 5, 6};
    CHECK(write_f32(tmp_path("six.npy"), six, 6) == 0);
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c='%s' --arg n=6 --out c='%s'",
             example("vector_add.hasm"), tmp_path("six.npy"), tmp_path("six.npy"), tmp_path("z23.npy"),
             tmp_path("o23.npy"));
    rc = cli(args);
    CHECK_MSG(rc == 0, "shape run: exit %d: %s", rc, g_err);
    char header[1024] = "";
    size_t cnt = 0;
    float* o = read_f32(tmp_path("o23.npy"), &cnt, header, sizeof header);
    CHECK_MSG(o && cnt == 6 && strstr(header, "(2, 3)") && o[5] == 12.0f, "shape: header %s", header);
    free(o);
    // Fortran-order input is refused clearly.
    CHECK(write_npy(tmp_path("fort.npy"), "<f4", "(2, 3)", z, sizeof z) == 0);
    {
        // Patch fortran_order in place (same length: "False" -> "True ").
        // (The search starts after the 10-byte preamble, which contains a NUL.)
        char* t = read_text(tmp_path("fort.npy"));
        char* p = t ? strstr(t + 10, "False") : NULL;
        if (p) {
            memcpy(p, "True ", 5);
            FILE* ff = fopen(tmp_path("fort.npy"), "r+b");
            if (ff) {
                fseek(ff, (long)(p - t), SEEK_SET);
                fwrite("True ", 1, 5, ff);
                fclose(ff);
            }
        }
    }
    snprintf(args, sizeof args, "run '%s' --arg a='%s' --arg b='%s' --arg c=zeros:6 --arg n=6",
             example("vector_add.hasm"), tmp_path("fort.npy"), tmp_path("six.npy"));
    rc = cli(args);
    CHECK_MSG(rc == 1 && strstr(g_err, "Fortran"), "fortran order: exit %d: %s", rc, g_err);
}

// The programs embedded in `hologram bench` are the example files, byte for byte.
static void test_bench(void) {
    const char* progs[] = {"vector_add", "fused_chain"};
    for (int i = 0; i < 2; i++) {
        char args[256], file[128];
        snprintf(args, sizeof args, "bench --print-program %s", progs[i]);
        int rc = cli(args);
        snprintf(file, sizeof file, "%s.hasm", progs[i]);
        char* text = read_text(example(file));
        CHECK_MSG(rc == 0 && text && strcmp(g_out, text) == 0,
                  "bench's embedded %s differs from examples/%s", progs[i], file);
    }
    char args[1024];
    snprintf(args, sizeof args, "bench --size 100003 --repeats 2 --warmup 1 --threads 2 --json '%s'",
             tmp_path("bench.json"));
    int rc = cli(args);
    CHECK_MSG(rc == 0 && strstr(g_out, "isa_fused_chain") && strstr(g_out, "c_add"),
              "bench: exit %d: %s", rc, g_err);
    char* json = read_text(tmp_path("bench.json"));
    CHECK(json && strstr(json, "\"machine\"") && strstr(json, "\"ratio_best\"") &&
          strstr(json, "\"verified\": true"));
}

// `hologram run vector_add.hasm` on zeros:4 inputs a and b, n = 4, and `extra` (which gives c).
static int cli_vector_add(const char* extra) {
    char args[4096];
    snprintf(args, sizeof args, "run '%s' --backend cpu --arg a=zeros:4 --arg b=zeros:4 --arg n=4 %s",
             example("vector_add.hasm"), extra);
    return cli(args);
}

// Launch and size bounds: each refused up front with the real limit in the message.
static void test_cli_bounds(void) {
    // 2^56 lanes passed validation and ran for ever: refused by the launch API's bound.
    int rc = cli_vector_add("--arg c=zeros:4 --grid 65536,65536,65536");
    CHECK_MSG(rc == 1 && strstr(g_err, "HG_ERR_LAUNCH_CONFIG") && strstr(g_err, "2^40") &&
              strstr(g_err, "split the work"), "2^56 lanes: exit %d: %s", rc, g_err);
    // 2^33 blocks of 512 lanes (2^42), each dimension's %gid within u32: over the bound too.
    rc = cli_vector_add("--arg c=zeros:4 --grid 65536,65536,2 --block 512");
    CHECK_MSG(rc == 1 && strstr(g_err, "2^40"), "2^42 lanes: exit %d: %s", rc, g_err);
    // A block too large without --grid: the block's limit, not --grid auto's 1-D rule.
    rc = cli_vector_add("--arg c=zeros:4 --block 65536,65536,65536");
    CHECK_MSG(rc == 2 && strstr(g_err, "at most 1024") && !strstr(g_err, "1-D"),
              "big block: exit %d: %s", rc, g_err);
    rc = cli_vector_add("--arg c=zeros:4 --block 2048");
    CHECK_MSG(rc == 2 && strstr(g_err, "2048 lanes"), "block 2048: exit %d: %s", rc, g_err);
    // zeros:N beyond what a buffer can hold says so (N is a fine integer).
    rc = cli_vector_add("--arg c=zeros:4611686018427387904");
    CHECK_MSG(rc == 2 && strstr(g_err, "more bytes than a buffer can hold") &&
              !strstr(g_err, "non-negative integer"), "zeros:2^62: exit %d: %s", rc, g_err);
    rc = cli_vector_add("--arg c=zeros:-4");
    CHECK_MSG(rc == 2 && strstr(g_err, "non-negative integer"), "zeros:-4: exit %d: %s", rc, g_err);
}

// Environment variables through the one parser: a value in another case is accepted, anything
// else is a warning naming the variable, the value and what is accepted.
static void test_cli_env(void) {
    setenv("HOLOGRAM_CPU_LEVEL", "GENERIC", 1);
    int rc = cli("info");
    CHECK_MSG(rc == 0 && strstr(g_out, "cpu kernels:  generic") && !strstr(g_err, "ignoring"),
              "HOLOGRAM_CPU_LEVEL=GENERIC: %s%s", g_out, g_err);
    setenv("HOLOGRAM_CPU_LEVEL", "fastest", 1);
    rc = cli("info");
    CHECK_MSG(rc == 0 && strstr(g_err, "HOLOGRAM_CPU_LEVEL='fastest'") &&
              strstr(g_err, "generic, avx2, avx512"), "HOLOGRAM_CPU_LEVEL=fastest: %s", g_err);
    unsetenv("HOLOGRAM_CPU_LEVEL");
    setenv("HOLOGRAM_LOG_LEVEL", "loud", 1);
    rc = cli("info");
    CHECK_MSG(rc == 0 && strstr(g_err, "HOLOGRAM_LOG_LEVEL='loud'") && strstr(g_err, "debug"),
              "HOLOGRAM_LOG_LEVEL=loud: %s", g_err);
    setenv("HOLOGRAM_LOG_LEVEL", "DEBUG", 1);
    rc = cli("info");
    CHECK_MSG(rc == 0 && !strstr(g_err, "ignoring"), "HOLOGRAM_LOG_LEVEL=DEBUG: %s", g_err);
    unsetenv("HOLOGRAM_LOG_LEVEL");
}

int main(void) {
    const char* bin = getenv("HG_BINARY_DIR");
    snprintf(g_bin, sizeof g_bin, "%s/hologram", bin ? bin : ".");
    struct stat sb;
    if (stat(g_bin, &sb) != 0) {
        fprintf(stderr, "test_examples: the CLI is not at %s (set HG_BINARY_DIR)\n", g_bin);
        CHECK(0);
        return hg_test_finish("test_examples");
    }
    snprintf(g_tmp, sizeof g_tmp, "/tmp/hg_test_examples_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        CHECK(0);
        return hg_test_finish("test_examples");
    }

    test_vector_add(1, 1);
    test_vector_add(1000, 2);
    test_vector_add(1000003, 3);
    test_fused_chain(7, 4);
    test_fused_chain(1000003, 5);
    test_block_reduce(100003, 256, 6);
    test_block_reduce(5000, 1024, 7);
    test_block_reduce(33, 32, 8);
    test_matmul(37, 53, 29, 9);
    test_matmul(64, 64, 64, 10);
    test_matmul(1, 1, 1, 11);
    test_cli_errors();
    test_cli_bounds();
    test_cli_env();
    test_bench();

    // Remove the temporary files (only ours, in our own mkdtemp directory).
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    return hg_test_finish("test_examples");
}
