"""A minimal DLPack consumer written with ctypes, to inspect capsules and count deleter calls."""
import ctypes
from ctypes import POINTER, Structure, c_char_p, c_int, c_int32, c_int64, c_uint8, c_uint16, \
    c_uint32, c_uint64, c_void_p, py_object


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int32),
                ("dtype", DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", c_void_p), ("deleter", c_void_p),
                ("flags", c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


_api = ctypes.pythonapi
_api.PyCapsule_GetName.restype = c_char_p
_api.PyCapsule_GetName.argtypes = [py_object]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [py_object, c_char_p]
_api.PyCapsule_SetName.restype = c_int
_api.PyCapsule_SetName.argtypes = [py_object, c_void_p]

# PyCapsule_SetName keeps the pointer: these must live as long as the capsules.
USED_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")
USED = ctypes.create_string_buffer(b"used_dltensor")
_DELETER = ctypes.CFUNCTYPE(None, c_void_p)


def capsule_name(cap):
    return _api.PyCapsule_GetName(cap).decode()


def open_capsule(cap):
    """Returns the managed tensor struct (versioned or not) without consuming the capsule."""
    name = capsule_name(cap)
    ptr = _api.PyCapsule_GetPointer(cap, name.encode())
    cls = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    return name, ptr, cls.from_address(ptr)


def consume(cap):
    """Takes ownership as a consumer does: renames the capsule and returns a function that calls
    the producer's deleter."""
    name, ptr, mt = open_capsule(cap)
    _api.PyCapsule_SetName(cap, ctypes.addressof(USED_VERSIONED if name == "dltensor_versioned"
                                                 else USED))
    deleter = _DELETER(mt.deleter)
    return mt, lambda: deleter(ptr)
