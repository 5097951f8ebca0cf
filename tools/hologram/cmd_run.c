// cmd_run.c — `hologram run PROG.hasm --arg name=... --out name=file.npy`: binds every program
// parameter by name (buffers from .npy files or zeros:N, scalars from literals parsed in the
// parameter's dtype), launches once and writes the requested buffers back as .npy.
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_common.h"
#include "npy.h"

static const char* k_help =
    "Usage: hologram run PROGRAM.hasm [options] --arg NAME=VALUE ... [--out NAME=FILE.npy ...]\n"
    "\n"
    "Runs an Atlas ISA text program once. Every parameter of the program must be bound by name:\n"
    "  buffer parameter:  --arg NAME=FILE.npy   (the .npy dtype must equal the parameter dtype)\n"
    "                     --arg NAME=zeros:N    (N zero elements)\n"
    "  scalar parameter:  --arg NAME=VALUE      (parsed and range-checked in the parameter dtype:\n"
    "                                            integers in decimal or 0x hex, floats, inf, nan,\n"
    "                                            true/false for bool)\n"
    "After the run, --out NAME=FILE.npy writes buffer NAME (shaped like the .npy it was read\n"
    "from, 1-D for zeros:N).\n"
    "\n"
    "Options:\n"
    "  --grid X[,Y[,Z]]|auto  blocks per dimension (default auto: ceil(n / block.x) blocks in x,\n"
    "                         where n is the element count of the first buffer argument)\n"
    "  --block X[,Y[,Z]]      lanes per block (default 256; x*y*z <= 1024)\n"
    "  --shared BYTES         bytes for the program's unsized shared array (default 0)\n"
    "  --backend NAME         auto (default), cpu, cuda or metal\n"
    "  --threads N            CPU worker threads (default: HOLOGRAM_NUM_THREADS or all cores)\n"
    "  --bf16-as-u16          read/write bf16 buffers as '<u2' .npy files of raw bits (numpy has\n"
    "                         no bfloat16 dtype)\n"
    "  --time                 print the launch time to stderr\n"
    "  -h, --help             show this help\n"
    "\n"
    "Example:\n"
    "  hologram run examples/vector_add.hasm --arg a=a.npy --arg b=b.npy --arg c=zeros:1000 \\\n"
    "      --arg n=1000 --out c=c.npy\n"
    "\n"
    "Exit status: 0 success, 1 runtime or validation error, 2 usage error.\n";

#define MAX_BINDINGS 256

typedef struct binding {
    const char* name;     // points into argv (NUL-terminated copy in key[])
    char key[64];
    const char* value;
    int used;
} binding;

typedef struct param_slot {
    hg_param_info info;
    const char* value;     // from --arg
    const char* out_path;  // from --out
    hg_buffer buf;
    int have_buf;
    uint64_t shape[NPY_MAX_DIMS];
    int ndim;
    uint64_t count;
} param_slot;

static int split_binding(const char* opt, const char* text, binding* b) {
    const char* eq = strchr(text, '=');
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof b->key)
        return cli_usage("run", "%s expects NAME=VALUE, got '%s'", opt, text);
    memcpy(b->key, text, (size_t)(eq - text));
    b->key[eq - text] = 0;
    b->name = b->key;
    b->value = eq + 1;
    b->used = 0;
    return CLI_OK;
}

static const char* param_kind_text(const hg_param_info* p, char* buf, size_t cap) {
    const char* dt = hg_dtype_name(p->dtype) ? hg_dtype_name(p->dtype) : "?";
    if (p->kind == HG_PARAM_BUFFER) snprintf(buf, cap, "global %s%s", p->is_const ? "const " : "", dt);
    else snprintf(buf, cap, "%s", dt);
    return buf;
}

// "a (global const f32), n (u32)" for error messages.
static void list_params(const param_slot* ps, uint32_t n, char* out, size_t cap) {
    size_t len = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < n && len < cap; i++) {
        char k[64];
        len += (size_t)snprintf(out + len, cap - len, "%s%s (%s)", i ? ", " : "", ps[i].info.name,
                                param_kind_text(&ps[i].info, k, sizeof k));
    }
    if (n == 0) snprintf(out, cap, "(none)");
}

static int parse_bool(const char* s, uint64_t* bits) {
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcmp(s, "True") == 0) { *bits = 1; return 1; }
    if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcmp(s, "False") == 0) { *bits = 0; return 1; }
    return 0;
}

// Parses a scalar literal in dtype dt into raw bits (zero-extended to 64 bits); range-checked.
static int parse_scalar(const char* s, hg_dtype dt, uint64_t* bits, char* err, size_t errlen) {
    const char* dn = hg_dtype_name(dt);
    size_t width = hg_dtype_size(dt) * 8;
    char* end = NULL;
    errno = 0;
    if (dt == HG_DTYPE_BOOL) {
        if (parse_bool(s, bits)) return 1;
        snprintf(err, errlen, "'%s' is not a bool (expected true, false, 1 or 0)", s);
        return 0;
    }
    if (dt == HG_DTYPE_I8 || dt == HG_DTYPE_I16 || dt == HG_DTYPE_I32 || dt == HG_DTYPE_I64) {
        long long v = strtoll(s, &end, 0);
        long long lo = width == 64 ? INT64_MIN : -(1ll << (width - 1));
        long long hi = width == 64 ? INT64_MAX : (1ll << (width - 1)) - 1;
        if (!*s || *end) { snprintf(err, errlen, "'%s' is not an integer", s); return 0; }
        if (errno == ERANGE || v < lo || v > hi) {
            snprintf(err, errlen, "%s is out of range for %s [%lld, %lld]", s, dn, lo, hi);
            return 0;
        }
        uint64_t u = (uint64_t)v;
        *bits = width == 64 ? u : (u & ((1ull << width) - 1));
        return 1;
    }
    if (dt == HG_DTYPE_U8 || dt == HG_DTYPE_U16 || dt == HG_DTYPE_U32 || dt == HG_DTYPE_U64) {
        uint64_t hi = width == 64 ? UINT64_MAX : (1ull << width) - 1;
        const char* p = s;
        while (*p == ' ') p++;
        if (*p == '-') {
            snprintf(err, errlen, "%s is out of range for %s [0, %llu]", s, dn, (unsigned long long)hi);
            return 0;
        }
        unsigned long long v = strtoull(s, &end, 0);
        if (!*s || *end) { snprintf(err, errlen, "'%s' is not an unsigned integer", s); return 0; }
        if (errno == ERANGE || v > hi) {
            snprintf(err, errlen, "%s is out of range for %s [0, %llu]", s, dn, (unsigned long long)hi);
            return 0;
        }
        *bits = v;
        return 1;
    }
    // Floats: strtod accepts inf/nan/hex floats; finite values beyond the type's range are errors
    // rather than a silent infinity.
    double v = strtod(s, &end);
    if (!*s || *end) { snprintf(err, errlen, "'%s' is not a number", s); return 0; }
    double maxv = dt == HG_DTYPE_F64 ? DBL_MAX : dt == HG_DTYPE_F32 ? FLT_MAX
                : dt == HG_DTYPE_F16 ? 65504.0 : 3.3895313892515355e38;
    int overflow = (errno == ERANGE && fabs(v) > 1.0) || (isfinite(v) && fabs(v) > maxv);
    int is_inf_literal = strstr(s, "inf") || strstr(s, "INF") || strstr(s, "Inf");
    if (overflow || (isinf(v) && !is_inf_literal)) {
        snprintf(err, errlen, "%s is out of range for %s (largest finite value %g)", s, dn, maxv);
        return 0;
    }
    if (dt == HG_DTYPE_F64) { memcpy(bits, &v, 8); return 1; }
    float f = (float)v;
    if (dt == HG_DTYPE_F32) { uint32_t b; memcpy(&b, &f, 4); *bits = b; return 1; }
    if (dt == HG_DTYPE_F16) { *bits = hg_f32_to_f16(f); return 1; }
    *bits = hg_f32_to_bf16(f);
    return 1;
}

// Creates the buffer for a buffer parameter from its --arg value.
static int bind_buffer(hg_executor ex, param_slot* p, int bf16_as_u16) {
    const char* v = p->value;
    const char* name = p->info.name;
    const char* want = hg_dtype_name(p->info.dtype);
    hg_status st;
    if (strncmp(v, "zeros:", 6) == 0) {
        uint64_t n;
        if (!cli_parse_u64(v + 6, UINT64_MAX, &n))
            return cli_usage("run", "--arg %s=%s: expected zeros:N with N a non-negative integer", name, v);
        size_t esize = hg_dtype_size(p->info.dtype);
        if (n > (uint64_t)SIZE_MAX / esize)
            return cli_usage("run", "--arg %s=%s: %llu %s elements are more bytes than a buffer "
                             "can hold (at most %llu elements of %zu bytes)", name, v,
                             (unsigned long long)n, want, (unsigned long long)(SIZE_MAX / esize),
                             esize);
        st = hg_buffer_create(ex, p->info.dtype, (size_t)n, &p->buf);
        if (st != HG_OK) {
            char what[160];
            snprintf(what, sizeof what, "allocating %llu %s elements for '%s'", (unsigned long long)n,
                     want, name);
            return cli_hg_fail("run", st, what);
        }
        p->have_buf = 1;
        p->ndim = 1;
        p->shape[0] = n;
        p->count = n;
        return CLI_OK;
    }
    npy_array arr;
    char err[600];
    if (npy_read(v, &arr, err, sizeof err) != 0)
        return cli_fail("run", "parameter '%s': %s", name, err);
    int ok = arr.dtype == p->info.dtype;
    if (p->info.dtype == HG_DTYPE_BF16 && arr.dtype == HG_DTYPE_U16 && bf16_as_u16) ok = 1;
    if (!ok) {
        const char* have = npy_descr_of(arr.dtype);
        const char* expect = npy_descr_of(p->info.dtype);
        if (p->info.dtype == HG_DTYPE_BF16)
            cli_fail("run", "parameter '%s' expects bf16 but '%s' has dtype '%s' (%s); numpy has no "
                     "bfloat16: pass the raw bits as a '<u2' array together with --bf16-as-u16",
                     name, v, have, hg_dtype_name(arr.dtype));
        else
            cli_fail("run", "parameter '%s' expects dtype %s ('%s') but '%s' has dtype %s ('%s'); "
                     "convert it, e.g. np.save(path, arr.astype(np.%s))", name, want, expect, v,
                     hg_dtype_name(arr.dtype), have,
                     p->info.dtype == HG_DTYPE_BOOL ? "bool_" :
                     p->info.dtype == HG_DTYPE_F16 ? "float16" :
                     p->info.dtype == HG_DTYPE_F32 ? "float32" :
                     p->info.dtype == HG_DTYPE_F64 ? "float64" :
                     p->info.dtype == HG_DTYPE_I8 ? "int8" : p->info.dtype == HG_DTYPE_I16 ? "int16" :
                     p->info.dtype == HG_DTYPE_I32 ? "int32" : p->info.dtype == HG_DTYPE_I64 ? "int64" :
                     p->info.dtype == HG_DTYPE_U8 ? "uint8" : p->info.dtype == HG_DTYPE_U16 ? "uint16" :
                     p->info.dtype == HG_DTYPE_U32 ? "uint32" : "uint64");
        npy_array_free(&arr);
        return CLI_FAIL;
    }
    st = hg_buffer_create(ex, p->info.dtype, (size_t)arr.count, &p->buf);
    if (st == HG_OK) {
        p->have_buf = 1;
        st = hg_buffer_write(p->buf, 0, arr.data, (size_t)arr.count);
    }
    if (st != HG_OK) {
        npy_array_free(&arr);
        char what[160];
        snprintf(what, sizeof what, "loading '%s' into parameter '%s'", v, name);
        return cli_hg_fail("run", st, what);
    }
    p->ndim = arr.ndim;
    memcpy(p->shape, arr.shape, sizeof arr.shape);
    p->count = arr.count;
    npy_array_free(&arr);
    return CLI_OK;
}

static int write_output(param_slot* p, int bf16_as_u16) {
    size_t es = hg_dtype_size(p->info.dtype);
    void* host = malloc(p->count ? (size_t)p->count * es : 1);
    if (!host) return cli_fail("run", "out of memory reading back '%s'", p->info.name);
    hg_status st = hg_buffer_read(p->buf, 0, host, (size_t)p->count);
    if (st != HG_OK) {
        free(host);
        char what[128];
        snprintf(what, sizeof what, "reading back '%s'", p->info.name);
        return cli_hg_fail("run", st, what);
    }
    char err[600];
    int rc = npy_write(p->out_path, p->info.dtype, p->shape, p->ndim, host, bf16_as_u16, err, sizeof err);
    free(host);
    if (rc != 0) return cli_fail("run", "output '%s': %s", p->info.name, err);
    return CLI_OK;
}

typedef struct run_opts {
    const char* path;
    const char* grid;
    const char* block;
    const char* shared;
    const char* backend;
    const char* threads;
    int bf16_as_u16;
    int time;
    binding args[MAX_BINDINGS];
    int nargs;
    binding outs[MAX_BINDINGS];
    int nouts;
} run_opts;

static int parse_opts(int argc, char** argv, run_opts* o, int* help) {
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = NULL;
        int m;
        if (cli_is_help(a)) { *help = 1; return CLI_OK; }
        if (strcmp(a, "--bf16-as-u16") == 0) { o->bf16_as_u16 = 1; continue; }
        if (strcmp(a, "--time") == 0) { o->time = 1; continue; }
#define OPT(NAME, FIELD)                                                                        \
        if ((m = cli_opt(argc, argv, &i, NAME, &v)) != 0) {                                     \
            if (m < 0) return cli_usage("run", "%s needs a value", NAME);                      \
            o->FIELD = v;                                                                       \
            continue;                                                                           \
        }
        OPT("--grid", grid)
        OPT("--block", block)
        OPT("--shared", shared)
        OPT("--backend", backend)
        OPT("--threads", threads)
#undef OPT
        if ((m = cli_opt(argc, argv, &i, "--arg", &v)) != 0) {
            if (m < 0) return cli_usage("run", "--arg needs NAME=VALUE");
            if (o->nargs >= MAX_BINDINGS) return cli_usage("run", "too many --arg options");
            if (split_binding("--arg", v, &o->args[o->nargs]) != CLI_OK) return CLI_USAGE;
            o->nargs++;
            continue;
        }
        if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0) return cli_usage("run", "--out needs NAME=FILE.npy");
            if (o->nouts >= MAX_BINDINGS) return cli_usage("run", "too many --out options");
            if (split_binding("--out", v, &o->outs[o->nouts]) != CLI_OK) return CLI_USAGE;
            o->nouts++;
            continue;
        }
        if (a[0] == '-' && a[1] != 0) return cli_usage("run", "unknown option '%s'", a);
        if (o->path) return cli_usage("run", "more than one program given ('%s' and '%s')", o->path, a);
        o->path = a;
    }
    if (!o->path) return cli_usage("run", "missing the program file");
    return CLI_OK;
}

// Matches --arg/--out bindings to parameters; usage errors list the program's parameters.
static int match_bindings(run_opts* o, param_slot* ps, uint32_t np, const char* kname) {
    char list[4096];
    list_params(ps, np, list, sizeof list);
    for (int b = 0; b < o->nargs; b++) {
        uint32_t i = 0;
        while (i < np && strcmp(ps[i].info.name, o->args[b].name) != 0) i++;
        if (i == np)
            return cli_usage("run", "--arg %s: kernel '%s' has no parameter '%s'; its parameters are: %s",
                             o->args[b].name, kname, o->args[b].name, list);
        if (ps[i].value) return cli_usage("run", "--arg %s given twice", o->args[b].name);
        ps[i].value = o->args[b].value;
    }
    for (int b = 0; b < o->nouts; b++) {
        uint32_t i = 0;
        while (i < np && strcmp(ps[i].info.name, o->outs[b].name) != 0) i++;
        if (i == np)
            return cli_usage("run", "--out %s: kernel '%s' has no parameter '%s'; its parameters are: %s",
                             o->outs[b].name, kname, o->outs[b].name, list);
        if (ps[i].info.kind != HG_PARAM_BUFFER)
            return cli_usage("run", "--out %s: '%s' is a scalar parameter; only buffers can be written out",
                             o->outs[b].name, o->outs[b].name);
        if (ps[i].out_path) return cli_usage("run", "--out %s given twice", o->outs[b].name);
        ps[i].out_path = o->outs[b].value;
    }
    char missing[1024];
    size_t ml = 0;
    missing[0] = 0;
    for (uint32_t i = 0; i < np; i++)
        if (!ps[i].value && ml < sizeof missing)
            ml += (size_t)snprintf(missing + ml, sizeof missing - ml, "%s%s", ml ? ", " : "", ps[i].info.name);
    if (ml)
        return cli_usage("run", "missing --arg for parameter%s %s; kernel '%s' takes: %s",
                         strchr(missing, ',') ? "s" : "", missing, kname, list);
    return CLI_OK;
}

static int launch_config(const run_opts* o, const param_slot* ps, uint32_t np, hg_launch_config* cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->block.x = 256; cfg->block.y = 1; cfg->block.z = 1;
    if (o->block && !cli_parse_dim3(o->block, &cfg->block))
        return cli_usage("run", "--block expects X[,Y[,Z]] with positive integers, got '%s'", o->block);
    uint64_t block_lanes = (uint64_t)cfg->block.x * cfg->block.y * cfg->block.z;
    if (block_lanes > HG_MAX_BLOCK_LANES)
        return cli_usage("run", "--block %s has %llu lanes; a block has at most %u (x*y*z)",
                         o->block, (unsigned long long)block_lanes, HG_MAX_BLOCK_LANES);
    if (o->shared) {
        uint64_t s;
        if (!cli_parse_u64(o->shared, UINT32_MAX, &s))
            return cli_usage("run", "--shared expects a byte count, got '%s'", o->shared);
        cfg->shared_bytes = (uint32_t)s;
    }
    if (o->grid && strcmp(o->grid, "auto") != 0) {
        if (!cli_parse_dim3(o->grid, &cfg->grid))
            return cli_usage("run", "--grid expects X[,Y[,Z]] with positive integers or 'auto', got '%s'",
                             o->grid);
        return CLI_OK;
    }
    if (cfg->block.y != 1 || cfg->block.z != 1)
        return cli_usage("run", "--grid auto needs a 1-D --block; give --grid X,Y[,Z] explicitly");
    uint32_t i = 0;
    while (i < np && ps[i].info.kind != HG_PARAM_BUFFER) i++;
    if (i == np) return cli_usage("run", "--grid auto needs a buffer argument to size the grid; give --grid");
    uint64_t g = (ps[i].count + cfg->block.x - 1) / cfg->block.x;
    if (g == 0) g = 1;
    if (g > UINT32_MAX) return cli_usage("run", "--grid auto: %llu blocks exceed the u32 grid limit",
                                         (unsigned long long)g);
    cfg->grid.x = (uint32_t)g; cfg->grid.y = 1; cfg->grid.z = 1;
    return CLI_OK;
}

static hg_status create_executor(const run_opts* o, hg_executor* ex, int* usage_err) {
    hg_executor_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = HG_BACKEND_AUTO;
    *usage_err = 0;
    if (o->backend) {
        hg_status st = hg_backend_from_name(o->backend, &opt.backend);
        if (st != HG_OK) { *usage_err = 1; return st; }
    }
    if (o->threads) {
        uint64_t t;
        if (!cli_parse_u64(o->threads, 4096, &t)) { *usage_err = 2; return HG_ERR_INVALID_ARGUMENT; }
        opt.num_threads = (int)t;
    }
    return hg_executor_create_ex(&opt, ex);
}

int cmd_run(int argc, char** argv) {
    static run_opts o;   // large (bindings); static keeps it off the stack
    memset(&o, 0, sizeof o);
    int help = 0;
    int rc = parse_opts(argc, argv, &o, &help);
    if (help) { fputs(k_help, stdout); return CLI_OK; }
    if (rc != CLI_OK) return rc;

    char err[600];
    size_t len = 0;
    char* text = cli_read_file(o.path, &len, err, sizeof err);
    if (!text) return cli_fail("run", "%s", err);
    hg_program prog;
    hg_status st = hg_program_parse(text, len, &prog);
    free(text);
    if (st != HG_OK) {
        char what[600];
        snprintf(what, sizeof what, "%s is not a valid program", o.path);
        return cli_hg_fail("run", st, what);
    }
    const char* kname = "?";
    hg_program_name(prog, &kname);
    uint32_t np = 0;
    hg_program_param_count(prog, &np);
    param_slot* ps = calloc(np ? np : 1, sizeof *ps);
    hg_arg* args = calloc(np ? np : 1, sizeof *args);
    hg_executor ex = {0};
    int have_ex = 0;
    if (!ps || !args) { rc = cli_fail("run", "out of memory"); goto done; }
    for (uint32_t i = 0; i < np; i++) {
        st = hg_program_param(prog, i, &ps[i].info);
        if (st != HG_OK) { rc = cli_hg_fail("run", st, "reading the program's parameters"); goto done; }
    }
    if ((rc = match_bindings(&o, ps, np, kname)) != CLI_OK) goto done;

    int usage_err = 0;
    st = create_executor(&o, &ex, &usage_err);
    if (st != HG_OK) {
        if (usage_err == 2) rc = cli_usage("run", "--threads expects a thread count, got '%s'", o.threads);
        else if (usage_err) rc = cli_usage("run", "--backend: %s", hg_last_error());
        else rc = cli_hg_fail("run", st, "creating the executor");
        goto done;
    }
    have_ex = 1;

    for (uint32_t i = 0; i < np; i++) {
        param_slot* p = &ps[i];
        if (p->info.kind == HG_PARAM_BUFFER) {
            if ((rc = bind_buffer(ex, p, o.bf16_as_u16)) != CLI_OK) goto done;
            args[i] = hg_arg_buffer(p->buf);
        } else {
            uint64_t bits;
            if (!parse_scalar(p->value, p->info.dtype, &bits, err, sizeof err)) {
                rc = cli_usage("run", "--arg %s (%s): %s", p->info.name, hg_dtype_name(p->info.dtype), err);
                goto done;
            }
            args[i] = hg_arg_scalar(p->info.dtype, bits);
        }
    }
    // Refuse bf16 outputs that could not be written before spending time on the run.
    for (uint32_t i = 0; i < np; i++)
        if (ps[i].out_path && ps[i].info.dtype == HG_DTYPE_BF16 && !o.bf16_as_u16) {
            rc = cli_usage("run", "--out %s: .npy has no bfloat16 dtype; add --bf16-as-u16 to write the "
                           "raw bits as '<u2'", ps[i].info.name);
            goto done;
        }

    hg_launch_config cfg;
    if ((rc = launch_config(&o, ps, np, &cfg)) != CLI_OK) goto done;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = hg_launch(ex, prog, &cfg, args, np);
    if (st == HG_OK) st = hg_executor_synchronize(ex);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st != HG_OK) {
        char what[160];
        snprintf(what, sizeof what, "launch of '%s' (grid %u,%u,%u block %u,%u,%u) failed", kname,
                 cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x, cfg.block.y, cfg.block.z);
        rc = cli_hg_fail("run", st, what);
        goto done;
    }
    if (o.time)
        fprintf(stderr, "%s: %.3f ms (grid %u,%u,%u block %u,%u,%u)\n", kname,
                (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6,
                cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x, cfg.block.y, cfg.block.z);
    for (uint32_t i = 0; i < np; i++)
        if (ps[i].out_path && (rc = write_output(&ps[i], o.bf16_as_u16)) != CLI_OK) goto done;
    rc = CLI_OK;

done:
    if (ps)
        for (uint32_t i = 0; i < np; i++)
            if (ps[i].have_buf) hg_buffer_destroy(ps[i].buf);
    if (have_ex) hg_executor_destroy(ex);
    free(ps);
    free(args);
    hg_program_destroy(prog);
    return rc;
}
