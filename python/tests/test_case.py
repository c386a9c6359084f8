"""A case file run from Python: the files of `strata run` byte for byte,
and the same run through strata.Wave gives the same bits."""
import filecmp
import os
import subprocess

import numpy as np
import pytest

import strata
from strata._case import find_program

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
SMALL = {"grid.n": "40, 30, 36", "run.steps": 40, "run.backend": "cpu",
         "boundary.width": 6, "source.position": "200, 150, 50",
         "receivers.start": "50, 150, 20", "receivers.end": "350, 150, 20",
         "receivers.count": 7, "output.every": 20,
         "output.formats": "npy", "output.traces": "npy"}


def test_case_equals_strata_run_and_the_python_solver(cpu, tmp_path):
    case = os.path.join(EXAMPLES, "seismic3d.ini")
    r = strata.run_case(case, out=tmp_path / "py", set=SMALL,
                        extra=["--no-ceiling"])
    assert r.summary and "final.npy" in r.files
    # the program run directly writes the same files, byte for byte
    args = [find_program(), "run", case, "--out", str(tmp_path / "cli"),
            "--quiet", "--no-ceiling"]
    for k, v in SMALL.items():
        args += ["--set", "%s=%s" % (k, v)]
    subprocess.run(args, check=True)
    npys = [f for f in r.files if f.endswith(".npy")]
    assert len(npys) >= 3
    for f in npys:
        assert filecmp.cmp(tmp_path / "py" / f, tmp_path / "cli" / f,
                           shallow=False), f
    # the same physics through the Python solver: the same bits
    rec = np.linspace([50.0, 150, 20], [350.0, 150, 20], 7)
    w = strata.Wave(n=(40, 30, 36), h=10.0, precision="f32", order=8,
                    layers=[(0, 1800), (300, 2500), (650, 3200)],
                    face={"all": "cpml", "zlo": "free"}, absorb_width=6,
                    src=(200, 150, 50), f0=15.0, receivers=rec,
                    record_every=2, context=cpu)
    w.step(40)
    assert np.array_equal(r["final"], w.read("p"))
    assert np.array_equal(r["traces"], w.traces().data.astype(
        r["traces"].dtype))


def test_case_errors_raise_with_the_programs_message(tmp_path):
    case = os.path.join(EXAMPLES, "heat2d.ini")
    with pytest.raises(strata.StrataError) as e:
        strata.run_case(case, out=tmp_path / "bad",
                        set={"heat.diffusion_number": 0.3})
    assert "diffusion_number" in str(e.value)
    assert e.value.returncode != 0
    assert not os.path.exists(tmp_path / "bad")
