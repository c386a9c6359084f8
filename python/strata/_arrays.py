"""Arrays of other libraries: NumPy, CuPy, PyTorch, anything with
``__array_interface__``, ``__cuda_array_interface__`` or ``__dlpack__``.

``describe(a)`` tells where an array's memory is (pointer, shape, byte
strides, dtype, device) and, where the library can say, the bounds of the
allocation it lies in: an array is used in place by strata only when the
ghost layers and row padding around it are part of that same allocation.
"""
import ctypes as C
import sys

import numpy as np

# DLPack (dlpack.h, version 0.x ABI, which every producer still exports)
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8),
                ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice),
                ("ndim", C.c_int32), ("dtype", DLDataType),
                ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)),
                ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    pass


DL_DELETER = C.CFUNCTYPE(None, C.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor),
                            ("manager_ctx", C.c_void_p),
                            ("deleter", DL_DELETER)]

_api = C.pythonapi
_api.PyCapsule_New.restype = C.py_object
_api.PyCapsule_New.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
_api.PyCapsule_GetPointer.restype = C.c_void_p
_api.PyCapsule_GetPointer.argtypes = [C.py_object, C.c_char_p]
_api.PyCapsule_SetName.restype = C.c_int
_api.PyCapsule_SetName.argtypes = [C.py_object, C.c_char_p]
_api.PyCapsule_IsValid.restype = C.c_int
_api.PyCapsule_IsValid.argtypes = [C.py_object, C.c_char_p]
CAPSULE_DESTRUCTOR = C.CFUNCTYPE(None, C.c_void_p)
# the same calls on a raw PyObject *, for the capsule's destructor (the
# object is being freed: no new reference may be taken to it)
_raw_is_valid = C.PYFUNCTYPE(C.c_int, C.c_void_p, C.c_char_p)(
    ("PyCapsule_IsValid", C.pythonapi))
_raw_get_pointer = C.PYFUNCTYPE(C.c_void_p, C.c_void_p, C.c_char_p)(
    ("PyCapsule_GetPointer", C.pythonapi))


class Foreign:
    """Where an array's memory is."""

    def __init__(self, obj, ptr, shape, strides, dtype, device, device_id,
                 bounds, kind, keep=None):
        self.obj = obj            # the array itself
        self.ptr = ptr            # address of element [0, 0, 0]
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)  # bytes
        self.dtype = np.dtype(dtype)
        self.device = device      # "cpu" or "cuda"
        self.device_id = device_id
        self.bounds = bounds      # (lo, hi) of its allocation, or None
        self.kind = kind          # "numpy", "cupy", "torch", "cai", "dlpack"
        self.keep = keep          # what must live as long as the memory

    def contiguous(self):
        es, want = self.dtype.itemsize, []
        for s in reversed(self.shape):
            want.insert(0, es)
            es *= s
        return all(s == w or n == 1 for s, w, n in
                   zip(self.strides, want, self.shape))


try:  # NumPy 2 moved it
    from numpy.lib.array_utils import byte_bounds as _byte_bounds
except ImportError:
    _byte_bounds = np.byte_bounds


def _numpy_bounds(a):
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    lo, hi = _byte_bounds(root)
    return lo, hi


def _is_torch(a):
    return type(a).__module__.startswith("torch") and hasattr(a, "untyped_storage")


def _is_cupy(a):
    return type(a).__module__.startswith("cupy")


def describe(a):
    """A Foreign for array a, or None when a is no array strata can read."""
    if isinstance(a, np.ndarray):
        ai = a.__array_interface__
        strides = a.strides
        return Foreign(a, ai["data"][0], a.shape, strides, a.dtype, "cpu", 0,
                       _numpy_bounds(a), "numpy")
    if _is_torch(a):
        if a.device.type == "cpu":
            return describe(a.detach().numpy())
        st = a.untyped_storage()
        es = a.element_size()
        return Foreign(a, a.data_ptr(), tuple(a.shape),
                       tuple(s * es for s in a.stride()),
                       str(a.dtype).replace("torch.", ""), "cuda",
                       a.device.index or 0,
                       (st.data_ptr(), st.data_ptr() + st.nbytes()), "torch")
    if hasattr(a, "__cuda_array_interface__"):
        cai = a.__cuda_array_interface__
        dt = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is None:
            strides, es = [], dt.itemsize
            for s in reversed(shape):
                strides.insert(0, es)
                es *= s
        bounds, dev = None, 0
        if _is_cupy(a):
            mem = a.data.mem
            bounds = (mem.ptr, mem.ptr + mem.size)
            dev = a.device.id
        return Foreign(a, cai["data"][0], shape, strides, dt, "cuda", dev,
                       bounds, "cupy" if _is_cupy(a) else "cai")
    if hasattr(a, "__dlpack__"):
        return from_dlpack_capsule(a)
    if hasattr(a, "__array_interface__") or hasattr(a, "__array__"):
        return describe(np.asarray(a))
    return None


class _Consumed:
    """A DLPack tensor taken from its capsule: calls the producer's
    deleter when the last user of the memory lets go."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        m = self.managed
        if m and m.contents.deleter:
            m.contents.deleter(m)
        self.managed = None


_DL_TYPES = {(2, 32): "float32", (2, 64): "float64", (0, 32): "int32",
             (0, 64): "int64", (1, 8): "uint8"}


def from_dlpack_capsule(a):
    dev_type, dev_id = a.__dlpack_device__()
    if dev_type == KDL_CUDA:
        capsule = a.__dlpack__(stream=1)  # legacy default stream
    else:
        capsule = a.__dlpack__()
    p = _api.PyCapsule_GetPointer(capsule, b"dltensor")
    managed = C.cast(p, C.POINTER(DLManagedTensor))
    _api.PyCapsule_SetName(capsule, b"used_dltensor")
    keep = _Consumed(managed)
    t = managed.contents.dl_tensor
    dt = _DL_TYPES.get((t.dtype.code, t.dtype.bits))
    if dt is None or t.dtype.lanes != 1:
        raise TypeError("strata: a DLPack tensor of type code %d, %d bits: "
                        "strata takes float32 and float64"
                        % (t.dtype.code, t.dtype.bits))
    dt = np.dtype(dt)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] * dt.itemsize for i in range(t.ndim))
    else:
        strides, es = [], dt.itemsize
        for s in reversed(shape):
            strides.insert(0, es)
            es *= s
    device = "cuda" if dev_type in (KDL_CUDA, KDL_CUDA_MANAGED) else "cpu"
    return Foreign(a, (t.data or 0) + t.byte_offset, shape, strides, dt,
                   device, dev_id, None, "dlpack", keep)


# ---- exporting: a strata field as a DLPack capsule ---------------------
_exported = {}  # address of a DLManagedTensor -> (its parts, the owner)


@DL_DELETER
def _dl_delete(m):
    _exported.pop(C.addressof(m.contents), None)


@CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # a capsule nobody consumed still holds its tensor
    if _raw_is_valid(capsule, b"dltensor"):
        _exported.pop(_raw_get_pointer(capsule, b"dltensor"), None)


def to_dlpack(owner, ptr, shape, strides_elems, dtype, device_type,
              device_id):
    """A "dltensor" capsule for memory at ptr that keeps owner alive until
    the consumer's deleter runs (or the capsule dies unconsumed)."""
    dt = np.dtype(dtype)
    m = DLManagedTensor()
    nd = len(shape)
    shp = (C.c_int64 * nd)(*shape)
    strd = (C.c_int64 * nd)(*strides_elems)
    t = m.dl_tensor
    t.data = ptr
    t.device = DLDevice(device_type, device_id)
    t.ndim = nd
    t.dtype = DLDataType(2, dt.itemsize * 8, 1)
    t.shape = C.cast(shp, C.POINTER(C.c_int64))
    t.strides = C.cast(strd, C.POINTER(C.c_int64))
    t.byte_offset = 0
    m.manager_ctx = None
    m.deleter = _dl_delete
    addr = C.addressof(m)
    _exported[addr] = ((m, shp, strd), owner)
    return _api.PyCapsule_New(addr, b"dltensor",
                              C.cast(_capsule_destructor, C.c_void_p))


def sync_caller_stream(f):
    """Waits until the work the caller queued on its current CUDA stream
    is done, before strata reads or writes the array f describes."""
    if f.device != "cuda":
        return
    if f.kind == "cupy" or (f.kind == "cai" and "cupy" in sys.modules):
        import cupy
        cupy.cuda.get_current_stream().synchronize()
    elif f.kind == "torch" or "torch" in sys.modules:
        import torch
        torch.cuda.current_stream(f.device_id).synchronize()
