"""A survey from Python (strata_survey_run): each shot's gather is the
traces of one Wave run with the source there, a finished survey is not
run again, and on_shot can stop it."""
import numpy as np
import pytest

import strata

WAVE = dict(n=(60, 1, 40), h=10.0, velocity=2000.0, f0=15.0,
            face={"all": "cpml", "zlo": "free"}, absorb_width=8,
            precision="f64")


def test_gathers_are_the_wave_runs(cpu, tmp_path):
    rec = np.array([[100.0 + 40 * r, 0, 20] for r in range(8)])
    v = np.full((40, 1, 60), 2000.0)
    v[25:] = 2600.0                               # a layer below 250 m
    shots = [[150.0, 0, 30], [300.0, 0, 30], [450.0, 0, 30]]
    seen = []
    r = strata.survey(shots, 120, tmp_path, formats=("npy", "segy"),
                      receivers=rec, on_shot=lambda s, k, t: seen.append(s),
                      context=cpu, **dict(WAVE, velocity=v))
    assert r["run"] == 3 and r["skipped"] == 0 and seen == [1, 2, 3]
    for s, pos in enumerate(shots):
        g = np.load(tmp_path / ("shot_%04d.npy" % (s + 1)))
        w = strata.Wave(src=pos, receivers=rec, context=cpu,
                        **dict(WAVE, velocity=v))
        w.step(120)
        t = w.traces().data
        assert g.shape == t.shape and np.array_equal(g, t), s
        assert (tmp_path / ("shot_%04d.sgy" % (s + 1))).exists()
    # done already: nothing runs again
    r = strata.survey(shots, 120, tmp_path, formats=("npy", "segy"),
                      receivers=rec, context=cpu, **dict(WAVE, velocity=v))
    assert r["run"] == 0 and r["skipped"] == 3


def test_on_shot_stops_and_bad_input_raises(cpu, tmp_path):
    rec = [[300.0, 0, 20]]
    r = strata.survey([[150.0, 0, 30], [300.0, 0, 30]], 40, tmp_path,
                      receivers=rec, on_shot=lambda s, k, t: True,
                      context=cpu, **WAVE)
    assert r["run"] == 1 and r["stopped"] == 1
    with pytest.raises(strata.InvalidArgument) as e:
        strata.survey([[5000.0, 0, 30]], 40, tmp_path, receivers=rec,
                      context=cpu, **WAVE)
    assert "shot" in str(e.value)
    with pytest.raises(ValueError):
        strata.survey([[150.0, 0, 30]], 40, tmp_path, formats=("grib",),
                      receivers=rec, context=cpu, **WAVE)
