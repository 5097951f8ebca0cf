// The dtype table: names, sizes and the name parser (our names plus numpy's spellings).
#include <string.h>
#include "base/dtype.h"
#include "base/error.h"

typedef struct dtype_row {
    const char* name;
    size_t size;
} dtype_row;

static const dtype_row dtype_rows[HG_DTYPE_COUNT] = {
    [HG_DTYPE_BOOL] = {"bool", 1}, [HG_DTYPE_I8] = {"i8", 1},     [HG_DTYPE_I16] = {"i16", 2},
    [HG_DTYPE_I32] = {"i32", 4},   [HG_DTYPE_I64] = {"i64", 8},   [HG_DTYPE_U8] = {"u8", 1},
    [HG_DTYPE_U16] = {"u16", 2},   [HG_DTYPE_U32] = {"u32", 4},   [HG_DTYPE_U64] = {"u64", 8},
    [HG_DTYPE_F16] = {"f16", 2},   [HG_DTYPE_BF16] = {"bf16", 2}, [HG_DTYPE_F32] = {"f32", 4},
    [HG_DTYPE_F64] = {"f64", 8},
};
_Static_assert(sizeof(dtype_rows) / sizeof(dtype_rows[0]) == HG_DTYPE_COUNT, "one row per dtype");

// numpy / PyTorch spellings users type (np.dtype(...).name and the common aliases).
typedef struct dtype_alias {
    const char* name;
    hg_dtype dtype;
} dtype_alias;

static const dtype_alias aliases[] = {
    {"bool_", HG_DTYPE_BOOL},     {"int8", HG_DTYPE_I8},       {"int16", HG_DTYPE_I16},
    {"int32", HG_DTYPE_I32},      {"int64", HG_DTYPE_I64},     {"uint8", HG_DTYPE_U8},
    {"uint16", HG_DTYPE_U16},     {"uint32", HG_DTYPE_U32},    {"uint64", HG_DTYPE_U64},
    {"float16", HG_DTYPE_F16},    {"half", HG_DTYPE_F16},      {"bfloat16", HG_DTYPE_BF16},
    {"float32", HG_DTYPE_F32},    {"float", HG_DTYPE_F32},     {"float64", HG_DTYPE_F64},
    {"double", HG_DTYPE_F64},
};

const char* hg_dtype_name(hg_dtype dtype) {
    return hg_dtype_valid((int)dtype) ? dtype_rows[dtype].name : NULL;
}

size_t hg_dtype_size(hg_dtype dtype) {
    return hg_dtype_valid((int)dtype) ? dtype_rows[dtype].size : 0;
}

hg_status hg_dtype_from_name(const char* name, hg_dtype* out) {
    HG_CHECK_NULL(name, "name");
    HG_CHECK_NULL(out, "out");
    for (int t = 0; t < HG_DTYPE_COUNT; t++)
        if (!strcmp(name, dtype_rows[t].name)) {
            *out = (hg_dtype)t;
            return HG_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].name)) {
            *out = aliases[i].dtype;
            return HG_OK;
        }
    return hg_error(HG_ERR_INVALID_ARGUMENT,
                    "unknown dtype name '%s' (expected one of bool i8 i16 i32 i64 u8 u16 u32 u64 "
                    "f16 bf16 f32 f64, or a numpy name such as float32, int64, bool_)",
                    name);
}
