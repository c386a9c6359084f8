"""The Python examples run (small grids, the CPU engine) and print what
they claim; wave_cupy.py needs a GPU and CuPy."""
import os
import subprocess
import sys

import numpy as np

EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                  "examples", "python")


def run(name, tmp_path, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, os.path.join(EX, name), "--quick",
                        *args], capture_output=True, text=True, cwd=tmp_path,
                       env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout + p.stderr


def test_heat_example_matches_theory(tmp_path):
    out = run("heat.py", tmp_path, "--backend", "cpu", "--out", "o")
    err = float(out.split("max error ")[1].split(")")[0])
    assert err < 1e-12
    assert np.load(tmp_path / "o" / "amplitude.npy").shape == (20, 2)


def test_poisson_example_converges(tmp_path):
    out = run("poisson.py", tmp_path, "--backend", "cpu", "--out", "o")
    err = float(out.split("max error ")[1].split()[0])
    assert err < 1e-3
    assert (tmp_path / "o" / "residuals.npy").exists()


def test_seismic_example_writes_snapshot_and_gather(tmp_path):
    out = run("seismic.py", tmp_path, "--backend", "cpu", "--out", "o")
    g = np.load(tmp_path / "o" / "gather.npy")
    assert g.shape[0] == 50 and np.abs(g).max() > 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
    else:
        assert (tmp_path / "o" / "seismic.png").exists()


def test_cupy_example(tmp_path, gpu, cupy):
    out = run("wave_cupy.py", tmp_path)
    assert "CuPy, on the GPU" in out and "cupy" in out.lower()
