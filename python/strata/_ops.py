"""Operators as data (strata_stencil) and their application."""
import ctypes as C
from typing import Any, List, Optional, Sequence

import numpy as np

from . import _arrays
from ._core import Field, default_context
from ._errors import InvalidArgument, check, error
from ._lib import ApplyOptions, Stencil as _Stencil, checked, lib

_KINDS = {1: "star", 2: "derivative", 3: "box", 4: "box_symmetric"}


class Stencil:
    """An operator: out(p) = sum over its points q of w(q) in(p + q).

    Made by strata.laplacian, derivative, star, box, box27 and
    laplacian9; ``s.radius`` is the ghost width it needs, ``s.points`` its
    number of points, ``s.c`` the strata_stencil struct itself.
    """

    def __init__(self, c, what):
        self.c = c
        self.what = what

    kind = property(lambda self: _KINDS[self.c.kind])
    dims = property(lambda self: self.c.dims)
    radius = property(lambda self: self.c.radius)
    points = property(lambda self: lib.strata_stencil_points(C.byref(self.c)))

    def variants(self, context: Any = None) -> List[str]:
        """The kernel variants the context's backend has for this
        operator."""
        ctx = context or default_context()
        buf = C.create_string_buffer(4096)
        check(lib.strata_variants(ctx.ptr, C.byref(self.c), buf, 4096),
              ctx.ptr, "strata_variants")
        return buf.value.decode().split(",") if buf.value else []

    def __call__(self, u, out=None, bc=None, variant=None):
        """apply(self, u, out, bc, variant)."""
        return apply(self, u, out, bc, variant)

    def __repr__(self):
        return "strata.%s" % self.what


def _built(status, c, what, arg, value):
    if status != 0:
        raise error(status, "%s: %s is out of range (the builder refused "
                    "it)" % (what, arg), arg, str(value), what)
    return Stencil(c, what)


def laplacian(order: int = 2, h: float = 1.0, dims: int = 3) -> Stencil:
    """The central Laplacian of order 2, 4, 6 or 8 (radius order/2) on
    spacing h in 1, 2 or 3 dimensions (3D order 8: the 25-point stencil of
    seismic wave propagation)."""
    c = checked(_Stencil)()
    st = lib.strata_stencil_laplacian(C.byref(c), dims, order, h)
    bad = ("dims", dims) if dims not in (1, 2, 3) else \
        ("order", order) if order not in (2, 4, 6, 8) else ("h", h)
    return _built(st, c, "laplacian(order=%r, h=%r, dims=%r)"
                  % (order, h, dims), *bad)


def derivative(axis: int, order: int = 2, h: float = 1.0,
               dims: int = 3) -> Stencil:
    """The central first derivative d/d(axis) (0 = x, 1 = y, 2 = z) of
    order 2, 4, 6 or 8 on spacing h."""
    c = checked(_Stencil)()
    st = lib.strata_stencil_derivative(C.byref(c), dims, axis, order, h)
    bad = ("dims", dims) if dims not in (1, 2, 3) else \
        ("axis", axis) if not 0 <= axis < dims else \
        ("order", order) if order not in (2, 4, 6, 8) else ("h", h)
    return _built(st, c, "derivative(axis=%r, order=%r, h=%r, dims=%r)"
                  % (axis, order, h, dims), *bad)


def star(center: float, coef: Sequence[float], dims: int = 3) -> Stencil:
    """An isotropic star: weight center at the point, coef[k-1] at offsets
    +-k along every axis (radius len(coef), 1..4)."""
    c = checked(_Stencil)()
    k = (C.c_double * max(1, len(coef)))(*coef)
    st = lib.strata_stencil_star(C.byref(c), dims, len(coef), center, k)
    return _built(st, c, "star(center=%r, coef=%r, dims=%r)"
                  % (center, list(coef), dims), "radius", len(coef))


def box27(c0: float, c1: float = 0.0, c2: float = 0.0,
          c3: float = 0.0) -> Stencil:
    """The symmetric 27-point 3D stencil: c0 at the centre, c1 on the 6
    faces, c2 on the 12 edges, c3 on the 8 corners.  (1, -1/6, 0, 0) is
    the 7-point FD stencil; (8/3, 0, -1/6, -1/12) the trilinear FE one."""
    c = checked(_Stencil)()
    st = lib.strata_stencil_box_symmetric(C.byref(c), c0, c1, c2, c3)
    return _built(st, c, "box27(%r, %r, %r, %r)" % (c0, c1, c2, c3),
                  "sym", (c0, c1, c2, c3))


def box(weights: Any) -> Stencil:
    """A general 3x3 (2D) or 3x3x3 (3D) box: weights indexed [dy][dx] or
    [dz][dy][dx] (offsets -1, 0, 1), or flat 9 or 27 values."""
    w = np.asarray(weights, np.float64)
    dims = 2 if w.size == 9 else 3 if w.size == 27 else 0
    if not dims:
        raise InvalidArgument(1, "box: %d weights; a box has 9 (2D) or 27 "
                              "(3D)" % w.size, "K", str(w.size))
    c = checked(_Stencil)()
    k = (C.c_double * w.size)(*w.ravel())
    st = lib.strata_stencil_box(C.byref(c), dims, k)
    return _built(st, c, "box(%dD)" % dims, "K", "set")


def laplacian9(h: float = 1.0) -> Stencil:
    """The compact 9-point 2D Laplacian (1/(6h^2)) [1 4 1; 4 -20 4; 1 4 1]."""
    c = checked(_Stencil)()
    st = lib.strata_stencil_laplacian9(C.byref(c), h)
    return _built(st, c, "laplacian9(h=%r)" % h, "h", h)


def _as_field(a, ghost, ctx, what):
    if isinstance(a, Field):
        return a, False
    f = Field.from_array(a, ghost=ghost, context=ctx)
    return f, True


def apply(op: Stencil, u: Any, out: Any = None, bc: Any = None,
          variant: Optional[str] = None, context: Any = None) -> Any:
    """out = op(u) over the interior.

    u: a Field, or an array (NumPy, CuPy, PyTorch: used in place when it
    has strata's layout with ghost >= op.radius, else copied once into a
    field).  bc: the boundary conditions the ghost layers of u are filled
    from first (strata.boundary's forms); None leaves a Field's ghosts as
    they are, and gives an array Dirichlet 0 (zero ghosts).  out: None (a
    new field, returned as u's kind: a Field for a Field, else the
    interior as an array of u's library), a Field, or an array (written in
    place when its layout allows, else the result is copied into it).
    variant: the kernel variant (op.variants()); None = the fastest.
    Returns out.
    """
    if not isinstance(op, Stencil):
        raise TypeError("strata.apply: op must be a strata.Stencil "
                        "(strata.laplacian(...), ...), not %s"
                        % type(op).__name__)
    ctx = context or (u.context if isinstance(u, Field) else
                      out.context if isinstance(out, Field) else
                      default_context())
    uf, made = _as_field(u, op.radius, ctx, "u")
    if bc is not None:
        uf.fill_ghosts(bc)
    elif made and uf._keep is not None:
        uf.fill_ghosts("dirichlet")  # the caller's ghost memory: zero it
    result = out
    if out is None:
        of = Field(uf.shape, uf.dtype, uf.ghost, ctx)
    elif isinstance(out, Field):
        of = out
    else:
        fo = _arrays.describe(out)
        try:
            of = Field.from_array(out, ghost=uf.ghost, context=ctx,
                                  copy=False)
        except (InvalidArgument, TypeError):
            of = Field(uf.shape, uf.dtype, uf.ghost, ctx)
            result = (out, fo)
    o = checked(ApplyOptions)()
    venc = variant.encode() if variant else None
    o.variant = venc
    check(lib.strata_apply(C.byref(op.c), uf._ptr, of._ptr, C.byref(o)),
          ctx.ptr, "strata_apply")
    if ctx.backend == "cuda":
        ctx.sync()
    if out is None:
        if isinstance(u, Field):
            return of
        fu = _arrays.describe(u)
        if fu.device == "cpu" and ctx.backend == "cpu":
            return of.interior
        if fu.device == "cpu":
            return of.read()
        from ._core import _device_view_like
        return _device_view_like(of, fu)
    if isinstance(result, tuple):
        arr, fo = result
        if fo.device == "cpu":
            arr[...] = of.numpy()
        else:
            from ._core import _device_view_like
            arr[...] = _device_view_like(of, fo)
        return arr
    return out
