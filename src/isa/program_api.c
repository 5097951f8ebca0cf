// The public program API over handles: building, introspection, validation, text and binary
// forms, hashing. The work is done by the internal hg_prog_* functions.
#include <stdlib.h>
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"
#include "base/handles.h"
#include "isa/program.h"

// ---------------------------------------------------------------------------------------------
// Immediate operand constructors
// ---------------------------------------------------------------------------------------------
hg_operand hg_imm_i64(int64_t v) { return hg_imm_bits((uint64_t)v); }
hg_operand hg_imm_u64(uint64_t v) { return hg_imm_bits(v); }
hg_operand hg_imm_f32(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return hg_imm_bits(u);
}
hg_operand hg_imm_f64(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return hg_imm_bits(u);
}
hg_operand hg_imm_f16(float v) { return hg_imm_bits(hg_f32_to_f16(v)); }
hg_operand hg_imm_bf16(float v) { return hg_imm_bits(hg_f32_to_bf16(v)); }
hg_operand hg_imm_bool(int v) { return hg_imm_bits(v != 0); }

// ---------------------------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------------------------
hg_prog* hg_prog_from_handle(hg_program h) {
    return hg_handle_resolve(h.handle, HG_HANDLE_PROGRAM, "program");
}

static hg_prog* resolve(hg_program h, const char* what) {
    return hg_handle_resolve(h.handle, HG_HANDLE_PROGRAM, what);
}

// Gives p a handle, or frees it.
static hg_status publish(hg_prog* p, hg_program* out) {
    uint64_t h = hg_handle_insert(HG_HANDLE_PROGRAM, p);
    if (!h) {
        hg_prog_free(p);
        return hg_error(HG_ERR_OUT_OF_MEMORY, "out of memory registering a program handle");
    }
    out->handle = h;
    return HG_OK;
}

hg_status hg_program_create(const char* name, hg_program* out) {
    HG_CHECK_NULL(name, "name");
    HG_CHECK_NULL(out, "out");
    hg_prog* p = hg_prog_new(name);  // sets the message on failure
    if (!p) return hg_name_is_identifier(name) ? HG_ERR_OUT_OF_MEMORY : HG_ERR_INVALID_ARGUMENT;
    return publish(p, out);
}

hg_status hg_program_destroy(hg_program h) {
    if (!resolve(h, "hg_program_destroy")) return HG_ERR_INVALID_HANDLE;
    hg_prog* p = hg_handle_remove(h.handle, HG_HANDLE_PROGRAM);
    if (!p)
        return hg_error(HG_ERR_INVALID_HANDLE,
                        "hg_program_destroy: program handle 0x%016llx was destroyed concurrently",
                        (unsigned long long)h.handle);
    hg_prog_free(p);
    return HG_OK;
}

// ---------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------
hg_status hg_program_add_buffer_param(hg_program h, const char* name, hg_dtype dtype,
                                      int is_const, uint32_t* out_index) {
    hg_prog* p = resolve(h, "hg_program_add_buffer_param");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(name, "name");
    return hg_prog_add_param(p, name, HG_PARAM_BUFFER, dtype, is_const, out_index);
}

hg_status hg_program_add_scalar_param(hg_program h, const char* name, hg_dtype dtype,
                                      uint32_t* out_index) {
    hg_prog* p = resolve(h, "hg_program_add_scalar_param");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(name, "name");
    return hg_prog_add_param(p, name, HG_PARAM_SCALAR, dtype, 0, out_index);
}

hg_status hg_program_add_shared(hg_program h, const char* name, hg_dtype dtype, uint32_t count,
                                uint32_t* out_index) {
    hg_prog* p = resolve(h, "hg_program_add_shared");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(name, "name");
    return hg_prog_add_shared(p, name, dtype, count, out_index);
}

hg_status hg_program_add_reg(hg_program h, const char* name, hg_dtype dtype, uint32_t* out_index) {
    hg_prog* p = resolve(h, "hg_program_add_reg");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(name, "name");
    return hg_prog_add_reg(p, name, dtype, out_index);
}

// The dtype a value operand slot holds, or -1 when it is not known here (index operands).
static int slot_type(const hg_instr* in, unsigned role) {
    switch (role) {
    case HG_ROLE_T:
    case HG_ROLE_OPT_T: return in->type;
    case HG_ROLE_BOOL:
    case HG_ROLE_OPT_BOOL: return HG_DTYPE_BOOL;
    case HG_ROLE_SRC_T: return in->aux;
    case HG_ROLE_U32: return HG_DTYPE_U32;
    default: return -1;
    }
}

// hg_imm_i64(-1) gives 64 one bits whatever the operand's type; the IR stores an immediate as
// the raw bits of its value in the operand's own type, so integer immediates are truncated to
// that type here (the text parser produces the same bits, so built and parsed programs are
// equal and hash equally).
static void canonical_imm(const hg_instr* in, unsigned role, hg_operand* o) {
    if (o->kind != HG_OPERAND_IMM) return;
    int t = slot_type(in, role);
    if (!hg_dtype_valid(t)) return;
    if (t == HG_DTYPE_BOOL) o->bits = o->bits != 0;
    else if (hg_dtype_is_int(t) && hg_dtype_bits(t) < 64)
        o->bits &= (UINT64_C(1) << hg_dtype_bits(t)) - 1;
}

hg_status hg_program_emit(hg_program h, const hg_instr* instr) {
    hg_prog* p = resolve(h, "hg_program_emit");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(instr, "instr");
    hg_instr in = *instr;
    const hg_opinfo* info = hg_opinfo_of(in.op);
    if (info) {
        unsigned dst_role = info->dst;
        canonical_imm(&in, dst_role, &in.dst);
        for (int k = 0; k < 3; k++) {
            unsigned role = info->src[k];
            // atom cas: compare and new value (src[1], src[2]) both have the instruction's type.
            if (in.op == HG_OP_ATOM && k == 2) role = HG_ROLE_T;
            canonical_imm(&in, role, &in.src[k]);
        }
    }
    return hg_prog_emit(p, &in);
}

static hg_status check_op(hg_opcode op, const char* fn) {
    if ((unsigned)op >= HG_OPCODE_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: opcode %d is not a valid hg_opcode (0..%d)",
                        fn, (int)op, HG_OPCODE_COUNT - 1);
    return HG_OK;
}

// The declared type of a register or scalar parameter operand, or -1.
static int operand_type(const hg_prog* p, hg_operand a) {
    if (a.kind == HG_OPERAND_REG && a.index < p->nregs) return p->regs[a.index].dtype;
    if (a.kind == HG_OPERAND_PARAM && a.index < p->nparams) return p->params[a.index].dtype;
    if (a.kind == HG_OPERAND_SPECIAL) return HG_DTYPE_U32;
    return -1;
}

static hg_instr make(hg_opcode op, hg_dtype type) {
    hg_instr in;
    memset(&in, 0, sizeof in);
    in.op = (uint16_t)op;
    in.type = (uint8_t)type;
    return in;
}

hg_status hg_emit_unary(hg_program h, hg_opcode op, hg_dtype type, uint32_t dst, hg_operand a) {
    hg_prog* p = resolve(h, "hg_emit_unary");
    if (!p) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_op(op, "hg_emit_unary");
    if (s) return s;
    const hg_opinfo* info = hg_opinfo_of(op);
    if (info->dst != HG_ROLE_T || info->src[0] == HG_ROLE_NONE || info->src[1] != HG_ROLE_NONE ||
        info->op_class == HG_CLASS_MEMORY)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_emit_unary: '%s' is not a unary instruction (d = op a); use "
                        "hg_program_emit",
                        info->name);
    hg_instr in = make(op, type);
    in.dst = hg_reg(dst);
    in.src[0] = a;
    if (op == HG_OP_CVT) {
        // cvt's source type is the type of its operand; an immediate has none of its own.
        int st = operand_type(p, a);
        if (st < 0)
            return hg_error(HG_ERR_INVALID_ARGUMENT,
                            "hg_emit_unary: cvt needs a register, parameter or special register "
                            "operand to know the source type; use hg_program_emit with aux set");
        in.aux = (uint8_t)st;
    }
    return hg_program_emit(h, &in);
}

hg_status hg_emit_binary(hg_program h, hg_opcode op, hg_dtype type, uint32_t dst, hg_operand a,
                         hg_operand b) {
    hg_prog* p = resolve(h, "hg_emit_binary");
    if (!p) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_op(op, "hg_emit_binary");
    if (s) return s;
    const hg_opinfo* info = hg_opinfo_of(op);
    if (info->op_class != HG_CLASS_ARITH || info->src[1] == HG_ROLE_NONE ||
        info->src[2] != HG_ROLE_NONE)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_emit_binary: '%s' is not a binary instruction (d = a op b)%s",
                        info->name, op == HG_OP_CMP ? "; use hg_emit_cmp" : "; use hg_program_emit");
    hg_instr in = make(op, type);
    in.dst = hg_reg(dst);
    in.src[0] = a;
    in.src[1] = b;
    return hg_program_emit(h, &in);
}

hg_status hg_emit_cmp(hg_program h, hg_cmp cond, hg_dtype type, uint32_t dst, hg_operand a,
                      hg_operand b) {
    if (!resolve(h, "hg_emit_cmp")) return HG_ERR_INVALID_HANDLE;
    if ((unsigned)cond >= HG_CMP_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_emit_cmp: condition %d is not a hg_cmp (0..%d)",
                        (int)cond, HG_CMP_COUNT - 1);
    hg_instr in = make(HG_OP_CMP, type);
    in.aux = (uint8_t)cond;
    in.dst = hg_reg(dst);
    in.src[0] = a;
    in.src[1] = b;
    return hg_program_emit(h, &in);
}

static hg_status check_space(hg_space space, const char* fn) {
    if ((unsigned)space >= HG_SPACE_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: space %d is not a hg_space (global=0, shared=1)",
                        fn, (int)space);
    return HG_OK;
}

hg_status hg_emit_load(hg_program h, hg_space space, hg_dtype type, uint32_t dst, uint32_t slot,
                       hg_operand index) {
    if (!resolve(h, "hg_emit_load")) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_space(space, "hg_emit_load");
    if (s) return s;
    hg_instr in = make(HG_OP_LD, type);
    in.aux = (uint8_t)space;
    in.mem = slot;
    in.dst = hg_reg(dst);
    in.src[0] = index;
    return hg_program_emit(h, &in);
}

hg_status hg_emit_store(hg_program h, hg_space space, hg_dtype type, uint32_t slot,
                        hg_operand index, hg_operand value) {
    if (!resolve(h, "hg_emit_store")) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_space(space, "hg_emit_store");
    if (s) return s;
    hg_instr in = make(HG_OP_ST, type);
    in.aux = (uint8_t)space;
    in.mem = slot;
    in.src[0] = index;
    in.src[1] = value;
    return hg_program_emit(h, &in);
}

hg_status hg_emit_shfl(hg_program h, hg_shfl_mode mode, hg_dtype type, uint32_t dst,
                       hg_operand a, hg_operand lane) {
    if (!resolve(h, "hg_emit_shfl")) return HG_ERR_INVALID_HANDLE;
    if ((unsigned)mode >= HG_SHFL_COUNT)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_emit_shfl: mode %d is not a hg_shfl_mode "
                        "(bfly=0, down=1, up=2, idx=3)", (int)mode);
    hg_instr in = make(HG_OP_SHFL, type);
    in.aux = (uint8_t)mode;
    in.dst = hg_reg(dst);
    in.src[0] = a;
    in.src[1] = lane;
    return hg_program_emit(h, &in);
}

// ldv (the run from reg is the destination) or stv (the run is the value); a width that is not
// 2, 4, 8 or 16 is refused here (the element size bound is the validator's).
static hg_status emit_vector(hg_program h, hg_opcode op, const char* fn, hg_space space,
                             hg_dtype type, uint32_t width, uint32_t slot, hg_operand index,
                             uint32_t reg) {
    if (!resolve(h, fn)) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_space(space, fn);
    if (s) return s;
    if (width != 2 && width != 4 && width != 8 && width != 16)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "%s: width %u is not a vector width, expected 2, "
                        "4, 8 or 16", fn, width);
    hg_instr in = make(op, type);
    in.aux = hg_vec_aux(space, width);
    in.mem = slot;
    in.src[0] = index;
    if (op == HG_OP_LDV) in.dst = hg_reg(reg);
    else in.src[1] = hg_reg(reg);
    return hg_program_emit(h, &in);
}

hg_status hg_emit_load_vector(hg_program h, hg_space space, hg_dtype type, uint32_t width,
                              uint32_t dst, uint32_t slot, hg_operand index) {
    return emit_vector(h, HG_OP_LDV, "hg_emit_load_vector", space, type, width, slot, index, dst);
}

hg_status hg_emit_store_vector(hg_program h, hg_space space, hg_dtype type, uint32_t width,
                               uint32_t slot, hg_operand index, uint32_t src) {
    return emit_vector(h, HG_OP_STV, "hg_emit_store_vector", space, type, width, slot, index, src);
}

hg_status hg_emit_control(hg_program h, hg_opcode op, hg_operand cond) {
    if (!resolve(h, "hg_emit_control")) return HG_ERR_INVALID_HANDLE;
    hg_status s = check_op(op, "hg_emit_control");
    if (s) return s;
    const hg_opinfo* info = hg_opinfo_of(op);
    if (info->op_class != HG_CLASS_CONTROL && op != HG_OP_BAR)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_emit_control: '%s' is not a control instruction (if else endif loop "
                        "endloop break exit bar)",
                        info->name);
    if (info->src[0] == HG_ROLE_NONE && cond.kind != HG_OPERAND_NONE)
        return hg_error(HG_ERR_INVALID_ARGUMENT,
                        "hg_emit_control: '%s' takes no condition (pass hg_none())", info->name);
    if (info->src[0] == HG_ROLE_BOOL && cond.kind == HG_OPERAND_NONE)
        return hg_error(HG_ERR_INVALID_ARGUMENT, "hg_emit_control: '%s' needs a bool condition",
                        info->name);
    hg_instr in = make(op, HG_DTYPE_BOOL);  // untyped instructions carry type 0
    in.src[0] = cond;
    return hg_program_emit(h, &in);
}

// ---------------------------------------------------------------------------------------------
// Introspection
// ---------------------------------------------------------------------------------------------
hg_status hg_program_name(hg_program h, const char** out) {
    hg_prog* p = resolve(h, "hg_program_name");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = p->name;
    return HG_OK;
}

hg_status hg_program_instr_count(hg_program h, uint32_t* out) {
    hg_prog* p = resolve(h, "hg_program_instr_count");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = p->ninstrs;
    return HG_OK;
}

hg_status hg_program_param_count(hg_program h, uint32_t* out) {
    hg_prog* p = resolve(h, "hg_program_param_count");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = p->nparams;
    return HG_OK;
}

hg_status hg_program_param(hg_program h, uint32_t index, hg_param_info* out) {
    hg_prog* p = resolve(h, "hg_program_param");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    if (index >= p->nparams)
        return hg_error(HG_ERR_OUT_OF_RANGE, "hg_program_param: index %u is out of range: kernel "
                        "'%s' has %u parameter%s", index, p->name, p->nparams,
                        p->nparams == 1 ? "" : "s");
    const hg_param_decl* d = &p->params[index];
    out->name = d->name;
    out->kind = (hg_param_kind)d->kind;
    out->dtype = (hg_dtype)d->dtype;
    out->is_const = d->is_const;
    return HG_OK;
}

hg_status hg_program_validate(hg_program h) {
    hg_prog* p = resolve(h, "hg_program_validate");
    if (!p) return HG_ERR_INVALID_HANDLE;
    return hg_prog_validate(p);
}

// ---------------------------------------------------------------------------------------------
// Text and binary forms
// ---------------------------------------------------------------------------------------------
hg_status hg_program_parse(const char* text, size_t len, hg_program* out) {
    HG_CHECK_NULL(text, "text");
    HG_CHECK_NULL(out, "out");
    hg_prog* p = NULL;
    hg_status s = hg_prog_parse(text, len, &p);
    if (s) return s;
    if ((s = hg_prog_validate(p))) {
        hg_prog_free(p);
        return s;
    }
    return publish(p, out);
}

hg_status hg_program_print(hg_program h, char** out_text, size_t* out_len) {
    hg_prog* p = resolve(h, "hg_program_print");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out_text, "out_text");
    size_t len = 0;
    char* text = NULL;
    hg_status s = hg_prog_print(p, &text, &len);
    if (s) return s;
    *out_text = text;
    if (out_len) *out_len = len;  // optional: the text is NUL-terminated
    return HG_OK;
}

hg_status hg_program_save(hg_program h, void** out_bytes, size_t* out_len) {
    hg_prog* p = resolve(h, "hg_program_save");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out_bytes, "out_bytes");
    HG_CHECK_NULL(out_len, "out_len");
    uint8_t* bytes = NULL;
    size_t len = 0;
    hg_status s = hg_prog_save(p, &bytes, &len);
    if (s) return s;
    *out_bytes = bytes;
    *out_len = len;
    return HG_OK;
}

hg_status hg_program_load(const void* bytes, size_t len, hg_program* out) {
    HG_CHECK_NULL(bytes, "bytes");
    HG_CHECK_NULL(out, "out");
    hg_prog* p = NULL;
    hg_status s = hg_prog_load(bytes, len, &p);
    if (s) return s;
    if ((s = hg_prog_validate(p))) {
        hg_prog_free(p);
        return s;
    }
    return publish(p, out);
}

hg_status hg_program_hash(hg_program h, uint64_t* out) {
    hg_prog* p = resolve(h, "hg_program_hash");
    if (!p) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = hg_prog_hash(p);
    return HG_OK;
}

hg_status hg_program_equal(hg_program a, hg_program b, int* out) {
    hg_prog* pa = resolve(a, "hg_program_equal (a)");
    if (!pa) return HG_ERR_INVALID_HANDLE;
    hg_prog* pb = resolve(b, "hg_program_equal (b)");
    if (!pb) return HG_ERR_INVALID_HANDLE;
    HG_CHECK_NULL(out, "out");
    *out = hg_prog_equal(pa, pb) ? 1 : 0;
    return HG_OK;
}
