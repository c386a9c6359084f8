"""Contexts, fields and their arrays."""
import ctypes as C
import threading
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _arrays
from ._errors import InvalidArgument, check
from ._lib import (Boundary as _Boundary, ContextOptions, DeviceInfo,
                   FieldDesc, FieldLayout, checked, lib)

_BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
_BACKEND_NAMES = {1: "cpu", 2: "cuda"}
_ALIGN = 128


def precision_of(dtype):
    """4 or 8 for float32/float64 (also "f32", "f64", 4, 8)."""
    if dtype in (4, 8):
        return int(dtype)
    if isinstance(dtype, str) and dtype.lower() in ("f32", "fp32", "single"):
        return 4
    if isinstance(dtype, str) and dtype.lower() in ("f64", "fp64", "double"):
        return 8
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt == np.float32:
        return 4
    if dt == np.float64:
        return 8
    raise InvalidArgument(1, "precision %r: strata holds float32 or float64"
                          % (dtype,), "precision", str(dtype))


def dtype_of(precision):
    return np.dtype(np.float32 if precision == 4 else np.float64)


def backend_available(backend):
    """(True, "") when backend ("cpu", "cuda") can be used here, else
    (False, the reason)."""
    why = C.create_string_buffer(256)
    ok = lib.strata_backend_available(_BACKENDS[backend], why, 256)
    return bool(ok), why.value.decode()


class Context:
    """Where strata computes: the CPU engine or one GPU.

    ``Context(backend="auto", device=0, threads=0, autotune=True,
    tune_cache=None, tuning=None)``: ``backend`` is "auto" (CUDA when a
    usable GPU is present, else the CPU), "cpu" or "cuda"; the rest as in
    ``strata_context_options`` (strata.h).  Fields and solvers keep their
    context alive; the context is released when the last of them is.
    """

    def __init__(self, backend: str = "auto", device: int = 0,
                 threads: int = 0, autotune: bool = True,
                 tune_cache: Optional[str] = None,
                 tuning: Optional[str] = None) -> None:
        if backend not in _BACKENDS:
            raise InvalidArgument(1, "backend %r: it must be one of auto, "
                                  "cpu, cuda" % (backend,), "backend",
                                  str(backend))
        o = checked(ContextOptions)()
        lib.strata_context_options_init(C.byref(o))
        o.backend = _BACKENDS[backend]
        o.device = device
        o.threads = threads
        o.autotune = 1 if autotune else 0
        self._strings = [s.encode() if s is not None else None
                         for s in (tune_cache, tuning)]
        o.tune_cache, o.tuning = self._strings
        err = C.create_string_buffer(512)
        o.errbuf = C.cast(err, C.c_void_p)
        o.errbuf_size = 512
        p = C.c_void_p()
        st = lib.strata_context_create(C.byref(p), C.byref(o))
        if st != 0:
            from ._errors import error
            raise error(st, err.value.decode(errors="replace"),
                        "backend" if st == 7 else "", backend if st == 7
                        else "", "strata_context_create")
        self._ptr = p
        self.device = device
        self.lock = threading.Lock()

    @property
    def ptr(self):
        return self._ptr.value

    @property
    def backend(self) -> str:
        """ "cpu" or "cuda" (never "auto")."""
        return _BACKEND_NAMES[lib.strata_context_backend(self._ptr)]

    def device_info(self) -> dict:
        """The machine: a dict of strata_device_info's fields."""
        d = checked(DeviceInfo)()
        check(lib.strata_context_device_info(self._ptr, C.byref(d)), self.ptr)
        out = {k: getattr(d, k) for k, _ in DeviceInfo._fields_}
        out["name"] = d.name.decode(errors="replace")
        return out

    def sync(self) -> None:
        """Waits until all work queued on the context is done."""
        check(lib.strata_context_sync(self._ptr), self.ptr)

    def __del__(self):
        if getattr(self, "_ptr", None):
            lib.strata_context_destroy(C.byref(self._ptr))

    def __repr__(self):
        return "strata.Context(backend=%r)" % self.backend


_default = None


def default_context() -> "Context":
    """The context used where none is given: Context("auto"), made once."""
    global _default
    if _default is None:
        _default = Context()
    return _default


def set_default_context(ctx: Union["Context", str]) -> "Context":
    """Makes ctx (a Context, or a backend name) the default context."""
    global _default
    _default = ctx if isinstance(ctx, Context) else Context(ctx)
    return _default


# ---- boundary conditions ------------------------------------------------
_FACES = ("xlo", "xhi", "ylo", "yhi", "zlo", "zhi")


def boundary(bc: Any) -> _Boundary:
    """A strata_boundary from: a kind name ("dirichlet", "neumann",
    "periodic", "none") for every face; a number (Dirichlet at that
    value); a list of 6 kinds or (kind, value) pairs in x-low, x-high,
    y-low, y-high, z-low, z-high order; or a dict with any of the keys
    "all", "x", "y", "z", "xlo" ... "zhi" (values as above)."""
    b = checked(_Boundary)()
    per = [("dirichlet", 0.0)] * 6

    def one(v, where):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return ("dirichlet", float(v))
        if isinstance(v, str):
            return (v, 0.0)
        if isinstance(v, (tuple, list)) and len(v) == 2:
            return (str(v[0]), float(v[1]))
        raise InvalidArgument(1, "boundary %s: %r is not a kind, a value or "
                              "(kind, value)" % (where, v), "bc", repr(v))

    if bc is None:
        pass
    elif isinstance(bc, dict):
        for key, v in bc.items():
            faces = ({"all": range(6), "x": (0, 1), "y": (2, 3),
                      "z": (4, 5)}.get(key) or
                     ([_FACES.index(key)] if key in _FACES else None))
            if faces is None:
                raise InvalidArgument(1, "boundary: unknown face %r (all, x, "
                                      "y, z, xlo ... zhi)" % (key,), "bc",
                                      str(key))
            for f in faces:
                per[f] = one(v, key)
    elif isinstance(bc, (list, tuple)) and len(bc) == 6:
        per = [one(v, _FACES[i]) for i, v in enumerate(bc)]
    else:
        per = [one(bc, "all")] * 6
    for i, (kind, value) in enumerate(per):
        k = C.c_int()
        if lib.strata_bc_parse(kind.encode(), C.byref(k)) != 0:
            raise InvalidArgument(1, "boundary %s: unknown kind %r (dirichlet,"
                                  " neumann, periodic, none)"
                                  % (_FACES[i], kind), "bc.kind[%d]" % i,
                                  kind)
        b.kind[i] = k.value
        b.value[i] = value
    return b


# ---- fields -------------------------------------------------------------
class _Mem:
    """Exposes memory to NumPy and keeps its owner alive as the array's
    base."""

    def __init__(self, ptr, shape, strides, dtype, owner):
        self.__array_interface__ = {
            "data": (ptr, False), "shape": tuple(shape),
            "strides": tuple(strides), "typestr": np.dtype(dtype).str,
            "version": 3}
        self.owner = owner


def _desc(shape, precision, ghost):
    shape = tuple(int(s) for s in shape)
    if not 1 <= len(shape) <= 3:
        raise InvalidArgument(1, "shape %r: a field has 1, 2 or 3 axes"
                              % (shape,), "dims", str(len(shape)))
    d = checked(FieldDesc)()
    d.dims = len(shape)
    n = list(reversed(shape)) + [1] * (3 - len(shape))
    for a in range(3):
        if n[a] < 0:
            raise InvalidArgument(1, "shape %r: a negative size" % (shape,),
                                  "n[%d]" % a, str(n[a]))
        d.n[a] = n[a]
    d.ghost = int(ghost)
    d.precision = precision
    return d


def layout_for(shape: Tuple[int, ...], dtype: Any = np.float64,
               ghost: int = 1) -> dict:
    """The memory layout strata gives a field of this shape (a dict of
    strata_field_layout's fields: pitch_x, pitch_y, planes, origin,
    elements, bytes)."""
    d = _desc(shape, precision_of(dtype), ghost)
    L = checked(FieldLayout)()
    st = lib.strata_field_layout_for(C.byref(d), C.byref(L))
    if st != 0:
        check(st, None, "strata_field_layout_for",
              "shape %r, ghost %d: not a field strata can hold"
              % (tuple(shape), ghost))
    return {k: getattr(L, k) for k, _ in FieldLayout._fields_}


def _strides(L, dims, es):
    s = [es, L["pitch_x"] * es, L["pitch_x"] * L["pitch_y"] * es]
    return tuple(reversed(s[:dims]))


class Field:
    """A 1D, 2D or 3D grid with ghost layers, in the memory of a context.

    ``Field(shape, dtype=np.float64, ghost=1, context=None)`` makes a field
    of zeros; ``shape`` is NumPy's order (nz, ny, nx): element
    ``[k, j, i]`` is grid point (i, j, k).  ``Field.from_array(a)`` takes
    an array in (in place when its layout allows).

    On the CPU backend ``f.interior`` is a NumPy view of the library's own
    memory and ``f.ghosted`` the wider view with the ghost layers; on the
    CUDA backend the field exposes ``__cuda_array_interface__`` and
    ``__dlpack__`` (``cupy.asarray(f)``, ``torch.from_dlpack(f)``) and
    ``f.read()`` copies it to the host.  Views keep the field alive.
    """

    def __init__(self, shape: Tuple[int, ...], dtype: Any = np.float64,
                 ghost: int = 1, context: Optional[Context] = None) -> None:
        ctx = context or default_context()
        d = _desc(shape, precision_of(dtype), ghost)
        p = C.c_void_p()
        check(lib.strata_field_create(ctx.ptr, C.byref(d), C.byref(p)),
              ctx.ptr, "strata_field_create")
        self._init(ctx, p, owned=True)

    @classmethod
    def _adopt(cls, ctx, ptr, owner=None, keep=None):
        f = cls.__new__(cls)
        f._init(ctx, C.c_void_p(ptr), owned=owner is None, owner=owner,
                keep=keep)
        return f

    def _init(self, ctx, p, owned, owner=None, keep=None):
        self.context = ctx
        self._ptr = p
        self._owned = owned
        self._owner = owner   # the solver a borrowed field belongs to
        self._keep = keep     # the foreign array a wrapped field uses
        d = FieldDesc()
        check(lib.strata_field_get_desc(p, C.byref(d)), ctx.ptr)
        L = FieldLayout()
        check(lib.strata_field_get_layout(p, C.byref(L)), ctx.ptr)
        self.dims = d.dims
        self.ghost = d.ghost
        self.n = tuple(d.n)
        self.shape = tuple(reversed(self.n[:self.dims]))
        self.dtype = dtype_of(d.precision)
        self.layout = {k: getattr(L, k) for k, _ in FieldLayout._fields_}

    def __del__(self):
        if getattr(self, "_owned", False) and self._ptr:
            lib.strata_field_destroy(C.byref(self._ptr))

    @property
    def ptr(self):
        """The strata_field pointer (for ctypes callers)."""
        return self._ptr.value

    @property
    def data_ptr(self):
        """Address of the field's memory (element 0 of its layout): a host
        pointer on the CPU backend, a device pointer on CUDA."""
        return lib.strata_field_data(self._ptr) or 0

    @property
    def interior_ptr(self):
        return self.data_ptr + self.layout["origin"] * self.dtype.itemsize

    @property
    def strides(self):
        """Byte strides of the interior and ghosted views (NumPy order)."""
        return _strides(self.layout, self.dims, self.dtype.itemsize)

    @property
    def ghosted_shape(self):
        g = self.ghost
        return tuple(s + 2 * g for s in self.shape)

    @property
    def backend(self):
        return self.context.backend

    def _host_view(self, ghosted):
        if self.backend != "cpu":
            raise TypeError("strata: this field is in GPU memory; use "
                            "cupy.asarray(f), torch.from_dlpack(f) or "
                            "f.read() for a host copy")
        g = self.ghost
        ptr, shape = self.interior_ptr, self.shape
        if ghosted:
            ptr -= sum(g * s for s in self.strides)
            shape = self.ghosted_shape
        return np.asarray(_Mem(ptr, shape, self.strides, self.dtype, self))

    @property
    def interior(self) -> np.ndarray:
        """CPU backend: a writable NumPy view of the interior (shape
        f.shape); it keeps the field alive."""
        return self._host_view(False)

    @property
    def ghosted(self) -> np.ndarray:
        """CPU backend: a writable NumPy view of interior and ghost layers
        (each axis ghost points wider on both sides)."""
        return self._host_view(True)

    def numpy(self) -> np.ndarray:
        """The interior as NumPy: a view on the CPU backend, a copy from a
        GPU."""
        return self.interior if self.backend == "cpu" else self.read()

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def read(self, ghosted: bool = False) -> np.ndarray:
        """A dense host copy of the interior (or with the ghost layers)."""
        out = np.empty(self.ghosted_shape if ghosted else self.shape,
                       self.dtype)
        fn = lib.strata_field_read_ghosted if ghosted else lib.strata_field_read
        check(fn(self._ptr, out.ctypes.data), self.context.ptr,
              "strata_field_read")
        return out

    def write(self, a: Any, ghosted: bool = False) -> None:
        """Copies array a (interior shape, or ghosted shape with
        ghosted=True; any dtype) into the field."""
        a = np.ascontiguousarray(a, self.dtype)
        want = self.ghosted_shape if ghosted else self.shape
        if a.shape != want:
            raise InvalidArgument(2, "array of shape %r for a field of %s "
                                  "shape %r" % (a.shape, "ghosted" if ghosted
                                                else "interior", want),
                                  "host", str(a.shape))
        fn = (lib.strata_field_write_ghosted if ghosted
              else lib.strata_field_write)
        check(fn(self._ptr, a.ctypes.data), self.context.ptr,
              "strata_field_write")
        self._done()

    def _done(self):
        """On a GPU: waits for strata's work, so that arrays of other
        libraries viewing the field see it complete on any stream."""
        if self.context.backend == "cuda":
            self.context.sync()
        return self

    def fill(self, value: float) -> "Field":
        """Sets every point, ghosts included."""
        check(lib.strata_field_fill(self._ptr, float(value)), self.context.ptr)
        return self._done()

    def fill_random(self, seed: int = 0, lo: float = 0.0,
                    hi: float = 1.0) -> "Field":
        """Uniform values in [lo, hi) that depend only on seed and the
        point (the same on every backend)."""
        check(lib.strata_field_fill_random(self._ptr, seed, lo, hi),
              self.context.ptr)
        return self._done()

    def fill_ghosts(self, bc: Any = "dirichlet") -> "Field":
        """Fills the ghost layers from the interior and the boundary
        conditions (see strata.boundary for the forms bc takes)."""
        b = boundary(bc)
        check(lib.strata_field_fill_ghosts(self._ptr, C.byref(b)),
              self.context.ptr, "strata_field_fill_ghosts")
        return self._done()

    def norm(self, kind: str = "l2",
             other: Optional["Field"] = None) -> float:
        """"l2", "rms", "max" or "sum" of the interior (of self - other
        when other is given), accumulated in double."""
        k = {"l2": 0, "rms": 1, "max": 2, "sum": 3}[kind]
        out = C.c_double()
        if other is None:
            st = lib.strata_field_norm(self._ptr, k, C.byref(out))
        else:
            st = lib.strata_field_diff(self._ptr, other._ptr, k, C.byref(out))
        check(st, self.context.ptr)
        return out.value

    def copy_from(self, other: "Field") -> "Field":
        """self = other, ghosts included (same shape and dtype)."""
        check(lib.strata_field_copy(self._ptr, other._ptr), self.context.ptr)
        return self._done()

    def save_npy(self, path: str) -> None:
        """Writes the interior as .npy (shape f.shape)."""
        check(lib.strata_field_save_npy(self._ptr, str(path).encode()),
              self.context.ptr, "strata_field_save_npy")

    # ---- GPU interfaces ------------------------------------------------
    @property
    def __cuda_array_interface__(self):
        """CUDA backend: the interior, version 3.  strata's queued work is
        done before the pointer is handed out (stream None: no further
        synchronisation needed)."""
        if self.backend != "cuda":
            raise AttributeError("__cuda_array_interface__: the field is in "
                                 "host memory (CPU backend)")
        self.context.sync()
        return {"shape": self.shape, "typestr": self.dtype.str,
                "data": (self.interior_ptr, False), "version": 3,
                "strides": self.strides, "stream": None}

    def __dlpack_device__(self):
        if self.backend == "cuda":
            return (_arrays.KDL_CUDA, self.context.device)
        return (_arrays.KDL_CPU, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None,
                   copy=None):
        """The interior as a DLPack capsule.  strata's queued work is done
        before it returns, so the consumer may use it on any stream."""
        if copy:
            raise BufferError("strata: __dlpack__(copy=True): the field is "
                              "shared without a copy; copy it afterwards")
        if self.backend == "cuda":
            self.context.sync()
        dev_type, dev_id = self.__dlpack_device__()
        es = self.dtype.itemsize
        return _arrays.to_dlpack(self, self.interior_ptr, self.shape,
                                 [s // es for s in self.strides], self.dtype,
                                 dev_type, dev_id)

    # ---- arrays in ------------------------------------------------------
    @classmethod
    def from_array(cls, a: Any, ghost: int = 1,
                   context: Optional[Context] = None,
                   copy: Optional[bool] = None) -> "Field":
        """A field holding array a (NumPy, CuPy, PyTorch, or anything with
        the array, CUDA array or DLPack interfaces; 1 to 3 axes, NumPy
        order).

        In place (no copy; the field keeps a alive and writes through to
        it) when a is float32/float64 in the context's memory (host for
        the CPU backend, the context's GPU for CUDA) and has strata's
        layout: the strides of ``strata.layout_for(a.shape, a.dtype,
        ghost)``, the layout's start 128-byte aligned, and the ghost
        layers and row padding around a inside the same allocation, as in
        the arrays ``strata.empty``/``strata.zeros`` make.  Otherwise a is
        copied once into a new field (``copy=False`` raises instead;
        ``copy=True`` always copies).
        """
        ctx = context or default_context()
        if isinstance(a, Field):
            a = a.numpy() if a.backend == "cpu" else a
        f = _arrays.describe(a)
        if f is None:
            raise TypeError("strata: %s is not an array" % type(a).__name__)
        if f.dtype not in (np.float32, np.float64) or not 1 <= len(f.shape) <= 3:
            if copy is False:
                raise InvalidArgument(1, "an array of dtype %s and %d axes "
                                      "cannot be used in place" %
                                      (f.dtype, len(f.shape)), "a",
                                      str(f.dtype))
            if f.device == "cpu":
                host = (_foreign_numpy(f) if f.kind == "dlpack"
                        else np.asarray(f.obj))
                return cls.from_array(host.astype(np.float64), ghost, ctx,
                                      copy=True)
        if copy is not True:
            why = _in_place_refusal(f, ctx, ghost)
            if why is None:
                return _wrap(ctx, f, ghost)
            if copy is False:
                raise InvalidArgument(1, "the array cannot be used in place: "
                                      + why, "a", f.kind)
        out = cls(f.shape, f.dtype if f.dtype in (np.float32, np.float64)
                  else np.float64, ghost, ctx)
        out.assign(a, f)
        return out

    def assign(self, a: Any, f: Any = None) -> "Field":
        """Copies array a (the interior's shape) into the field: one copy,
        on the device where both are on the GPU."""
        f = f or _arrays.describe(a)
        if f.shape != self.shape:
            raise InvalidArgument(3, "array of shape %r for a field of shape "
                                  "%r" % (f.shape, self.shape), "a",
                                  str(f.shape))
        if self.backend == "cpu":
            if f.device == "cpu":
                self.interior[...] = np.asarray(f.obj) if f.kind != "dlpack" \
                    else _foreign_numpy(f)
            else:
                self.interior[...] = _to_host(f.obj)
        elif f.device == "cpu":
            self.write(np.asarray(f.obj) if f.kind != "dlpack"
                       else _foreign_numpy(f))
        else:
            _arrays.sync_caller_stream(f)
            self.context.sync()
            _device_view_like(self, f)[...] = f.obj
            _arrays.sync_caller_stream(f)
        return self

    def __repr__(self):
        return "strata.Field(shape=%r, dtype=%s, ghost=%d, backend=%s)" % (
            self.shape, self.dtype.name, self.ghost, self.backend)


def _foreign_numpy(f):
    return np.asarray(_Mem(f.ptr, f.shape, f.strides, f.dtype, f.keep))


def _to_host(obj):
    if hasattr(obj, "get"):
        return obj.get()
    if hasattr(obj, "cpu"):
        return obj.detach().cpu().numpy()
    raise TypeError("strata: cannot copy %s to the host" % type(obj).__name__)


def _device_view_like(field, f):
    """The field's interior as an array of f's library (CuPy or PyTorch)."""
    if f.kind == "torch":
        import torch
        return torch.from_dlpack(field)
    import cupy
    return cupy.asarray(field)


def _in_place_refusal(f, ctx, ghost):
    """Why f cannot be used in place as a field of ctx (None: it can)."""
    want_dev = "cuda" if ctx.backend == "cuda" else "cpu"
    if f.device != want_dev:
        return "it is in %s memory and the context is %s" % (f.device,
                                                            ctx.backend)
    if f.dtype not in (np.float32, np.float64):
        return "its dtype is %s" % f.dtype
    try:
        L = layout_for(f.shape, f.dtype, ghost)
    except InvalidArgument as e:
        return str(e)
    es = f.dtype.itemsize
    want = _strides(L, len(f.shape), es)
    if tuple(f.strides) != want:
        return ("its strides are %r; strata's layout for ghost %d has %r "
                "(make such arrays with strata.empty)" %
                (tuple(f.strides), ghost, want))
    base = f.ptr - L["origin"] * es
    if base % _ALIGN:
        return "the layout's start is not %d-byte aligned" % _ALIGN
    if f.bounds is None:
        return "the allocation around it is unknown (its ghost layers)"
    if base < f.bounds[0] or base + L["bytes"] > f.bounds[1]:
        return "its allocation does not hold the ghost layers around it"
    if want_dev == "cuda":
        # the context's own device (the CUDA engine's ordinal)
        pass
    return None


def _wrap(ctx, f, ghost):
    L = layout_for(f.shape, f.dtype, ghost)
    d = _desc(f.shape, precision_of(f.dtype), ghost)
    base = f.ptr - L["origin"] * f.dtype.itemsize
    _arrays.sync_caller_stream(f)
    p = C.c_void_p()
    check(lib.strata_field_wrap(ctx.ptr, C.byref(d), base, L["bytes"],
                                C.byref(p)), ctx.ptr, "strata_field_wrap")
    return Field._adopt(ctx, p.value, keep=(f.obj, f.keep))


def empty(shape: Tuple[int, ...], dtype: Any = np.float64, ghost: int = 1,
          like: str = "numpy", fill: Optional[float] = None) -> Any:
    """An array of the given shape (NumPy order) in strata's field layout:
    the interior view of a buffer that also holds the ghost layers and the
    row padding.  ``strata.Field.from_array`` and every call taking an
    array use such arrays in place.  like: "numpy", "cupy" or "torch"
    (memory of the current GPU)."""
    dt = np.dtype(dtype)
    L = layout_for(shape, dt, ghost)
    es, nb = dt.itemsize, L["bytes"] + _ALIGN
    strides = _strides(L, len(shape), es)
    if like == "numpy":
        raw = np.empty(nb, np.uint8)
        off = (-raw.ctypes.data) % _ALIGN
        a = np.ndarray(tuple(shape), dt, raw, off + L["origin"] * es, strides)
    elif like == "cupy":
        import cupy
        raw = cupy.empty(nb, cupy.uint8)
        off = (-raw.data.ptr) % _ALIGN
        a = cupy.ndarray(tuple(shape), dt, raw.data + off + L["origin"] * es,
                         strides)
    elif like == "torch":
        import torch
        raw = torch.empty(nb, dtype=torch.uint8, device="cuda")
        off = (-raw.data_ptr()) % _ALIGN
        tdt = torch.float32 if dt == np.float32 else torch.float64
        typed = raw[off:off + L["bytes"]].view(tdt)
        a = torch.as_strided(typed, tuple(shape), [s // es for s in strides],
                             typed.storage_offset() + L["origin"])
    else:
        raise InvalidArgument(1, "like=%r: numpy, cupy or torch" % (like,),
                              "like", str(like))
    if fill is not None:
        a[...] = fill
    return a


def zeros(shape: Tuple[int, ...], dtype: Any = np.float64, ghost: int = 1,
          like: str = "numpy") -> Any:
    """strata.empty, zero-filled (ghosts and padding included)."""
    a = empty(shape, dtype, ghost, like)
    _zero_whole(a, like)
    return a


def _zero_whole(a, like):
    if like == "numpy":
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        root[...] = 0
    elif like == "cupy":
        import cupy
        mem = a.data.mem  # the whole allocation, on the current stream
        cupy.ndarray((mem.size,), cupy.uint8,
                     cupy.cuda.MemoryPointer(mem, 0)).fill(0)
    else:
        a.untyped_storage().fill_(0)
