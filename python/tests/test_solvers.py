"""The solver classes: the kinds' own C API's results bit for bit (called
directly through ctypes), physics checks, fields as views, traces,
checkpoints, progress, and the library's refusals as exceptions."""
import ctypes as C

import numpy as np
import pytest

import strata
from strata import _lib
from strata._lib import lib, checked

P = C.c_void_p
for kind, opts in (("heat", _lib.HeatOptions), ("wave", _lib.WaveOptions),
                   ("fdtd", _lib.FdtdOptions)):
    getattr(lib, "strata_%s_create" % kind).argtypes = [P, C.POINTER(opts),
                                                        C.POINTER(P)]
    getattr(lib, "strata_%s_step" % kind).argtypes = [P, C.c_long]
    getattr(lib, "strata_%s_destroy" % kind).argtypes = [C.POINTER(P)]
lib.strata_heat_read.argtypes = [P, P]
lib.strata_wave_read.argtypes = [P, P]
lib.strata_fdtd_read.argtypes = [P, C.c_int, P]
lib.strata_heat_write.argtypes = [P, P]
lib.strata_wave_traces.argtypes = [P, C.POINTER(C.c_double), C.c_size_t,
                                   C.POINTER(C.c_size_t)]
lib.strata_mg_create.argtypes = [P, C.POINTER(_lib.MgOptions), C.POINTER(P)]
lib.strata_mg_solve.argtypes = [P, P, P, C.POINTER(_lib.MgResult)]
lib.strata_mg_destroy.argtypes = [C.POINTER(P)]


def c_heat(ctx, n, D, u0, steps, bc_kind=0):
    o = checked(_lib.HeatOptions)()
    lib.strata_heat_options_init(C.byref(o))
    o.dims = len(n)
    for a in range(3):
        o.n[a] = n[a] if a < len(n) else 1
    o.D = D
    for i in range(6):
        o.bc.kind[i] = bc_kind
    h = P()
    assert lib.strata_heat_create(ctx.ptr, C.byref(o), C.byref(h)) == 0
    u0 = np.ascontiguousarray(u0, np.float64)
    assert lib.strata_heat_write(h, u0.ctypes.data) == 0
    assert lib.strata_heat_step(h, steps) == 0
    out = np.empty_like(u0)
    assert lib.strata_heat_read(h, out.ctypes.data) == 0
    lib.strata_heat_destroy(C.byref(h))
    return out


def gaussian(shape, width):
    idx = np.indices(shape, dtype=np.float64)
    r2 = sum((i - (s - 1) / 2) ** 2 for i, s in zip(idx, shape))
    return np.exp(-r2 / (2 * width ** 2))


def test_heat_equals_c_api_and_decays_as_the_analytic_mode(cpu):
    n = (48, 40)
    u0 = gaussian(n[::-1], 5.0)
    h = strata.Heat(n=n, D=0.2, context=cpu)
    assert h.field_names == ["u"]
    h["u"] = u0
    h.step(200)
    assert h.steps == 200
    assert np.array_equal(h.read("u"), c_heat(cpu, n, 0.2, u0, 200))
    assert np.array_equal(h["u"], h.read("u"))
    # a periodic sine mode decays by (1 - 4 D sin^2(pi k / N)) per step
    N = 64
    x = np.arange(N)
    mode = np.sin(2 * np.pi * 3 * x / N)[None, :] * np.ones((8, 1))
    p = strata.Heat(n=(N, 8), D=0.2, bc="periodic", context=cpu)
    p["u"] = mode
    p.step(100)
    g = (1 - 4 * 0.2 * np.sin(np.pi * 3 / N) ** 2) ** 100
    assert np.max(np.abs(p["u"] - g * mode)) < 1e-12


def test_heat_chunked_progress_is_the_same_bits(cpu):
    u0 = gaussian((30, 30), 4.0)
    a = strata.Heat(n=(30, 30), D=0.24, fuse=4, context=cpu)
    b = strata.Heat(n=(30, 30), D=0.24, fuse=4, context=cpu)
    a["u"] = u0
    b["u"] = u0
    a.step(103)
    seen = []
    b.step(103, progress=lambda done, total: seen.append((done, total)),
           chunk=10)
    assert seen[-1] == (103, 103) and len(seen) == 11
    assert np.array_equal(a.read(), b.read())


def test_heat_refusals_name_the_option(cpu):
    with pytest.raises(strata.UnstableError) as e:
        strata.Heat(n=(32, 32), D=0.3, context=cpu)
    assert e.value.arg == "D" and e.value.value == "0.3"
    assert "0.25" in e.value.message
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Heat(n=(32, 32), fuse=9, context=cpu)
    assert e.value.arg == "fuse"
    with pytest.raises(TypeError, match="unknown option 'velocity'"):
        strata.Heat(n=(8, 8), velocity=3.0, context=cpu)
    with pytest.raises(strata.InvalidArgument):
        strata.Heat(n=(8, 8), op="fe", context=cpu)
    h = strata.Heat(n=(8, 8), context=cpu)
    with pytest.raises(strata.InvalidArgument) as e:
        h.step(-1)
    assert e.value.arg == "nsteps"
    with pytest.raises(KeyError):
        h.field("p")


def wave_options(**kw):
    base = dict(n=(40, 36, 32), h=10.0, velocity=2000.0, f0=12.0,
                absorb_width=6, receivers=[[100.0, 180.0, 50.0],
                                          [250.0, 180.0, 50.0]])
    base.update(kw)
    return base


def test_wave_equals_c_api_with_traces(cpu):
    w = strata.Wave(context=cpu, **wave_options())
    w.step(60)
    o = checked(_lib.WaveOptions)()
    lib.strata_wave_options_init(C.byref(o))
    for a, v in enumerate((40, 36, 32)):
        o.n[a] = v
    o.h, o.velocity, o.f0, o.absorb_width = 10.0, 2000.0, 12.0, 6
    rec = np.array([[100.0, 180.0, 50.0], [250.0, 180.0, 50.0]])
    o.nreceivers = 2
    o.receivers = rec.ctypes.data_as(C.POINTER(C.c_double))
    cw = P()
    assert lib.strata_wave_create(cpu.ptr, C.byref(o), C.byref(cw)) == 0
    assert lib.strata_wave_step(cw, 60) == 0
    p = np.empty((32, 36, 40), np.float32)
    assert lib.strata_wave_read(cw, p.ctypes.data) == 0
    ns = C.c_size_t()
    tr = np.empty(2 * 61)
    assert lib.strata_wave_traces(cw, tr.ctypes.data_as(
        C.POINTER(C.c_double)), tr.size, C.byref(ns)) == 0
    lib.strata_wave_destroy(C.byref(cw))
    assert np.array_equal(w.read("p"), p)
    t = w.traces()
    assert t.data.shape == (2, ns.value) == (2, 61)
    assert np.array_equal(t.data.ravel(), tr[:2 * ns.value])
    assert np.array_equal(t.receivers, rec)
    assert t.dt == w.dt > 0 and np.abs(t.data).max() > 0
    assert w.unit("p") == "Pa" and w.field_names == ["p", "p_prev"]


def test_wave_velocity_model_and_checkpoints(cpu, tmp_path):
    v = np.full((32, 36, 40), 2000.0)
    v[16:] = 2500.0
    a = strata.Wave(context=cpu, **wave_options(velocity=v))
    a.step(30)
    path = tmp_path / "w.ckpt"
    a.save(path)
    img = a.state()
    a.step(30)
    b = strata.Wave(context=cpu, **wave_options(velocity=v))
    b.load(path)
    assert b.steps == 30
    b.step(30)
    assert np.array_equal(a.read(), b.read())
    assert np.array_equal(a.traces().data, b.traces().data)
    c = strata.Wave(context=cpu, **wave_options(velocity=v))
    c.load_state(img).step(30)
    assert np.array_equal(a.read(), c.read())
    # a state of other options is refused with the library's message
    d = strata.Wave(context=cpu, **wave_options(n=(40, 36, 30)))
    with pytest.raises(strata.InvalidArgument):
        d.load(path)
    with pytest.raises(strata.IOFailure) as e:
        d.load(tmp_path / "missing.ckpt")
    assert "missing.ckpt" in e.value.message


def test_wave_refusals_name_the_option(cpu):
    with pytest.raises(strata.UnstableError) as e:
        strata.Wave(context=cpu, **wave_options(dt=0.01))
    assert e.value.arg == "dt" and e.value.value == "0.01"
    with pytest.raises(strata.UnstableError) as e:
        strata.Wave(context=cpu, **wave_options(f0=200.0))
    assert e.value.arg in ("f0", "min_ppw", "h")
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Wave(context=cpu, **wave_options(
            receivers=[[1e6, 0.0, 0.0]]))
    assert e.value.arg == "receivers[0]"
    w = strata.Wave(context=cpu, **wave_options())
    bad = np.full((32, 36, 40), 2000.0)
    bad[3, 4, 5] = -1.0
    with pytest.raises(strata.InvalidArgument) as e:
        w.set_velocity(bad)
    assert e.value.message


def test_wave_blow_up_raises_non_finite(cpu):
    w = strata.Wave(context=cpu, **wave_options(check_every=5))
    w.field("p").interior[10, 10, 10] = np.nan
    with pytest.raises(strata.NonFiniteError) as e:
        w.step(20)
    assert "NaN" in e.value.message or "nan" in e.value.message


def test_fdtd_equals_c_api(cpu):
    for scheme, comps in (("explicit", ["Ez", "Ez_prev"]),
                          ("yee", ["Ez", "Hx", "Hy"])):
        f = strata.FDTD(n=(64, 48), scheme=scheme, face="mur" if
                        scheme == "explicit" else "pml", pml_width=8,
                        context=cpu)
        assert f.field_names == comps
        f.step(50)
        o = checked(_lib.FdtdOptions)()
        lib.strata_fdtd_options_init(C.byref(o))
        o.n[0], o.n[1] = 64, 48
        o.scheme = 0 if scheme == "explicit" else 1
        o.pml_width = 8
        for i in range(4):
            o.face[i] = 1 if scheme == "explicit" else 2
        cf = P()
        assert lib.strata_fdtd_create(cpu.ptr, C.byref(o), C.byref(cf)) == 0
        assert lib.strata_fdtd_step(cf, 50) == 0
        for i, name in enumerate(comps):
            want = np.empty((48, 64), np.float32)
            comp = {"Ez": 0, "Hx": 1, "Hy": 2, "Ez_prev": 3}[name]
            assert lib.strata_fdtd_read(cf, comp, want.ctypes.data) == 0
            assert np.array_equal(f.read(name), want), name
        lib.strata_fdtd_destroy(C.byref(cf))
    with pytest.raises(strata.UnstableError) as e:
        strata.FDTD(n=(32, 32), courant=0.8, context=cpu)
    assert e.value.arg == "courant"


def test_poisson_equals_c_api_and_solves(cpu):
    n = (31, 31, 31)
    hh = 1.0 / 32
    x = (np.arange(1, 32) * hh)
    X = x[None, None, :]
    Y = x[None, :, None]
    Z = x[:, None, None]
    exact = np.sin(np.pi * X) * np.sin(np.pi * Y) * np.sin(np.pi * Z)
    psi = 3 * np.pi ** 2 * exact
    p = strata.Poisson(n=n, h=hh, disc="fd", context=cpu)
    assert p.field_names == ["phi", "psi"]
    p["psi"] = psi
    r = p.solve()
    assert r["converged"] and r["cycles"] >= 1
    assert r["history"].shape == (r["cycles"] + 1,)
    phi = p.read("phi")
    assert np.max(np.abs(phi - exact)) < 2e-3   # the O(h^2) error
    # the C API: strata_mg_solve on fields of its own
    o = checked(_lib.MgOptions)()
    lib.strata_mg_options_init(C.byref(o))
    o.dims = 3
    for a in range(3):
        o.n[a] = 31
    o.h, o.disc = hh, 0
    mg = P()
    assert lib.strata_mg_create(cpu.ptr, C.byref(o), C.byref(mg)) == 0
    fphi = strata.Field((31, 31, 31), ghost=1, context=cpu)
    fpsi = strata.Field.from_array(psi, context=cpu)
    res = _lib.MgResult()
    assert lib.strata_mg_solve(mg, fphi.ptr, fpsi.ptr, C.byref(res)) == 0
    assert res.cycles == r["cycles"]
    assert np.array_equal(fphi.read(), phi)
    lib.strata_mg_destroy(C.byref(mg))
    # step(n): n cycles, the residual falling
    q = strata.Poisson(n=(33, 33), h=1 / 34, context=cpu)
    q["psi"] = 1.0
    q.step(3)
    i = q.info
    assert i["steps"] == 3 and i["residual"] < i["residual0"]
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Poisson(n=(33, 33), h=-1.0, context=cpu)
    assert e.value.arg == "h"


def test_operator_solver(cpu):
    s = strata.laplacian(order=2, h=1.0, dims=2)
    o = strata.Operator(n=(20, 16), op=s, bc="periodic", precision="f64",
                        context=cpu)
    u0 = np.random.default_rng(2).random((16, 20))
    o["u"] = u0
    o.step(3)
    ref = u0
    for _ in range(3):
        ref = strata.apply(s, ref, bc="periodic", context=cpu).copy()
    assert np.array_equal(o.read(), ref)


def test_estimate_and_lifetimes(cpu):
    hb, db = strata.Heat.estimate(n=(64, 64), context=cpu)
    assert db >= 64 * 64 * 8 and hb >= 0
    assert strata.estimate("wave", context=cpu, **wave_options())[1] > 0
    with pytest.raises(strata.UnstableError):
        strata.estimate("heat", context=cpu, n=(8, 8), D=1.0)
    h = strata.Heat(n=(16, 16), context=cpu)
    view = h["u"]
    del h                      # the view keeps the solver alive
    view[...] = 1.0
    assert view.sum() == 256.0


def test_progress_true_without_tqdm_writes_a_line(cpu, capsys):
    h = strata.Heat(n=(16, 16), context=cpu)
    h.step(10, progress=True, chunk=5)
    err = capsys.readouterr().err
    assert "10/10" in err or err == ""   # tqdm, when installed, draws its bar


def test_step_releases_the_gil(cpu):
    """While one thread is inside step, another runs Python (with the GIL
    held during the call this loop would count 0)."""
    import threading
    import time
    w = strata.Wave(n=(64, 64, 64), absorb_width=8, context=cpu)
    w.step(1)
    began = threading.Event()

    def run():
        began.set()
        w.step(60)

    th = threading.Thread(target=run)
    th.start()
    began.wait()
    time.sleep(0.02)          # lets the thread enter the library call
    count = 0
    while th.is_alive():
        count += 1
    th.join()
    assert count > 1000, count


def test_wave_density_layers_field_and_2d_section(cpu):
    # a density field equal to the layers' densities gives the layered run
    # bit for bit (both are the variable-density path)
    lay = [(0.0, 2000.0, 1000.0), (150.0, 2400.0, 2200.0)]
    a = strata.Wave(context=cpu, **wave_options(layers=lay))
    rho = np.full((32, 36, 40), 1000.0)
    h = a.info["h"]
    depth = np.arange(32) * h
    rho[depth >= 150.0] = 2200.0
    b = strata.Wave(context=cpu, **wave_options(
        layers=[(0.0, 2000.0), (150.0, 2400.0)], density=rho))
    a.step(25)
    b.step(25)
    assert np.array_equal(a.read(), b.read())
    # refusals carry the library's message
    bad = rho.copy()
    bad[1, 2, 3] = 0.0
    with pytest.raises(strata.InvalidArgument) as e:
        b.set_density(bad)
    assert e.value.message
    with pytest.raises(strata.InvalidArgument):
        b.set_density(rho[:, :, :10])
    # ny = 1: a 2D x-z section
    s = strata.Wave(context=cpu, **wave_options(n=(40, 1, 32),
                                                src=(200.0, 0.0, 150.0),
                                                receivers=[[100.0, 0.0, 50.0]]))
    s.step(20)
    assert s.read().shape == (32, 40)  # the section, z by x
    assert np.all(np.isfinite(s.read())) and np.any(s.read() != 0)


def test_poisson_variable_coefficients_second_order(cpu):
    # -div(beta grad u) = f on the unit cube, Dirichlet 0, u = sin sin sin,
    # beta = 1 + x: the error falls by about 4 when h halves
    errs = []
    for m in (16, 32):
        h = 1.0 / m
        c = (np.arange(m) + 0.5) * h
        z, y, x = np.meshgrid(c, c, c, indexing="ij")
        s = np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z)
        beta = 1.0 + x
        # f = -div(beta grad u) = 3 pi^2 beta u - pi cos(pi x) sin sin
        f = 3 * np.pi ** 2 * beta * s - np.pi * np.cos(np.pi * x) * \
            np.sin(np.pi * y) * np.sin(np.pi * z)
        p = strata.Poisson(context=cpu, n=(m, m, m), h=h, disc="fv",
                           smoother="gsrb", bc="dirichlet", rtol=1e-10,
                           max_cycles=40)
        p.set_coefficients(beta=beta)
        p["psi"] = f
        r = p.solve()
        assert r["converged"]
        errs.append(np.abs(p["phi"] - s).max())
    assert 3.3 < errs[0] / errs[1] < 4.7
    with pytest.raises(strata.InvalidArgument):
        p.set_coefficients(beta=-np.ones((32, 32, 32)))
