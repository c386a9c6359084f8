"""strata: finite-difference stencils and solvers (heat, acoustic wave,
FDTD, multigrid Poisson) on GPUs and CPUs, from Python.

    import strata, numpy as np
    w = strata.Wave(n=(128, 128, 128), h=10.0, velocity=2000.0, f0=10.0)
    w.step(500)
    p = w.array("p")          # a NumPy view of the solver's own memory

Fields, operators, solvers and case files; NumPy arrays on the CPU, CuPy
and PyTorch arrays on a GPU, without copies.  Arrays are in NumPy's order
(nz, ny, nx): element [k, j, i] is grid point (i, j, k); options named as
in strata.h keep the library's (x, y, z) order (n, src, receivers).
Errors raise strata.StrataError (subclasses by status) with the library's
message and the failing option (``e.arg``, ``e.value``).
See help(strata.Field), help(strata.apply), help(strata.Wave),
help(strata.run_case) and docs/python.md.
"""
from ._lib import LIBRARY_PATH, lib as _clib
from ._errors import (StrataError, InvalidArgument, UnstableError,
                      NonFiniteError, OutOfMemory, NotSupported, IOFailure,
                      DeviceError, Interrupted)
from ._core import (Context, Field, default_context, set_default_context,
                    backend_available, boundary, layout_for, empty, zeros)
from ._ops import (Stencil, laplacian, derivative, star, box, box27,
                   laplacian9, apply)
from ._solvers import (Solver, Heat, Wave, FDTD, Poisson, Operator,
                       estimate, survey)
from ._case import run_case, CaseResult, CaseError
from ._model import Model, read_model, host_memory_available

__version__ = _clib.strata_version().decode()
build_info = _clib.strata_build_info().decode()

__all__ = [
    "StrataError", "InvalidArgument", "UnstableError", "NonFiniteError",
    "OutOfMemory", "NotSupported", "IOFailure", "DeviceError",
    "Interrupted", "Context", "Field", "default_context",
    "set_default_context", "backend_available", "boundary", "layout_for",
    "empty", "zeros", "Stencil", "laplacian", "derivative", "star", "box",
    "box27", "laplacian9", "apply", "Solver", "Heat", "Wave", "FDTD",
    "Poisson", "Operator", "estimate", "run_case", "CaseResult", "CaseError",
    "survey", "Model", "read_model", "host_memory_available", "LIBRARY_PATH",
    "build_info"]
