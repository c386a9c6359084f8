"""Every operator family through strata.apply: the C API's result bit for
bit (the same calls made directly through ctypes), and the definition
out(p) = sum w(q) in(p + q) evaluated by NumPy."""
import ctypes as C

import numpy as np
import pytest

import strata
from strata._lib import lib, FieldDesc, Boundary, checked


def c_apply(ctx, stencil, a, ghost, bc_kind=0, bc_value=0.0):
    """The C API by hand: create, write, fill ghosts, apply, read."""
    d = checked(FieldDesc)()
    d.dims = a.ndim
    n = list(reversed(a.shape)) + [1] * (3 - a.ndim)
    for i in range(3):
        d.n[i] = n[i]
    d.ghost = ghost
    d.precision = a.dtype.itemsize
    fin, fout = C.c_void_p(), C.c_void_p()
    assert lib.strata_field_create(ctx.ptr, C.byref(d), C.byref(fin)) == 0
    assert lib.strata_field_create(ctx.ptr, C.byref(d), C.byref(fout)) == 0
    a = np.ascontiguousarray(a)
    assert lib.strata_field_write(fin, a.ctypes.data) == 0
    b = Boundary()
    for i in range(6):
        b.kind[i], b.value[i] = bc_kind, bc_value
    assert lib.strata_field_fill_ghosts(fin, C.byref(b)) == 0
    assert lib.strata_apply(C.byref(stencil.c), fin, fout, None) == 0
    out = np.empty_like(a)
    assert lib.strata_field_read(fout, out.ctypes.data) == 0
    lib.strata_field_destroy(C.byref(fin))
    lib.strata_field_destroy(C.byref(fout))
    return out


def weights(s):
    """{(dx, dy, dz): w} of a strata stencil, from its definition."""
    c, w = s.c, {}
    if s.kind == "star":
        w[(0, 0, 0)] = c.center
        for a in range(c.dims):
            for k in range(1, c.radius + 1):
                for sg in (1, -1):
                    off = [0, 0, 0]
                    off[a] = sg * k
                    w[tuple(off)] = c.coef[a][k]
    elif s.kind == "derivative":
        for k in range(1, c.radius + 1):
            for sg in (1, -1):
                off = [0, 0, 0]
                off[c.axis] = sg * k
                w[tuple(off)] = sg * c.coef[c.axis][k]
    elif s.kind == "box":
        rng = range(-1, 2)
        for dz in (rng if c.dims == 3 else [0]):
            for dy in rng:
                for dx in rng:
                    i = ((dz + 1) * 9 if c.dims == 3 else 0) + (dy + 1) * 3 + dx + 1
                    w[(dx, dy, dz)] = c.box[i]
    else:
        for dz in range(-1, 2):
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    w[(dx, dy, dz)] = c.sym[abs(dx) + abs(dy) + abs(dz)]
    return w


def numpy_apply(s, a, ghost):
    pad = np.pad(a.astype(np.float64), ghost)  # Dirichlet 0
    out = np.zeros(a.shape)
    for (dx, dy, dz), wt in weights(s).items():
        off = [dz, dy, dx][3 - a.ndim:]
        sl = tuple(slice(ghost + o, ghost + o + n) for o, n in zip(off, a.shape))
        out += wt * pad[sl]
    return out


def shape_for(dims):
    return {1: (37,), 2: (19, 23), 3: (11, 13, 17)}[dims]


CASES = (
    [("laplacian", dict(order=o, h=0.5, dims=d)) for o in (2, 4, 6, 8)
     for d in (1, 2, 3)] +
    [("derivative", dict(axis=ax, order=o, h=0.1, dims=3)) for ax in (0, 1, 2)
     for o in (2, 8)] +
    [("derivative", dict(axis=1, order=4, h=1.0, dims=2))] +
    [("star", dict(center=-2.0, coef=[0.5, 0.25, -0.125], dims=3)),
     ("star", dict(center=1.0, coef=[0.3], dims=2)),
     ("box27", dict(c0=8 / 3, c1=0.0, c2=-1 / 6, c3=-1 / 12)),
     ("box", dict(weights=np.arange(27.0).reshape(3, 3, 3) / 27)),
     ("box", dict(weights=np.arange(9.0).reshape(3, 3) - 4)),
     ("laplacian9", dict(h=0.25))])


@pytest.mark.parametrize("name,kw", CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_operator_matches_c_api_and_definition(cpu, name, kw, dtype):
    s = getattr(strata, name)(**kw)
    dims = s.dims
    rng = np.random.default_rng(dims * 7 + s.radius)
    a = rng.uniform(-1, 1, shape_for(dims)).astype(dtype)
    got = strata.apply(s, a, bc=0.0, context=cpu)
    assert isinstance(got, np.ndarray) and got.dtype == dtype
    want = c_apply(cpu, s, a, s.radius)
    assert np.array_equal(got, want)          # bit for bit
    ref = numpy_apply(s, a, s.radius)
    scale = sum(abs(v) for v in weights(s).values())
    tol = (3e-6 if dtype == np.float32 else 1e-13) * scale
    assert np.max(np.abs(got - ref)) <= tol


def test_apply_on_fields_out_and_in_place_arrays(cpu):
    s = strata.laplacian(order=4, h=1.0, dims=2)
    u = strata.Field((20, 30), ghost=2, context=cpu).fill_random(3)
    out = strata.Field((20, 30), ghost=2, context=cpu)
    u.fill_ghosts("periodic")
    r = strata.apply(s, u, out)
    assert r is out
    assert np.array_equal(out.interior, c_apply(cpu, s, u.read(), 2, 2))
    # arrays in strata's layout are used in place, also for out
    a = strata.zeros((20, 30), ghost=2)
    a[...] = u.interior
    o = strata.zeros((20, 30), ghost=2)
    r = strata.apply(s, a, out=o, bc="periodic", context=cpu)
    assert r is o and np.array_equal(o, out.interior)
    # an out array of another layout gets the result copied in
    o2 = np.zeros((20, 30))
    assert strata.apply(s, a, out=o2, bc="periodic", context=cpu) is o2
    assert np.array_equal(o2, out.interior)
    # the operator object is callable; variants are listed
    assert np.array_equal(s(u).interior, out.interior)
    assert s.variants(cpu) and s.points == 9


def test_builder_and_apply_errors(cpu):
    with pytest.raises(strata.InvalidArgument) as e:
        strata.laplacian(order=3)
    assert e.value.arg == "order" and e.value.value == "3"
    with pytest.raises(strata.InvalidArgument) as e:
        strata.laplacian(order=2, h=1e-200)
    assert e.value.arg == "h"
    with pytest.raises(strata.InvalidArgument) as e:
        strata.derivative(axis=3, dims=3)
    assert e.value.arg == "axis"
    with pytest.raises(strata.InvalidArgument):
        strata.box(np.ones(8))
    s = strata.laplacian(order=8, dims=2)
    u = strata.Field((16, 16), ghost=1, context=cpu)
    with pytest.raises(strata.InvalidArgument) as e:
        strata.apply(s, u)
    assert e.value.status == "STRATA_EGHOST" and "ghost" in e.value.message
    v = strata.Field((16, 16), ghost=4, context=cpu)
    with pytest.raises(strata.StrataError) as e:
        strata.apply(s, v, variant="no-such-variant")
    assert e.value.status == "STRATA_ENOTSUP"
    assert "no-such-variant" in e.value.message
    w = strata.Field((16, 17), ghost=4, context=cpu)
    with pytest.raises(strata.InvalidArgument) as e:
        strata.apply(s, v, w)
    assert e.value.status == "STRATA_ESHAPE"
    with pytest.raises(TypeError):
        strata.apply("laplacian", v)
