"""The solvers (heat, acoustic wave, FDTD, multigrid Poisson, an operator
applied step after step) behind the library's one solver interface."""
import ctypes as C
from typing import (Any, Callable, Dict, List, Optional, Sequence, Tuple,
                    Union)
import sys
from collections import namedtuple

import numpy as np

from ._core import (Field, boundary, default_context, precision_of,
                    dtype_of)
from ._errors import InvalidArgument, check
from ._lib import (SHOT_FN, FdtdOptions, HeatOptions, MgOptions, MgResult,
                   OperatorOptions, SolverInfo, SolverOptions, SurveyOptions,
                   SurveyResult, Traces, WaveOptions, checked, lib)

Traces_ = namedtuple("Traces", "data receivers dt source")
Traces_.__doc__ = """Receiver traces: data (ntraces, nsamples) float64,
trace r's sample s at data[r, s] (time s * dt); receivers (ntraces, 3),
x, y, z in metres (z = depth); dt the sample interval in seconds; source
(x, y, z) in metres."""

_ENUMS = {
    "op": {"fd": 0, "fe27": 1},
    "face": {"cpml": 0, "sponge": 1, "free": 2, "periodic": 3},
    "fdtd_face": {"pec": 0, "mur": 1, "pml": 2, "periodic": 3},
    "scheme": {"explicit": 0, "yee": 1, "yee_tm": 1},
    "waveform": {"none": 0, "sine": 1, "gaussian": 2, "ricker": 3},
    "disc": {"fd": 0, "fe": 1, "fv": 2, "fv7": 2},
    "smoother": {"default": 0, "jacobi": 1, "chebyshev": 2, "gsrb": 3},
    "bottom": {"default": 0, "cg": 1, "smooth": 2},
    "face_mean": {"harmonic": 0, "arithmetic": 1},
    "cycle": {"v": 0, "f": 1, "w": 2},
}
_FACE_ORDER = ("xlo", "xhi", "ylo", "yhi", "zlo", "zhi")


def _enum(table, name, value):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    v = str(value).lower()
    if v not in _ENUMS[table]:
        raise InvalidArgument(1, "%s = %r: one of %s" % (
            name, value, ", ".join(sorted(_ENUMS[table]))), name, str(value))
    return _ENUMS[table][v]


def _faces(table, value, count):
    """Faces from a name (all), a list (x-low, x-high, y-low, ...) or a
    dict (all, x, y, z, xlo ... zhi)."""
    if isinstance(value, (str, int)):
        return [_enum(table, "face", value)] * count
    if isinstance(value, dict):
        out = [None] * count
        for key, v in value.items():
            faces = ({"all": range(count), "x": (0, 1), "y": (2, 3),
                      "z": (4, 5)}.get(key) or
                     ([_FACE_ORDER.index(key)] if key in _FACE_ORDER
                      else None))
            if faces is None or max(faces) >= count:
                raise InvalidArgument(1, "face: unknown face %r" % (key,),
                                      "face", str(key))
            for f in faces:
                out[f] = _enum(table, "face[%d]" % f, v)
        return out
    value = list(value)
    if len(value) != count:
        raise InvalidArgument(1, "face: %d faces given, %d needed" % (
            len(value), count), "face", str(len(value)))
    return [_enum(table, "face[%d]" % i, v) for i, v in enumerate(value)]


class Solver:
    """One interface over every solver: create from options, step(n),
    fields, traces, save/load, info.  Use the subclasses Heat, Wave, FDTD,
    Poisson and Operator; their keyword options are strata.h's
    strata_X_options fields (help(strata.Wave) lists them)."""

    KIND = 0
    _OPTIONS = None
    _INIT = None
    _POINTER = None

    def __init__(self, context: Any = None, tag: int = 0,
                 **options: Any) -> None:
        self.context = context or default_context()
        self._keep = []
        self._after = []
        o, so = self._options(tag, options)
        p = C.c_void_p()
        check(lib.strata_solver_create(self.context.ptr, C.byref(so),
                                       C.byref(p)),
              self.context.ptr, "strata_solver_create")
        self._ptr = p
        for fn in self._after:
            fn()
        self._after = []

    # ---- options ---------------------------------------------------------
    @classmethod
    def _make_options(cls):
        o = checked(cls._OPTIONS)()
        getattr(lib, cls._INIT)(C.byref(o))
        return o

    def _options(self, tag, options):
        o = self._make_options()
        # dims after n, which sets it from its number of sizes
        for key in sorted(options, key=lambda k: k == "dims"):
            self._set(o, key, options[key])
        so = checked(SolverOptions)()
        lib.strata_solver_options_init(C.byref(so), self.KIND)
        setattr(so, self._POINTER, C.pointer(o))
        so.tag = tag
        self._opts = o
        return o, so

    def _set(self, o, key, value):
        names = [k for k, _ in type(o)._fields_ if k != "dist"]
        if key not in names:
            raise TypeError("strata.%s: unknown option %r; the options are: "
                            "%s" % (type(self).__name__, key,
                                    ", ".join(names)))
        if key == "precision":
            o.precision = precision_of(value)
        elif key == "bc":
            o.bc = boundary(value)
        elif key == "n":
            n = [int(v) for v in value]
            arr = o.n
            if len(n) > len(arr):
                raise InvalidArgument(1, "n has %d sizes, at most %d" % (
                    len(n), len(arr)), "n", str(tuple(n)))
            if hasattr(o, "dims"):
                o.dims = max(len(n), 1)
            for a in range(len(arr)):
                arr[a] = n[a] if a < len(n) else 1
        elif key in ("src", "block"):
            arr = getattr(o, key)
            v = list(value)
            if len(v) != len(arr):
                raise InvalidArgument(1, "%s has %d values, %d needed" % (
                    key, len(v), len(arr)), key, str(tuple(v)))
            for a, x in enumerate(v):
                arr[a] = x
        elif key in _ENUMS and key != "face":
            setattr(o, key, _enum(key, key, value))
        else:
            setattr(o, key, value)

    # ---- stepping --------------------------------------------------------
    def step(self, n: int = 1,
             progress: Union[None, bool, Callable[[int, int], Any]] = None,
             chunk: Optional[int] = None) -> "Solver":
        """Advances n steps (Poisson: n multigrid cycles) on the context's
        backend; ctypes releases the GIL meanwhile.  progress: None, a
        callable progress(done, total) called after every chunk of steps,
        or True for a bar (tqdm when installed, else a line on stderr).
        With progress the steps go in chunks (chunk steps each, default
        about 1% of n); the result is the same bits as one call.  Ctrl-C
        stops between chunks.  Raises NonFiniteError when a blow-up check
        finds the state blown up (check_every)."""
        n = int(n)
        if n < 0:
            raise InvalidArgument(1, "nsteps = %d: it must be >= 0" % n,
                                  "nsteps", str(n))
        if progress is None and chunk is None:
            check(lib.strata_solver_step(self._ptr, n), self.context.ptr,
                  "strata_solver_step")
            return self
        chunk = int(chunk or max(1, n // 100))
        bar = _bar(progress, n, type(self).__name__)
        done = 0
        try:
            while done < n:
                k = min(chunk, n - done)
                check(lib.strata_solver_step(self._ptr, k), self.context.ptr,
                      "strata_solver_step")
                done += k
                bar(done, n)
        finally:
            getattr(bar, "close", lambda: None)()
        return self

    # ---- fields ----------------------------------------------------------
    @property
    def field_names(self) -> List[str]:
        """The solver's fields ("u"; "p", "p_prev"; "Ez", ...; "phi",
        "psi")."""
        return [lib.strata_solver_field_name(self._ptr, i).decode()
                for i in range(lib.strata_solver_field_count(self._ptr))]

    def _index(self, name):
        if isinstance(name, int):
            i = name
        else:
            i = lib.strata_solver_field_index(self._ptr, str(name).encode())
        if not 0 <= i < lib.strata_solver_field_count(self._ptr):
            raise KeyError("strata.%s has no field %r (it has %s)" % (
                type(self).__name__, name, ", ".join(self.field_names)))
        return i

    def unit(self, name: Union[str, int]) -> str:
        """The unit of a field's values ("Pa", or "")."""
        return lib.strata_solver_field_unit(self._ptr,
                                            self._index(name)).decode()

    def field(self, name: Union[str, int] = 0) -> Field:
        """The solver's field (a strata.Field of the library's own memory;
        it keeps the solver alive).  The solver may swap its time levels at
        every step: take the field (or its arrays) again after a step."""
        i = self._index(name)
        p = lib.strata_solver_field(self._ptr, i)
        return Field._adopt(self.context, p, owner=self)

    def array(self, name: Union[str, int] = 0, like: str = "numpy") -> Any:
        """A field's interior as an array without a copy: like="numpy" (CPU
        backend; from a GPU, a host copy), "cupy" or "torch" (GPU)."""
        f = self.field(name)
        if like == "numpy":
            return f.numpy()
        if like == "cupy":
            import cupy
            return cupy.asarray(f)
        if like == "torch":
            import torch
            return torch.from_dlpack(f)
        raise InvalidArgument(1, "like=%r: numpy, cupy or torch" % (like,),
                              "like", str(like))

    def read(self, name: Union[str, int] = 0) -> np.ndarray:
        """A dense host copy of a field's interior (NumPy order)."""
        i = self._index(name)
        f = self.field(i)
        out = np.empty(f.shape, f.dtype)
        check(lib.strata_solver_read(self._ptr, i, out.ctypes.data),
              self.context.ptr, "strata_solver_read")
        return out

    def __getitem__(self, name):
        return self.array(name)

    def __setitem__(self, name, value):
        """Sets a field's interior from an array (one copy) or a number."""
        f = self.field(name)
        if np.isscalar(value):
            value = np.full(f.shape, value, f.dtype)
        f.assign(value)

    def check(self) -> None:
        """Raises NonFiniteError when a field holds NaN or infinity now."""
        check(lib.strata_solver_check(self._ptr), self.context.ptr,
              "strata_solver_check")

    def traces(self) -> Traces_:
        """The receiver traces recorded so far (a Traces tuple; 0 traces
        for a solver without receivers)."""
        t = checked(Traces)()
        check(lib.strata_solver_traces(self._ptr, C.byref(t)),
              self.context.ptr, "strata_solver_traces")
        nt, ns = t.ntraces, t.nsamples
        if nt and ns:
            dt_ = dtype_of(t.precision)
            data = np.ctypeslib.as_array(
                C.cast(t.data, C.POINTER(C.c_double if dt_ == np.float64
                                         else C.c_float)),
                (nt, ns)).copy()
        else:
            data = np.zeros((nt, ns))
        rec = (np.ctypeslib.as_array(t.receivers, (nt, 3)).copy()
               if nt and t.receivers else np.zeros((nt, 3)))
        return Traces_(data, rec, t.dt, tuple(t.source))

    # ---- state -----------------------------------------------------------
    @property
    def info(self) -> Dict[str, Any]:
        """strata_solver_info as a dict (steps, time, dt, h, n, bytes,
        throughput of the last step call, residuals ...)."""
        i = checked(SolverInfo)()
        check(lib.strata_solver_get_info(self._ptr, C.byref(i)),
              self.context.ptr)
        out = {k: getattr(i, k) for k, _ in SolverInfo._fields_}
        out["n"] = tuple(i.n)
        out["kind"] = type(self).__name__.lower()
        out["precision"] = dtype_of(i.precision).name
        out["history"] = (np.ctypeslib.as_array(i.history, (i.steps + 1,))
                          .copy() if i.history else None)
        return out

    steps = property(lambda self: self.info["steps"], doc="steps done")
    time = property(lambda self: self.info["time"], doc="simulated time")
    dt = property(lambda self: self.info["dt"], doc="the time step")
    h = property(lambda self: self.info["h"], doc="the grid spacing")

    def save(self, path: str) -> None:
        """Writes a checkpoint file (docs/solvers.md, "Checkpoints")."""
        check(lib.strata_solver_save(self._ptr, str(path).encode()),
              self.context.ptr, "strata_solver_save")

    def load(self, path: str) -> "Solver":
        """Reads a checkpoint of a solver made with the same options; the
        run continues bit for bit."""
        check(lib.strata_solver_load(self._ptr, str(path).encode()),
              self.context.ptr, "strata_solver_load")
        return self

    def state(self) -> bytes:
        """The checkpoint image in memory, as bytes."""
        n = C.c_size_t()
        check(lib.strata_solver_state_size(self._ptr, C.byref(n)),
              self.context.ptr)
        buf = C.create_string_buffer(n.value)
        check(lib.strata_solver_save_state(self._ptr, buf, n.value),
              self.context.ptr, "strata_solver_save_state")
        return buf.raw

    def load_state(self, image: bytes) -> "Solver":
        """Loads an image from state()."""
        b = bytes(image)
        check(lib.strata_solver_load_state(self._ptr, b, len(b)),
              self.context.ptr, "strata_solver_load_state")
        return self

    @classmethod
    def estimate(cls, context: Any = None,
                 **options: Any) -> Tuple[int, int]:
        """(host_bytes, device_bytes) that creating this solver would
        allocate, checked as create checks it, without allocating."""
        ctx = context or default_context()
        self = cls.__new__(cls)
        self.context, self._keep, self._after = ctx, [], []
        o, so = self._options(0, options)
        hb, db = C.c_size_t(), C.c_size_t()
        check(lib.strata_solver_estimate(ctx.ptr, C.byref(so), C.byref(hb),
                                         C.byref(db)),
              ctx.ptr, "strata_solver_estimate")
        return hb.value, db.value

    def close(self):
        """Releases the solver now (also when it is garbage-collected);
        fields taken from it keep it alive until they go."""
        if getattr(self, "_ptr", None):
            lib.strata_solver_destroy(C.byref(self._ptr))

    def __del__(self):
        self.close()

    def __repr__(self):
        if not getattr(self, "_ptr", None):
            return "strata.%s(closed)" % type(self).__name__
        i = self.info
        return "strata.%s(n=%r, steps=%d, backend=%s)" % (
            type(self).__name__, i["n"], i["steps"], self.context.backend)


def estimate(kind: str, context: Any = None,
             **options: Any) -> Tuple[int, int]:
    """(host_bytes, device_bytes) of a solver of kind ("heat", "wave",
    "fdtd", "poisson", "operator") with these options."""
    return _KINDS[kind].estimate(context, **options)


def _host_doubles(a):
    if not isinstance(a, np.ndarray) and (hasattr(a, "get") or
                                          hasattr(a, "cpu")):
        from ._core import _to_host
        a = _to_host(a)
    return np.ascontiguousarray(a, np.float64)


def _bar(progress, total, name):
    if callable(progress):
        return progress
    if progress is not True:
        return lambda done, n: None
    try:
        from tqdm import tqdm
        t = tqdm(total=total, desc=name, unit="step")
        last = [0]

        def up(done, n):
            t.update(done - last[0])
            last[0] = done
        up.close = t.close
        return up
    except ImportError:
        tty = sys.stderr.isatty()
        shown = [-1]

        def line(done, n):
            pct = int(100 * done / max(n, 1))
            if pct // (1 if tty else 10) == shown[0] and done < n:
                return
            shown[0] = pct // (1 if tty else 10)
            sys.stderr.write("%s%s: %d/%d steps (%d%%)%s" % (
                "\r" if tty else "", name, done, n, pct,
                "\n" if done >= n or not tty else ""))
            sys.stderr.flush()
        return line


class Heat(Solver):
    """Heat (diffusion), 2D and 3D: u' = u + D lap(u).

    Options (strata_heat_options): n (nx, ny[, nz]: the number of sizes
    sets dims), precision ("f64" default, "f32" or a NumPy dtype), op
    ("fd", "fe27"), D (kappa dt / h^2, default 0.1; above the stability
    limit raises UnstableError), bc (strata.boundary's forms), fuse,
    check_every.  Field "u" (u = 0 at create: set it with ``h["u"] = a``).

    Example::

        h = strata.Heat(n=(256, 256), D=0.2, bc="periodic")
        h["u"] = u0             # an array of shape (256, 256)
        h.step(1000)
        u = h["u"]
    """
    KIND, _OPTIONS, _INIT, _POINTER = 1, HeatOptions, \
        "strata_heat_options_init", "heat"

    @staticmethod
    def stability_limit(dims=2, op="fd"):
        return lib.strata_heat_stability_limit(dims, _enum("op", "op", op))


class Wave(Solver):
    """Acoustic wave: p_tt = v^2 rho div(grad(p) / rho) + f(t) delta(x - x_s),
    3D, or a 2D x-z section when ny = 1; constant density unless a density
    is given.

    Options (strata_wave_options): n (nx, ny, nz; z is depth), h (m), dt
    (s; 0 = 0.8 of the CFL limit), precision ("f32" default), order (2, 4,
    6, 8), velocity (m/s: a number, or an array of shape (nz, ny, nx) set
    with set_velocity), density (an array of shape (nz, ny, nx) set with
    set_density), layers ([(top_m, velocity), ...] or [(top_m, velocity,
    density), ...]), face (one of
    "cpml", "sponge", "free", "periodic", a list of 6, or a dict such as
    {"all": "cpml", "zlo": "free"}), absorb_width, absorb_reflection, src
    (x, y, z in m; negative = the centre), f0 (Ricker peak, Hz),
    amplitude, delay, receivers (an (N, 3) array of x, y, z in m),
    record_every, min_ppw, check_every.  Fields "p", "p_prev"; traces().
    A dt above the CFL limit, or too few points per wavelength, raises
    UnstableError naming the option to change.

    Example::

        w = strata.Wave(n=(200, 200, 150), h=10.0,
                        layers=[(0, 1800), (400, 2600)],
                        face={"all": "cpml", "zlo": "free"},
                        src=(1000, 1000, 20), f0=12.0,
                        receivers=np.linspace([0, 1000, 10],
                                              [1990, 1000, 10], 200))
        w.step(800, progress=True)
        p = w["p"]              # (150, 200, 200): the solver's memory
        gather = w.traces().data
    """
    KIND, _OPTIONS, _INIT, _POINTER = 2, WaveOptions, \
        "strata_wave_options_init", "wave"

    def _set(self, o, key, value):
        if key == "velocity" and not np.isscalar(value):
            v = _host_doubles(value)
            o.velocity = float(v.max()) if v.size else 0.0
            self._after.append(lambda: self.set_velocity(v))
        elif key == "density":
            rho = _host_doubles(value)
            self._after.append(lambda: self.set_density(rho))
        elif key == "layers":
            lay = np.asarray(value, np.float64)
            lay = lay.reshape(-1, lay.shape[-1] if lay.ndim == 2 else 2)
            if lay.shape[1] not in (2, 3):
                raise InvalidArgument(1, "layers: rows of (top_m, velocity) "
                                      "or (top_m, velocity, density)",
                                      "layers", str(lay.shape))
            top = np.ascontiguousarray(lay[:, 0])
            vel = np.ascontiguousarray(lay[:, 1])
            self._keep += [top, vel]
            o.nlayers = len(lay)
            o.layer_top = top.ctypes.data_as(C.POINTER(C.c_double))
            o.layer_velocity = vel.ctypes.data_as(C.POINTER(C.c_double))
            if lay.shape[1] == 3:
                rho = np.ascontiguousarray(lay[:, 2])
                self._keep.append(rho)
                o.layer_density = rho.ctypes.data_as(C.POINTER(C.c_double))
        elif key in ("layer_top", "layer_velocity", "layer_density"):
            a = np.ascontiguousarray(value, np.float64)
            self._keep.append(a)
            setattr(o, key, a.ctypes.data_as(C.POINTER(C.c_double)))
        elif key == "receivers":
            r = np.ascontiguousarray(value, np.float64).reshape(-1, 3)
            self._keep.append(r)
            o.nreceivers = len(r)
            o.receivers = r.ctypes.data_as(C.POINTER(C.c_double))
        elif key == "face":
            for i, f in enumerate(_faces("face", value, 6)):
                o.face[i] = f
        else:
            super()._set(o, key, value)

    def set_velocity(self, v: Any) -> None:
        """Replaces the velocity model by v (m/s), an array of shape
        (nz, ny, nx); checked like create (CFL, dispersion): a refused
        model leaves the old one.  A CuPy or PyTorch array is copied to
        the host (the library takes the model from host memory)."""
        v = _host_doubles(v)
        n = tuple(self.info["n"])
        if v.shape != n[::-1]:
            raise InvalidArgument(1, "velocity model of shape %r; the grid "
                                  "is (nz, ny, nx) = %r" % (v.shape, n[::-1]),
                                  "v", str(v.shape))
        w = lib.strata_solver_wave(self._ptr)
        check(lib.strata_wave_set_velocity(
            w, v.ctypes.data_as(C.POINTER(C.c_double))), self.context.ptr,
            "strata_wave_set_velocity")

    def set_density(self, rho: Any) -> None:
        """Sets a density model (kg/m^3; only ratios matter), an array of
        shape (nz, ny, nx), making the solver variable-density: checked
        finite and > 0, and the memory it needs checked first.  A CuPy or
        PyTorch array is copied to the host."""
        rho = _host_doubles(rho)
        n = tuple(self.info["n"])
        if rho.shape != n[::-1]:
            raise InvalidArgument(1, "density model of shape %r; the grid "
                                  "is (nz, ny, nx) = %r" % (rho.shape, n[::-1]),
                                  "rho", str(rho.shape))
        w = lib.strata_solver_wave(self._ptr)
        check(lib.strata_wave_set_density(
            w, rho.ctypes.data_as(C.POINTER(C.c_double))), self.context.ptr,
            "strata_wave_set_density")

    @staticmethod
    def cfl_limit(dims=3, order=8):
        return lib.strata_wave_cfl_limit(dims, order)


class FDTD(Solver):
    """FDTD, 2D, grid units (h = 1, c = 1, dt = courant).

    Options (strata_fdtd_options): n (nx, ny), precision ("f32" default),
    scheme ("explicit", "yee"), courant (<= 1/sqrt(2)), face (one of
    "pec", "mur", "pml", "periodic", a list of 4 or a dict), pml_width,
    waveform ("none", "sine", "gaussian", "ricker"), src (i, j), amplitude,
    period, delay, check_every.  Fields "Ez", "Ez_prev" (explicit) or
    "Ez", "Hx", "Hy" (Yee).
    """
    KIND, _OPTIONS, _INIT, _POINTER = 3, FdtdOptions, \
        "strata_fdtd_options_init", "fdtd"

    def _set(self, o, key, value):
        if key == "face":
            for i, f in enumerate(_faces("fdtd_face", value, 4)):
                o.face[i] = f
        else:
            super()._set(o, key, value)

    @staticmethod
    def courant_limit():
        return lib.strata_fdtd_courant_limit()


class Poisson(Solver):
    """Geometric multigrid for -lap(phi) = psi (disc "fe", "fd") or, with
    disc = "fv", -div(beta grad phi) + alpha phi = psi with beta and alpha
    per cell (set_coefficients), 2D and 3D.

    Options (strata_mg_options): n (the number of sizes sets dims), h,
    precision ("f64" default), bc, disc ("fe", "fd", "fv"), cycle ("v",
    "f", "w"), fmg, pre_fine, pre, post, omega, max_cycles, rtol, atol,
    stall, max_levels, coarse_max_sweeps, coarse_rtol, project, profile,
    smoother ("jacobi", "chebyshev", "gsrb"; fv only but jacobi), bottom
    ("cg", "smooth"), face_mean ("harmonic", "arithmetic"), graph (fv: 1 =
    replay recorded cycles).  Fields "phi" (the solution, zero initial
    guess) and "psi" (the source: set it with ``p["psi"] = a``).  step(n)
    runs n cycles; solve() solves to the tolerance and returns the result
    as a dict.
    """
    KIND, _OPTIONS, _INIT, _POINTER = 4, MgOptions, \
        "strata_mg_options_init", "poisson"

    def set_coefficients(self, beta: Any = None, alpha: Any = None) -> None:
        """Sets beta (> 0) and alpha (>= 0) per cell (disc = "fv"): arrays
        of the grid's shape, (nz, ny, nx) or (ny, nx); None = 1 and 0.
        Every level's coefficients are rebuilt."""
        n = tuple(self.info["n"])
        want = n[::-1] if len(n) == 3 and n[2] > 1 else n[:2][::-1]
        arrs = []
        for name, a in (("beta", beta), ("alpha", alpha)):
            if a is None:
                arrs.append(None)
                continue
            a = _host_doubles(a)
            if a.size != int(np.prod(want)):
                raise InvalidArgument(1, "%s of shape %r; the grid is %r" % (
                    name, a.shape, want), name, str(a.shape))
            arrs.append(a)
        ptr = lambda a: (a.ctypes.data_as(C.POINTER(C.c_double))
                         if a is not None else None)
        mg = lib.strata_solver_mg(self._ptr)
        check(lib.strata_mg_set_coefficients(mg, ptr(arrs[0]), ptr(arrs[1])),
              self.context.ptr, "strata_mg_set_coefficients")

    def solve(self) -> Dict[str, Any]:
        """Solves to the options' tolerance: a dict of strata_mg_result
        (cycles, converged, residual0, residual, factor, history ...)."""
        r = checked(MgResult)()
        check(lib.strata_solver_solve(self._ptr, C.byref(r)),
              self.context.ptr, "strata_solver_solve")
        out = {k: getattr(r, k) for k, _ in MgResult._fields_}
        out["converged"] = bool(r.converged)
        out["stalled"] = bool(r.stalled)
        out["history"] = (np.ctypeslib.as_array(r.history, (r.cycles + 1,))
                          .copy() if r.history else None)
        return out


class Operator(Solver):
    """An operator applied step after step: u <- op(u), u's ghosts filled
    from bc before each application.

    Options (strata_operator_options): n, precision ("f32" default), op
    (a strata.Stencil, default the order-2 Laplacian), bc, variant,
    check_every.  Field "u".
    """
    KIND, _OPTIONS, _INIT, _POINTER = 5, OperatorOptions, \
        "strata_operator_options_init", "op"

    def _set(self, o, key, value):
        if key == "op":
            o.op = value.c
        elif key == "variant":
            b = value.encode() if value else None
            self._keep.append(b)
            o.variant = b
        elif key in ("init", "init_user"):
            raise TypeError("strata.Operator: set u after create "
                            "(s['u'] = array) instead of %s" % key)
        else:
            super()._set(o, key, value)


_KINDS = {"heat": Heat, "wave": Wave, "fdtd": FDTD, "poisson": Poisson,
          "operator": Operator}


def survey(shots: Any, nsteps: int, dir: str, *, moving: bool = False,
           wavelet: Any = None, wavelet_dt: float = 0.0,
           formats: Sequence[str] = ("segy",), stem: str = "shot",
           first_number: int = 1, rank: int = 0, nranks: int = 1,
           resume: bool = True, check_only: bool = False,
           on_shot: Optional[Callable[[int, bool, float], Any]] = None,
           context: Any = None, **wave: Any) -> Dict[str, Any]:
    """Runs a survey (strata_survey_run): one acoustic solver, created once,
    runs every shot of ``shots`` (an (N, 3) array of source positions, m)
    for ``nsteps`` steps and writes its gather DIR/STEM_NNNN.{sgy,npy,h5}
    (``formats``; SEG-Y with full trace headers by default).  ``wave``
    takes Wave's options (n, h, velocity as a number or an (nz, ny, nx)
    array, density, layers, face, f0, receivers, record_every...);
    ``moving``: the receivers are x, y offsets from each shot (z a depth);
    ``wavelet``: samples at ``wavelet_dt`` s in place of the Ricker.  Shots
    already written by the same survey are skipped (``resume``), so a
    killed survey goes on; ``rank``/``nranks`` take a process's share.
    ``on_shot(number, skipped, seconds)`` is called after each shot (its
    number as in the file names; return True to stop there).  ``dir``
    must exist.  Returns what it did: run,
    skipped, stopped, seconds, setup_seconds, steps, device_bytes,
    host_bytes, to_run."""
    ctx = context or default_context()
    o = checked(SurveyOptions)()
    lib.strata_survey_options_init(C.byref(o))
    opts = Wave.__new__(Wave)   # Wave's option rules, no solver
    opts._keep, opts._after = [], []
    keep = opts._keep
    for key in sorted(wave, key=lambda k: k == "dims"):
        value = wave[key]
        if key in ("velocity", "density") and not np.isscalar(value):
            a = _host_doubles(value)
            keep.append(a)
            setattr(o, key, a.ctypes.data_as(C.POINTER(C.c_double)))
            if key == "velocity":
                o.wave.velocity = float(a.max()) if a.size else 0.0
        elif key in ("src", "dist"):
            raise TypeError("strata.survey: %s is not an option of a survey "
                            "(the shots place the source)" % key)
        else:
            opts._set(o.wave, key, value)
    s = np.ascontiguousarray(shots, np.float64).reshape(-1, 3)
    keep.append(s)
    o.nshots = len(s)
    o.shots = s.ctypes.data_as(C.POINTER(C.c_double))
    o.moving = 1 if moving else 0
    if wavelet is not None:
        wl = np.ascontiguousarray(wavelet, np.float64).ravel()
        keep.append(wl)
        o.wavelet = wl.ctypes.data_as(C.POINTER(C.c_double))
        o.wavelet_n = wl.size
        o.wavelet_dt = float(wavelet_dt)
    o.nsteps = int(nsteps)
    bdir, bstem = str(dir).encode(), stem.encode()
    o.dir, o.stem = bdir, bstem
    fm = set(formats)
    unknown = fm - {"segy", "npy", "h5"}
    if unknown:
        raise ValueError("strata.survey: formats are segy, npy, h5, not %s"
                         % ", ".join(sorted(unknown)))
    o.segy, o.npy, o.h5 = ("segy" in fm), ("npy" in fm), ("h5" in fm)
    o.first_number = int(first_number)
    o.rank, o.nranks = int(rank), int(nranks)
    o.resume = 1 if resume else 0
    o.check_only = 1 if check_only else 0
    raised = []

    def shot_done(user, shot, skipped, seconds):
        try:
            return 1 if on_shot(shot, bool(skipped), seconds) else 0
        except BaseException as e:  # stop the survey, raise it after
            raised.append(e)
            return 1

    fn = SHOT_FN(shot_done) if on_shot else SHOT_FN()
    o.on_shot = fn
    r = checked(SurveyResult)()
    st = lib.strata_survey_run(ctx.ptr, C.byref(o), C.byref(r))
    if raised:
        raise raised[0]
    check(st, ctx.ptr, "strata_survey_run")
    return {k: getattr(r, k) for k, _ in SurveyResult._fields_}
