"""Models from files through the library's readers: NumPy and raw files
read back exactly, checks name the bad value, resampling is exact for a
linear model and refuses a grid the model does not cover."""
import numpy as np
import pytest

import strata


def test_npy_and_raw_read_back_exactly(cpu, tmp_path):
    rng = np.random.default_rng(3)
    v = 1500 + 3000 * rng.random((7, 5, 9))      # (nz, ny, nx)
    np.save(tmp_path / "v.npy", v)
    m = strata.read_model(tmp_path / "v.npy", spacing=(10, 20, 5),
                          context=cpu)
    assert m.dims == 3 and m.values.shape == (7, 5, 9)
    assert np.array_equal(m.values, v)
    assert m.spacing == (10.0, 20.0, 5.0) and m.origin == (0.0, 0.0, 0.0)
    # x fastest in the file but named slowest first: Devito's order
    np.save(tmp_path / "xyz.npy", np.ascontiguousarray(v.transpose(2, 1, 0)))
    m = strata.read_model(tmp_path / "xyz.npy", axes="xyz", spacing=(1, 1, 1),
                          context=cpu)
    assert np.array_equal(m.values, v)
    # raw big-endian float32 with a stated shape
    v32 = v.astype(np.float32)
    v32.astype(">f4").tofile(tmp_path / "v.bin")
    m = strata.read_model(tmp_path / "v.bin", format="raw", shape=(7, 5, 9),
                          dtype=np.float32, big_endian=True,
                          spacing=(1, 1, 1), context=cpu)
    assert np.array_equal(m.values, v32.astype(np.float64))
    # a 2D section: (nz, nx)
    np.save(tmp_path / "s.npy", v[:, 0, :])
    m = strata.read_model(tmp_path / "s.npy", spacing=(10, 1, 5), context=cpu)
    assert m.dims == 2 and m.values.shape == (7, 1, 9)
    assert np.array_equal(m.values[:, 0, :], v[:, 0, :])


def test_bad_files_raise_with_the_library_message(cpu, tmp_path):
    (tmp_path / "short.bin").write_bytes(b"\0" * 10)
    with pytest.raises(strata.InvalidArgument) as e:
        strata.read_model(tmp_path / "short.bin", format="raw",
                          shape=(2, 3, 4), dtype="f32", context=cpu)
    assert "10" in str(e.value) and "96" in str(e.value)
    with pytest.raises(strata.IOFailure):
        strata.read_model(tmp_path / "missing.npy", context=cpu)
    with pytest.raises(ValueError):
        strata.read_model(tmp_path / "x.npy", format="grib", context=cpu)


def test_check_and_resample(cpu):
    nz, ny, nx = 6, 3, 5
    z = np.arange(nz, dtype=np.float64)[:, None, None] * 10.0
    x = np.arange(nx, dtype=np.float64)[None, None, :] * 10.0
    v = 1000 + 2 * z + 0.5 * x + np.zeros((nz, ny, nx))
    m = strata.Model(v, spacing=(10, 10, 10), context=cpu)
    assert m.check("velocity") == (1000.0, 1000 + 2 * 50 + 0.5 * 40)
    # the grid's points (i 5, j 5, k 5) inside the model's 40 x 20 x 50 m
    g = m.resample((9, 5, 11), 5.0)
    assert g.shape == (11, 5, 9)
    kk, jj, ii = np.meshgrid(np.arange(11), np.arange(5), np.arange(9),
                             indexing="ij")
    want = 1000 + 2 * (5.0 * kk) + 0.5 * (5.0 * ii)
    assert np.allclose(g, want, rtol=0, atol=1e-9)
    near = m.resample((9, 5, 11), 5.0, how="nearest")
    assert set(np.unique(near)) <= set(np.unique(v))
    with pytest.raises(strata.InvalidArgument) as e:
        m.resample((20, 5, 11), 5.0)     # 95 m along x, the model 40 m
    assert "x" in str(e.value)
    bad = v.copy()
    bad[2, 1, 3] = -5
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Model(bad, spacing=(10, 10, 10), context=cpu).check("velocity")
    assert "velocity" in str(e.value) and "-5" in str(e.value)


def test_host_memory_available():
    assert strata.host_memory_available() > 0
