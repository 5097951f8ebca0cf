// The program IR: construction, copy and comparison (internal), independent of any format.
#include "isa/program.h"
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"

bool hg_name_is_identifier(const char* name) {
    if (!name || !name[0]) return false;
    size_t n = strlen(name);
    if (n >= HG_NAME_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!(alpha || (i > 0 && digit))) return false;
    }
    return true;
}

hg_prog* hg_prog_new(const char* name) {
    if (!hg_name_is_identifier(name)) {
        hg_error(HG_ERR_INVALID_ARGUMENT,
                 "program name '%s' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, at most %d chars)",
                 name ? name : "(null)", HG_NAME_MAX - 1);
        return NULL;
    }
    hg_prog* p = calloc(1, sizeof *p);
    if (!p) {
        hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory creating program '%s'", name);
        return NULL;
    }
    memcpy(p->name, name, strlen(name) + 1);
    return p;
}

void hg_prog_free(hg_prog* p) {
    if (!p) return;
    free(p->params);
    free(p->shared);
    free(p->regs);
    free(p->instrs);
    free(p);
}

// Grows an array to hold one more element of `size` bytes.
static bool grow(void** arr, uint32_t* cap, uint32_t n, size_t size) {
    if (n < *cap) return true;
    uint32_t nc = *cap ? *cap * 2 : 8;
    void* q = realloc(*arr, (size_t)nc * size);
    if (!q) return false;
    *arr = q;
    *cap = nc;
    return true;
}

static void* dup_array(const void* src, uint32_t n, size_t size, bool* ok) {
    if (n == 0) return NULL;
    void* d = malloc((size_t)n * size);
    if (!d) { *ok = false; return NULL; }
    memcpy(d, src, (size_t)n * size);
    return d;
}

hg_prog* hg_prog_clone(const hg_prog* p) {
    hg_prog* c = calloc(1, sizeof *c);
    bool ok = c != NULL;
    if (ok) {
        memcpy(c->name, p->name, sizeof c->name);
        c->params = dup_array(p->params, p->nparams, sizeof *p->params, &ok);
        c->shared = dup_array(p->shared, p->nshared, sizeof *p->shared, &ok);
        c->regs = dup_array(p->regs, p->nregs, sizeof *p->regs, &ok);
        c->instrs = dup_array(p->instrs, p->ninstrs, sizeof *p->instrs, &ok);
        c->nparams = c->cap_params = p->nparams;
        c->nshared = c->cap_shared = p->nshared;
        c->nregs = c->cap_regs = p->nregs;
        c->ninstrs = c->cap_instrs = p->ninstrs;
    }
    if (!ok) {
        hg_prog_free(c);
        hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory copying program '%s'", p->name);
        return NULL;
    }
    return c;
}

static bool operand_equal(const hg_operand* a, const hg_operand* b) {
    return a->kind == b->kind && a->index == b->index && a->bits == b->bits;
}

bool hg_prog_equal(const hg_prog* a, const hg_prog* b) {
    if (strcmp(a->name, b->name) != 0 || a->nparams != b->nparams || a->nshared != b->nshared ||
        a->nregs != b->nregs || a->ninstrs != b->ninstrs)
        return false;
    for (uint32_t i = 0; i < a->nparams; i++) {
        const hg_param_decl *x = &a->params[i], *y = &b->params[i];
        if (strcmp(x->name, y->name) || x->kind != y->kind || x->dtype != y->dtype ||
            x->is_const != y->is_const)
            return false;
    }
    for (uint32_t i = 0; i < a->nshared; i++) {
        const hg_shared_decl *x = &a->shared[i], *y = &b->shared[i];
        if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->count != y->count) return false;
    }
    for (uint32_t i = 0; i < a->nregs; i++)
        if (strcmp(a->regs[i].name, b->regs[i].name) || a->regs[i].dtype != b->regs[i].dtype)
            return false;
    for (uint32_t i = 0; i < a->ninstrs; i++) {
        const hg_instr *x = &a->instrs[i], *y = &b->instrs[i];
        if (x->op != y->op || x->type != y->type || x->aux != y->aux || x->mem != y->mem ||
            !operand_equal(&x->dst, &y->dst))
            return false;
        for (int k = 0; k < 3; k++)
            if (!operand_equal(&x->src[k], &y->src[k])) return false;
    }
    return true;
}

// Names share one namespace across params, shared arrays and registers.
static bool name_taken(const hg_prog* p, const char* name) {
    for (uint32_t i = 0; i < p->nparams; i++)
        if (!strcmp(p->params[i].name, name)) return true;
    for (uint32_t i = 0; i < p->nshared; i++)
        if (!strcmp(p->shared[i].name, name)) return true;
    for (uint32_t i = 0; i < p->nregs; i++)
        if (!strcmp(p->regs[i].name, name)) return true;
    return false;
}

static hg_status check_decl(const hg_prog* p, const char* what, const char* name, int dtype) {
    if (!hg_name_is_identifier(name))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s name '%s' is not an identifier", what,
                        name ? name : "(null)");
    if (name_taken(p, name))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s name '%s' is already declared in kernel '%s'",
                        what, name, p->name);
    if (!hg_dtype_valid(dtype))
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s '%s': dtype %d is not a valid hg_dtype", what,
                        name, dtype);
    return HG_OK;
}

hg_status hg_prog_add_param(hg_prog* p, const char* name, hg_param_kind kind, hg_dtype dtype,
                            int is_const, uint32_t* out) {
    hg_status s = check_decl(p, "parameter", name, (int)dtype);
    if (s) return s;
    if (kind != HG_PARAM_BUFFER && kind != HG_PARAM_SCALAR)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "parameter '%s': kind %d is not BUFFER or SCALAR",
                        name, (int)kind);
    if (p->nparams >= HG_MAX_PARAMS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "kernel '%s' has more than %d parameters", p->name,
                        HG_MAX_PARAMS);
    if (!grow((void**)&p->params, &p->cap_params, p->nparams, sizeof *p->params))
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory adding parameter '%s'", name);
    hg_param_decl* d = &p->params[p->nparams];
    memset(d, 0, sizeof *d);
    memcpy(d->name, name, strlen(name) + 1);
    d->kind = (uint8_t)kind;
    d->dtype = (uint8_t)dtype;
    d->is_const = (uint8_t)(kind == HG_PARAM_BUFFER && is_const);
    if (out) *out = p->nparams;
    p->nparams++;
    return HG_OK;
}

hg_status hg_prog_add_shared(hg_prog* p, const char* name, hg_dtype dtype, uint32_t count,
                             uint32_t* out) {
    hg_status s = check_decl(p, "shared array", name, (int)dtype);
    if (s) return s;
    if (p->nshared >= HG_MAX_SHARED_ARRAYS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "kernel '%s' has more than %d shared arrays",
                        p->name, HG_MAX_SHARED_ARRAYS);
    if (!grow((void**)&p->shared, &p->cap_shared, p->nshared, sizeof *p->shared))
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory adding shared array '%s'", name);
    hg_shared_decl* d = &p->shared[p->nshared];
    memset(d, 0, sizeof *d);
    memcpy(d->name, name, strlen(name) + 1);
    d->dtype = (uint8_t)dtype;
    d->count = count;
    if (out) *out = p->nshared;
    p->nshared++;
    return HG_OK;
}

hg_status hg_prog_add_reg(hg_prog* p, const char* name, hg_dtype dtype, uint32_t* out) {
    hg_status s = check_decl(p, "register", name, (int)dtype);
    if (s) return s;
    if (p->nregs >= HG_MAX_REGS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "kernel '%s' has more than %d registers", p->name,
                        HG_MAX_REGS);
    if (!grow((void**)&p->regs, &p->cap_regs, p->nregs, sizeof *p->regs))
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory adding register '%s'", name);
    hg_reg_decl* d = &p->regs[p->nregs];
    memset(d, 0, sizeof *d);
    memcpy(d->name, name, strlen(name) + 1);
    d->dtype = (uint8_t)dtype;
    if (out) *out = p->nregs;
    p->nregs++;
    return HG_OK;
}

hg_status hg_prog_emit(hg_prog* p, const hg_instr* ins) {
    if (p->ninstrs >= HG_MAX_INSTRS)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "kernel '%s' has more than %u instructions",
                        p->name, HG_MAX_INSTRS);
    if (!grow((void**)&p->instrs, &p->cap_instrs, p->ninstrs, sizeof *p->instrs))
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory adding an instruction to '%s'",
                        p->name);
    p->instrs[p->ninstrs++] = *ins;
    return HG_OK;
}
