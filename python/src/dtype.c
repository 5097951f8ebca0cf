// dtype mapping between hologram, numpy and PEP 3118 format strings.
#include <string.h>
#include "hgpy.h"

static PyObject* g_numpy = NULL;
static PyObject* g_np_dtypes[HG_DTYPE_COUNT];

// sizeof(long) is 8 on LP64 (Linux, macOS): numpy's int64 is 'l' there, 'q' elsewhere.
#define I64_FMT (sizeof(long) == 8 ? "l" : "q")
#define U64_FMT (sizeof(long) == 8 ? "L" : "Q")

const char* hgpy_format(hg_dtype dt) {
    switch (dt) {
    case HG_DTYPE_BOOL: return "?";
    case HG_DTYPE_I8: return "b";
    case HG_DTYPE_I16: return "h";
    case HG_DTYPE_I32: return "i";
    case HG_DTYPE_I64: return I64_FMT;
    case HG_DTYPE_U8: return "B";
    case HG_DTYPE_U16: return "H";
    case HG_DTYPE_U32: return "I";
    case HG_DTYPE_U64: return U64_FMT;
    case HG_DTYPE_F16: return "e";
    case HG_DTYPE_BF16: return "H";   // raw bfloat16 bits: PEP 3118 has no bfloat16
    case HG_DTYPE_F32: return "f";
    case HG_DTYPE_F64: return "d";
    default: return NULL;
    }
}

const char* hgpy_typestr(hg_dtype dt) {
    static const char* const t[HG_DTYPE_COUNT] = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2",
                                                  "<u4", "<u8", "<f2", "<u2", "<f4", "<f8"};
    return (unsigned)dt < HG_DTYPE_COUNT ? t[dt] : NULL;
}

int hgpy_dtype_from_format(const char* f, Py_ssize_t itemsize) {
    if (!f) return HG_DTYPE_U8;   // PEP 3118: NULL format means unsigned bytes
    while (*f == '@' || *f == '=' || *f == '<' || *f == '^') f++;
    if (*f == '>' || *f == '!') return -1;   // big-endian data: not ours
    if (!f[0] || f[1]) return -1;            // one plain item only
    switch (f[0]) {
    case '?': return itemsize == 1 ? HG_DTYPE_BOOL : -1;
    case 'e': return itemsize == 2 ? HG_DTYPE_F16 : -1;
    case 'f': return itemsize == 4 ? HG_DTYPE_F32 : -1;
    case 'd': return itemsize == 8 ? HG_DTYPE_F64 : -1;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
        switch (itemsize) {
        case 1: return HG_DTYPE_I8;
        case 2: return HG_DTYPE_I16;
        case 4: return HG_DTYPE_I32;
        case 8: return HG_DTYPE_I64;
        default: return -1;
        }
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
        switch (itemsize) {
        case 1: return HG_DTYPE_U8;
        case 2: return HG_DTYPE_U16;
        case 4: return HG_DTYPE_U32;
        case 8: return HG_DTYPE_U64;
        default: return -1;
        }
    default: return -1;
    }
}

PyObject* hgpy_numpy(void) { return g_numpy; }

// bf16's numpy dtype: ml_dtypes.bfloat16 when that package imports, else uint16 (the raw
// bits). Looked up on first use rather than at import: importing ml_dtypes takes ~70 ms.
static PyObject* g_bf16 = NULL;

static PyObject* bf16_lookup(void) {
    PyObject* d = NULL;
    PyObject* mod = PyImport_ImportModule("ml_dtypes");
    PyObject* type = mod ? PyObject_GetAttrString(mod, "bfloat16") : NULL;
    PyObject* dtype_fn = type ? PyObject_GetAttrString(g_numpy, "dtype") : NULL;
    if (dtype_fn) d = PyObject_CallOneArg(dtype_fn, type);
    Py_XDECREF(dtype_fn);
    Py_XDECREF(type);
    Py_XDECREF(mod);
    if (!d) {
        PyErr_Clear();   // no ml_dtypes (or a broken one): the uint16 view
        d = Py_NewRef(g_np_dtypes[HG_DTYPE_BF16]);
    }
    return d;
}

PyObject* hgpy_numpy_dtype(hg_dtype dt) {
    if (dt == HG_DTYPE_BF16) {
        if (!g_bf16) {
            PyObject* d = bf16_lookup();   // the import may let another thread set it first
            if (g_bf16) Py_DECREF(d);
            else g_bf16 = d;
        }
        return g_bf16;
    }
    return (unsigned)dt < HG_DTYPE_COUNT ? g_np_dtypes[dt] : NULL;
}

int hgpy_bf16_is_ml_dtypes(void) {
    return hgpy_numpy_dtype(HG_DTYPE_BF16) != g_np_dtypes[HG_DTYPE_BF16];
}

PyObject* hgpy_reset_bf16(PyObject* self, PyObject* unused) {
    Py_CLEAR(g_bf16);
    Py_RETURN_NONE;
}

// 1 for ml_dtypes.bfloat16 (by its name: ml_dtypes need not be imported here).
static int is_bf16(PyObject* dtype) {
    PyObject* name = PyObject_GetAttrString(dtype, "name");
    int r = name && PyUnicode_Check(name) &&
            PyUnicode_CompareWithASCIIString(name, "bfloat16") == 0;
    Py_XDECREF(name);
    PyErr_Clear();
    return r;
}

// A numpy array of bfloat16 (ml_dtypes) as its uint16 bits (a view), for the paths that read
// arrays through the buffer protocol, which cannot describe bfloat16. Anything else: obj.
// New reference.
PyObject* hgpy_bf16_bits(PyObject* obj) {
    PyObject* d = PyObject_GetAttrString(obj, "dtype");
    if (!d) {
        PyErr_Clear();
        return Py_NewRef(obj);
    }
    int bf16 = is_bf16(d);
    Py_DECREF(d);
    if (!bf16) return Py_NewRef(obj);
    return PyObject_CallMethod(obj, "view", "O", g_np_dtypes[HG_DTYPE_U16]);
}

int hgpy_dtype_init(void) {
    g_numpy = PyImport_ImportModule("numpy");
    if (!g_numpy) return -1;
    PyObject* dtype_fn = PyObject_GetAttrString(g_numpy, "dtype");
    if (!dtype_fn) return -1;
    for (int i = 0; i < HG_DTYPE_COUNT; i++) {
        g_np_dtypes[i] = PyObject_CallFunction(dtype_fn, "s", hgpy_typestr((hg_dtype)i));
        if (!g_np_dtypes[i]) {
            Py_DECREF(dtype_fn);
            return -1;
        }
    }
    Py_DECREF(dtype_fn);
    return 0;
}

static const char* const k_valid =
    "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, "
    "float32, float64 (numpy dtypes, their types, or names such as 'f32', 'bf16')";

int hgpy_dtype_from_object(PyObject* spec, hg_dtype* out) {
    if (spec == NULL || spec == Py_None) {
        *out = HG_DTYPE_F32;
        return 0;
    }
    if (PyUnicode_Check(spec)) {
        const char* name = PyUnicode_AsUTF8(spec);
        if (!name) return -1;
        hg_dtype dt;
        if (hg_dtype_from_name(name, &dt) == HG_OK) {
            *out = dt;
            return 0;
        }
        if (!strcmp(name, "bfloat16")) {
            *out = HG_DTYPE_BF16;
            return 0;
        }
        hg_clear_error();
    }
    // Everything else through numpy.dtype (np.float32, np.dtype('<i8'), 'int32', bool, ...).
    PyObject* dtype_fn = PyObject_GetAttrString(g_numpy, "dtype");
    if (!dtype_fn) return -1;
    PyObject* d = PyObject_CallOneArg(dtype_fn, spec);
    Py_DECREF(dtype_fn);
    if (!d) {
        PyErr_Clear();
        PyObject* r = PyObject_Repr(spec);
        hgpy_raise_msg(HG_ERR_DTYPE_MISMATCH, "unsupported dtype %s; expected one of %s",
                       r ? PyUnicode_AsUTF8(r) : "?", k_valid);
        Py_XDECREF(r);
        return -1;
    }
    for (int i = 0; i < HG_DTYPE_COUNT; i++) {
        if (i == HG_DTYPE_BF16) continue;   // uint16 storage: never the answer for a numpy dtype
        int eq = PyObject_RichCompareBool(d, g_np_dtypes[i], Py_EQ);
        if (eq < 0) {
            Py_DECREF(d);
            return -1;
        }
        if (eq) {
            Py_DECREF(d);
            *out = (hg_dtype)i;
            return 0;
        }
    }
    if (is_bf16(d)) {   // ml_dtypes.bfloat16
        Py_DECREF(d);
        *out = HG_DTYPE_BF16;
        return 0;
    }
    PyObject* r = PyObject_Repr(d);
    hgpy_raise_msg(HG_ERR_DTYPE_MISMATCH, "unsupported dtype %s; expected one of %s",
                   r ? PyUnicode_AsUTF8(r) : "?", k_valid);
    Py_XDECREF(r);
    Py_DECREF(d);
    return -1;
}
