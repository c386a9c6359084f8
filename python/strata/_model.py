"""Earth models (velocity, density, ...) from files: .npy, SEG-Y and raw
samples, read by the library's readers (strata_model_read), checked and
resampled onto a simulation grid as the case files' [model] does."""
import ctypes as C
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ._core import default_context, precision_of
from ._errors import check
from ._lib import Model as _Model, ModelFile as _ModelFile, checked, lib

_FORMATS = {"auto": 0, "npy": 1, "segy": 2, "raw": 3}
_GEOMETRY = {"auto": 0, "traces": 1, "headers": 2}
_RESAMPLE = {"linear": 0, "nearest": 1}


def _choice(table, name, value):
    try:
        return table[value]
    except KeyError:
        raise ValueError("%s must be one of %s, not %r" %
                         (name, ", ".join(table), value)) from None


class Model:
    """A property sampled on its own regular grid, as read from a file.

    ``values``: a NumPy array of shape (nz, ny, nx) (z = depth, down; a 2D
    section has ny = 1), float64, the file's values as they are (a copy
    the model owns); ``spacing`` and ``origin``: metres along (x, y, z),
    the origin in the simulation grid's frame (its first point at 0).
    """

    def __init__(self, values: np.ndarray, spacing: Sequence[float],
                 origin: Sequence[float] = (0.0, 0.0, 0.0),
                 context: Any = None):
        v = np.ascontiguousarray(values, dtype=np.float64)
        if v.ndim == 2:
            v = v[:, None, :]  # an x-z section: (nz, 1, nx)
        if v.ndim != 3:
            raise ValueError("a model has 2 (nz, nx) or 3 (nz, ny, nx) "
                             "axes, not %d" % v.ndim)
        self.values = v
        self.spacing = tuple(float(s) for s in spacing)
        self.origin = tuple(float(o) for o in origin)
        self.context = context or default_context()

    dims = property(lambda self: 2 if self.values.shape[1] == 1 else 3)

    def _c(self) -> _Model:
        m = checked(_Model)()
        m.dims = self.dims
        nz, ny, nx = self.values.shape
        m.n[:] = (nx, ny, nz)
        m.spacing[:] = self.spacing
        m.origin[:] = self.origin
        m.data = self.values.ctypes.data_as(C.POINTER(C.c_double))
        return m

    def check(self, what: str = "velocity") -> Tuple[float, float]:
        """The smallest and largest values; raises InvalidArgument naming
        the first value that is not finite and > 0, its sample and its
        position in metres."""
        m, lo, hi = self._c(), C.c_double(), C.c_double()
        ctx = self.context.ptr
        check(lib.strata_model_check(ctx, C.byref(m), what.encode(),
                                     C.byref(lo), C.byref(hi)),
              ctx, "strata_model_check")
        return lo.value, hi.value

    def resample(self, n: Sequence[int], h: float,
                 how: str = "linear") -> np.ndarray:
        """The model at the points (i h, j h, k h) of a grid of n = (nx,
        ny, nz) points, as an array of shape (nz, ny, nx): trilinear
        ("linear", bilinear in 2D) or the nearest sample ("nearest").
        Raises InvalidArgument when the model does not cover the grid
        (the message names the axis and both extents in metres)."""
        n3 = tuple(int(x) for x in n) + (1,) * (3 - len(n))
        out = np.empty((n3[2], n3[1], n3[0]), dtype=np.float64)
        m, ctx = self._c(), self.context.ptr
        check(lib.strata_model_resample(
            ctx, C.byref(m), (C.c_size_t * 3)(*n3), float(h),
            _choice(_RESAMPLE, "how", how),
            out.ctypes.data_as(C.POINTER(C.c_double))),
            ctx, "strata_model_resample")
        return out

    def __repr__(self):
        nz, ny, nx = self.values.shape
        return "<strata.Model %dD %d x %d x %d, spacing %s m, origin %s m>" % (
            self.dims, nx, ny, nz, self.spacing, self.origin)


def read_model(path: str, format: str = "auto", axes: Optional[str] = None,
               shape: Optional[Sequence[int]] = None, dtype: Any = None,
               big_endian: bool = False, segy_geometry: str = "auto",
               segy_nx: int = 0, inline_byte: int = 189,
               crossline_byte: int = 193,
               spacing: Optional[Sequence[float]] = None,
               origin: Sequence[float] = (0.0, 0.0, 0.0),
               context: Any = None) -> Model:
    """Reads a model file with the library's reader (strata_model_read):
    ``format`` "auto" (by the name: .npy, .sgy/.segy), "npy", "segy" or
    "raw"; for .npy and raw, ``axes`` names the file's axes slowest first
    ("zyx" by default in 3D, "zx" in 2D; "xyz" for Devito's and SEG-Y's
    order); raw files take ``shape`` (in the order of ``axes``), ``dtype``
    (float32 or float64) and ``big_endian``; SEG-Y takes
    ``segy_geometry`` ("traces": file order, ``segy_nx`` traces a line;
    "headers": by the inline/crossline numbers at ``inline_byte`` and
    ``crossline_byte``).  ``spacing`` (metres along x, y, z) is required
    to resample; ``origin`` places sample (0, 0, 0).  Bad files raise
    with the library's message (what and where)."""
    ctx = context or default_context()
    f = checked(_ModelFile)()
    lib.strata_model_file_init(C.byref(f))
    bpath = str(path).encode()
    baxes = axes.encode() if axes else None
    f.path = bpath
    f.format = _choice(_FORMATS, "format", format)
    f.axes = baxes
    if shape is not None:
        f.ndim = len(shape)
        f.shape[:] = tuple(int(s) for s in shape) + (0,) * (3 - len(shape))
    if dtype is not None:
        f.precision = precision_of(dtype)
    f.big_endian = 1 if big_endian else 0
    f.segy_geometry = _choice(_GEOMETRY, "segy_geometry", segy_geometry)
    f.segy_nx = int(segy_nx)
    f.inline_byte = int(inline_byte)
    f.crossline_byte = int(crossline_byte)
    if spacing is not None:
        f.spacing[:] = tuple(float(s) for s in spacing)
    f.origin[:] = tuple(float(o) for o in origin)
    m = checked(_Model)()
    check(lib.strata_model_read(ctx.ptr, C.byref(f), C.byref(m)), ctx.ptr,
          "strata_model_read")
    try:
        nx, ny, nz = m.n
        a = np.ctypeslib.as_array(m.data, shape=(nz * ny * nx,))
        values = a.reshape(nz, ny, nx).copy()
        return Model(values, tuple(m.spacing), tuple(m.origin), ctx)
    finally:
        lib.strata_model_free(C.byref(m))


def host_memory_available() -> int:
    """Bytes of host memory this process may still allocate: MemAvailable,
    bounded by its cgroup's memory limit; 0 if unknown."""
    return int(lib.strata_host_memory_available())
