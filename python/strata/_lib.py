"""The library, loaded with ctypes, and mirrors of its public structs.

ctypes releases the GIL for the length of every call into libstrata, so
other Python threads run while a solver steps.  Each mirror is checked
against the library's own ``sizeof`` (``strata_abi_sizeof``) before it is
first used: a library whose structs changed is refused with a message
rather than read wrongly.
"""
import ctypes as C
import ctypes.util
import os

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("STRATA_LIBRARY")
    if env:
        yield env
    try:
        from . import _build_config  # written by `cmake --install`
        yield _build_config.LIBRARY
    except ImportError:
        pass
    # the build tree: python/strata -> ../../build*/libstrata.so
    root = os.path.dirname(os.path.dirname(_here))
    for b in ("build", "build-cpu", "build-cuda"):
        yield os.path.join(root, b, "libstrata.so")
    found = ctypes.util.find_library("strata")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return C.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "strata: cannot find libstrata.so; build it (cmake --build build) "
        "and install it (cmake --install build), or set STRATA_LIBRARY to "
        "its path. Tried: " + "; ".join(tried or ["nothing"]))


lib, LIBRARY_PATH = _load()

c_size3 = C.c_size_t * 3
c_double3 = C.c_double * 3
POINT_FN = C.CFUNCTYPE(C.c_double, C.c_long, C.c_long, C.c_long, C.c_void_p)
INTERRUPT_FN = C.CFUNCTYPE(C.c_int, C.c_void_p)


class ContextOptions(C.Structure):
    _fields_ = [("backend", C.c_int), ("device", C.c_int),
                ("threads", C.c_int), ("autotune", C.c_int),
                ("tune_cache", C.c_char_p), ("tuning", C.c_char_p),
                ("errbuf", C.c_void_p), ("errbuf_size", C.c_size_t),
                ("interrupt", INTERRUPT_FN), ("interrupt_arg", C.c_void_p)]


class DeviceInfo(C.Structure):
    _fields_ = [("name", C.c_char * 128), ("memory_bytes", C.c_size_t),
                ("memory_free", C.c_size_t), ("multiprocessors", C.c_int),
                ("l2_bytes", C.c_size_t), ("cc_major", C.c_int),
                ("cc_minor", C.c_int), ("threads", C.c_int)]


class FieldDesc(C.Structure):
    _fields_ = [("dims", C.c_int), ("n", c_size3), ("ghost", C.c_int),
                ("precision", C.c_int)]


class FieldLayout(C.Structure):
    _fields_ = [(k, C.c_size_t) for k in
                ("pitch_x", "pitch_y", "planes", "origin", "elements",
                 "bytes")]


class Boundary(C.Structure):
    _fields_ = [("kind", C.c_int * 6), ("value", C.c_double * 6)]


class Stencil(C.Structure):
    _fields_ = [("kind", C.c_int), ("dims", C.c_int), ("radius", C.c_int),
                ("axis", C.c_int), ("center", C.c_double),
                ("coef", (C.c_double * 5) * 3), ("sym", C.c_double * 4),
                ("box", C.c_double * 27)]


class ApplyOptions(C.Structure):
    _fields_ = [("variant", C.c_char_p), ("block", C.c_int * 3)]


class Traces(C.Structure):
    _fields_ = [("ntraces", C.c_size_t), ("nsamples", C.c_size_t),
                ("dt", C.c_double), ("precision", C.c_int),
                ("data", C.c_void_p), ("receivers", C.POINTER(C.c_double)),
                ("source", c_double3), ("shot", C.c_int)]


class HeatOptions(C.Structure):
    _fields_ = [("dims", C.c_int), ("n", c_size3), ("precision", C.c_int),
                ("op", C.c_int), ("D", C.c_double), ("bc", Boundary),
                ("fuse", C.c_int), ("dist", C.c_void_p),
                ("check_every", C.c_int)]


class WaveOptions(C.Structure):
    _fields_ = [("n", c_size3), ("h", C.c_double), ("dt", C.c_double),
                ("precision", C.c_int), ("order", C.c_int),
                ("velocity", C.c_double), ("nlayers", C.c_int),
                ("layer_top", C.POINTER(C.c_double)),
                ("layer_velocity", C.POINTER(C.c_double)),
                ("layer_density", C.POINTER(C.c_double)),
                ("face", C.c_int * 6), ("absorb_width", C.c_int),
                ("absorb_reflection", C.c_double), ("src", c_double3),
                ("f0", C.c_double), ("amplitude", C.c_double),
                ("delay", C.c_double), ("nreceivers", C.c_int),
                ("receivers", C.POINTER(C.c_double)),
                ("record_every", C.c_int), ("min_ppw", C.c_double),
                ("dist", C.c_void_p), ("check_every", C.c_int)]


class FdtdOptions(C.Structure):
    _fields_ = [("n", C.c_size_t * 2), ("precision", C.c_int),
                ("scheme", C.c_int), ("courant", C.c_double),
                ("face", C.c_int * 4), ("pml_width", C.c_int),
                ("waveform", C.c_int), ("src", C.c_double * 2),
                ("amplitude", C.c_double), ("period", C.c_double),
                ("delay", C.c_double), ("dist", C.c_void_p),
                ("check_every", C.c_int)]


class MgOptions(C.Structure):
    _fields_ = [("dims", C.c_int), ("n", c_size3), ("precision", C.c_int),
                ("h", C.c_double), ("bc", Boundary), ("disc", C.c_int),
                ("cycle", C.c_int), ("fmg", C.c_int), ("pre_fine", C.c_int),
                ("pre", C.c_int), ("post", C.c_int), ("omega", C.c_double),
                ("max_cycles", C.c_int), ("rtol", C.c_double),
                ("atol", C.c_double), ("stall", C.c_int),
                ("max_levels", C.c_int), ("coarse_max_sweeps", C.c_int),
                ("coarse_rtol", C.c_double), ("project", C.c_int),
                ("profile", C.c_int), ("smoother", C.c_int),
                ("bottom", C.c_int), ("face_mean", C.c_int),
                ("graph", C.c_int), ("dist", C.c_void_p),
                ("agglomerate", C.c_int)]


class MgResult(C.Structure):
    _fields_ = [("cycles", C.c_int), ("converged", C.c_int),
                ("stalled", C.c_int), ("residual0", C.c_double),
                ("residual", C.c_double), ("relative", C.c_double),
                ("factor", C.c_double), ("last_factor", C.c_double),
                ("source_mean", C.c_double), ("seconds", C.c_double),
                ("history", C.POINTER(C.c_double))]


class OperatorOptions(C.Structure):
    _fields_ = [("dims", C.c_int), ("n", c_size3), ("precision", C.c_int),
                ("op", Stencil), ("bc", Boundary), ("variant", C.c_char_p),
                ("init", POINT_FN), ("init_user", C.c_void_p),
                ("dist", C.c_void_p), ("check_every", C.c_int)]


class SolverOptions(C.Structure):
    _fields_ = [("kind", C.c_int), ("heat", C.POINTER(HeatOptions)),
                ("wave", C.POINTER(WaveOptions)),
                ("fdtd", C.POINTER(FdtdOptions)),
                ("poisson", C.POINTER(MgOptions)),
                ("op", C.POINTER(OperatorOptions)), ("tag", C.c_uint64)]


class SolverInfo(C.Structure):
    _fields_ = [("kind", C.c_int), ("dims", C.c_int), ("n", c_size3),
                ("precision", C.c_int), ("h", C.c_double),
                ("dt", C.c_double), ("time", C.c_double),
                ("steps", C.c_long), ("device_bytes", C.c_size_t),
                ("host_bytes", C.c_size_t),
                ("bytes_per_point_step", C.c_double),
                ("last_steps", C.c_long), ("last_seconds", C.c_double),
                ("points_per_s", C.c_double), ("residual0", C.c_double),
                ("residual", C.c_double),
                ("history", C.POINTER(C.c_double)),
                ("source_mean", C.c_double)]


class ModelFile(C.Structure):
    _fields_ = [("path", C.c_char_p), ("format", C.c_int),
                ("axes", C.c_char_p), ("ndim", C.c_int), ("shape", c_size3),
                ("precision", C.c_int), ("big_endian", C.c_int),
                ("segy_geometry", C.c_int), ("segy_nx", C.c_size_t),
                ("inline_byte", C.c_int), ("crossline_byte", C.c_int),
                ("spacing", c_double3), ("origin", c_double3)]


class Model(C.Structure):
    _fields_ = [("dims", C.c_int), ("n", c_size3), ("spacing", c_double3),
                ("origin", c_double3), ("data", C.POINTER(C.c_double))]


SHOT_FN = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_int, C.c_int, C.c_double)


class SurveyOptions(C.Structure):
    _fields_ = [("wave", WaveOptions), ("velocity", C.POINTER(C.c_double)),
                ("density", C.POINTER(C.c_double)), ("nshots", C.c_int),
                ("shots", C.POINTER(C.c_double)), ("moving", C.c_int),
                ("wavelet", C.POINTER(C.c_double)),
                ("wavelet_n", C.c_size_t), ("wavelet_dt", C.c_double),
                ("nsteps", C.c_long), ("dir", C.c_char_p),
                ("stem", C.c_char_p), ("segy", C.c_int), ("npy", C.c_int),
                ("h5", C.c_int), ("first_number", C.c_int),
                ("rank", C.c_int), ("nranks", C.c_int), ("resume", C.c_int),
                ("check_only", C.c_int), ("on_shot", SHOT_FN),
                ("user", C.c_void_p)]


class SurveyResult(C.Structure):
    _fields_ = [("run", C.c_int), ("skipped", C.c_int),
                ("stopped", C.c_int), ("seconds", C.c_double),
                ("setup_seconds", C.c_double), ("steps", C.c_long),
                ("device_bytes", C.c_size_t), ("host_bytes", C.c_size_t),
                ("to_run", C.c_int)]


MIRRORS = {
    "strata_context_options": ContextOptions,
    "strata_device_info": DeviceInfo,
    "strata_field_desc": FieldDesc,
    "strata_field_layout": FieldLayout,
    "strata_boundary": Boundary,
    "strata_stencil": Stencil,
    "strata_apply_options": ApplyOptions,
    "strata_traces": Traces,
    "strata_heat_options": HeatOptions,
    "strata_wave_options": WaveOptions,
    "strata_fdtd_options": FdtdOptions,
    "strata_mg_options": MgOptions,
    "strata_mg_result": MgResult,
    "strata_operator_options": OperatorOptions,
    "strata_solver_options": SolverOptions,
    "strata_solver_info": SolverInfo,
    "strata_model_file": ModelFile,
    "strata_model": Model,
    "strata_survey_options": SurveyOptions,
    "strata_survey_result": SurveyResult,
}
_checked = set()


def checked(cls):
    """cls, after checking once that its size is the library's."""
    if cls in _checked:
        return cls
    name = next(k for k, v in MIRRORS.items() if v is cls)
    want = lib.strata_abi_sizeof(name.encode())
    if want != C.sizeof(cls):
        raise ImportError(
            "strata: the Python mirror of %s has %d bytes and the library's "
            "(%s) %d: the package and libstrata.so are of different "
            "versions; update python/strata/_lib.py" %
            (name, C.sizeof(cls), LIBRARY_PATH, want))
    _checked.add(cls)
    return cls


def _sig(name, res, *args):
    f = getattr(lib, name)
    f.restype = res
    f.argtypes = list(args)


P = C.c_void_p
S = C.c_int  # strata_status
_sig("strata_abi_sizeof", C.c_size_t, C.c_char_p)
_sig("strata_strerror", C.c_char_p, S)
_sig("strata_status_name", C.c_char_p, S)
_sig("strata_version", C.c_char_p)
_sig("strata_build_info", C.c_char_p)
_sig("strata_backend_available", C.c_int, C.c_int, C.c_char_p, C.c_size_t)
_sig("strata_context_options_init", None, C.POINTER(ContextOptions))
_sig("strata_context_create", S, C.POINTER(P), C.POINTER(ContextOptions))
_sig("strata_context_destroy", None, C.POINTER(P))
_sig("strata_context_backend", C.c_int, P)
_sig("strata_context_error", C.c_char_p, P)
_sig("strata_context_error_arg", C.c_char_p, P)
_sig("strata_context_error_value", C.c_char_p, P)
_sig("strata_context_sync", S, P)
_sig("strata_context_device_info", S, P, C.POINTER(DeviceInfo))
_sig("strata_field_create", S, P, C.POINTER(FieldDesc), C.POINTER(P))
_sig("strata_field_wrap", S, P, C.POINTER(FieldDesc), P, C.c_size_t,
     C.POINTER(P))
_sig("strata_field_destroy", None, C.POINTER(P))
_sig("strata_field_get_desc", S, P, C.POINTER(FieldDesc))
_sig("strata_field_get_layout", S, P, C.POINTER(FieldLayout))
_sig("strata_field_layout_for", S, C.POINTER(FieldDesc),
     C.POINTER(FieldLayout))
_sig("strata_field_data", P, P)
_sig("strata_field_write", S, P, P)
_sig("strata_field_read", S, P, P)
_sig("strata_field_write_ghosted", S, P, P)
_sig("strata_field_read_ghosted", S, P, P)
_sig("strata_field_fill", S, P, C.c_double)
_sig("strata_field_fill_random", S, P, C.c_uint64, C.c_double, C.c_double)
_sig("strata_field_copy", S, P, P)
_sig("strata_field_norm", S, P, C.c_int, C.POINTER(C.c_double))
_sig("strata_field_diff", S, P, P, C.c_int, C.POINTER(C.c_double))
_sig("strata_field_fill_ghosts", S, P, C.POINTER(Boundary))
_sig("strata_field_save_npy", S, P, C.c_char_p)
_sig("strata_bc_parse", S, C.c_char_p, C.POINTER(C.c_int))
_sig("strata_stencil_laplacian", S, C.POINTER(Stencil), C.c_int, C.c_int,
     C.c_double)
_sig("strata_stencil_star", S, C.POINTER(Stencil), C.c_int, C.c_int,
     C.c_double, C.POINTER(C.c_double))
_sig("strata_stencil_derivative", S, C.POINTER(Stencil), C.c_int, C.c_int,
     C.c_int, C.c_double)
_sig("strata_stencil_box_symmetric", S, C.POINTER(Stencil), C.c_double,
     C.c_double, C.c_double, C.c_double)
_sig("strata_stencil_box", S, C.POINTER(Stencil), C.c_int,
     C.POINTER(C.c_double))
_sig("strata_stencil_laplacian9", S, C.POINTER(Stencil), C.c_double)
_sig("strata_stencil_validate", S, C.POINTER(Stencil))
_sig("strata_stencil_points", C.c_int, C.POINTER(Stencil))
_sig("strata_apply", S, C.POINTER(Stencil), P, P, C.POINTER(ApplyOptions))
_sig("strata_variants", S, P, C.POINTER(Stencil), C.c_char_p, C.c_size_t)
_sig("strata_heat_options_init", None, C.POINTER(HeatOptions))
_sig("strata_wave_options_init", None, C.POINTER(WaveOptions))
_sig("strata_fdtd_options_init", None, C.POINTER(FdtdOptions))
_sig("strata_mg_options_init", None, C.POINTER(MgOptions))
_sig("strata_operator_options_init", None, C.POINTER(OperatorOptions))
_sig("strata_solver_options_init", None, C.POINTER(SolverOptions), C.c_int)
_sig("strata_solver_create", S, P, C.POINTER(SolverOptions), C.POINTER(P))
_sig("strata_solver_estimate", S, P, C.POINTER(SolverOptions),
     C.POINTER(C.c_size_t), C.POINTER(C.c_size_t))
_sig("strata_solver_destroy", None, C.POINTER(P))
_sig("strata_solver_step", S, P, C.c_long)
_sig("strata_solver_solve", S, P, C.POINTER(MgResult))
_sig("strata_solver_field_count", C.c_int, P)
_sig("strata_solver_field_name", C.c_char_p, P, C.c_int)
_sig("strata_solver_field_unit", C.c_char_p, P, C.c_int)
_sig("strata_solver_field_index", C.c_int, P, C.c_char_p)
_sig("strata_solver_field", P, P, C.c_int)
_sig("strata_solver_read", S, P, C.c_int, P)
_sig("strata_solver_check", S, P)
_sig("strata_solver_traces", S, P, C.POINTER(Traces))
_sig("strata_solver_wave", P, P)
_sig("strata_solver_mg", P, P)
_sig("strata_solver_get_info", S, P, C.POINTER(SolverInfo))
_sig("strata_solver_state_size", S, P, C.POINTER(C.c_size_t))
_sig("strata_solver_save_state", S, P, P, C.c_size_t)
_sig("strata_solver_load_state", S, P, P, C.c_size_t)
_sig("strata_solver_save", S, P, C.c_char_p)
_sig("strata_solver_load", S, P, C.c_char_p)
_sig("strata_wave_set_velocity", S, P, C.POINTER(C.c_double))
_sig("strata_wave_set_density", S, P, C.POINTER(C.c_double))
_sig("strata_mg_set_coefficients", S, P, C.POINTER(C.c_double),
     C.POINTER(C.c_double))
_sig("strata_heat_stability_limit", C.c_double, C.c_int, C.c_int)
_sig("strata_wave_cfl_limit", C.c_double, C.c_int, C.c_int)
_sig("strata_fdtd_courant_limit", C.c_double)
_sig("strata_model_file_init", None, C.POINTER(ModelFile))
_sig("strata_model_read", S, P, C.POINTER(ModelFile), C.POINTER(Model))
_sig("strata_model_free", None, C.POINTER(Model))
_sig("strata_model_check", S, P, C.POINTER(Model), C.c_char_p,
     C.POINTER(C.c_double), C.POINTER(C.c_double))
_sig("strata_model_resample", S, P, C.POINTER(Model), c_size3, C.c_double,
     C.c_int, C.POINTER(C.c_double))
_sig("strata_host_memory_available", C.c_size_t)
_sig("strata_survey_options_init", None, C.POINTER(SurveyOptions))
_sig("strata_survey_run", S, P, C.POINTER(SurveyOptions),
     C.POINTER(SurveyResult))
