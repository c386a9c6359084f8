#!/usr/bin/env python3
"""The seismic example: a shot over three layers with a free surface on
top, a snapshot of the pressure (a vertical slice, axes in metres) and the
shot gather (offset against time).

    /usr/bin/python3 examples/python/seismic.py [--backend cpu|cuda]
        [--quick] [--out DIR]
"""
import os

import numpy as np

from _common import options, pyplot, save
import strata


def main():
    a = options("a seismic shot with strata", "seismic_py.out")
    ctx = strata.Context(a.backend)

    n = (60, 40, 50) if a.quick else (120, 80, 100)     # x, y, z (depth)
    h = 10.0                                             # metres
    steps = 150 if a.quick else 450
    nx, ny = n[0], n[1]
    rec = np.array([[x, ny * h / 2, 20.0] for x in
                    np.arange(5, nx - 5) * h])          # a line of receivers
    w = strata.Wave(n=n, h=h, precision="f32", order=8,
                    layers=[(0, 1800), (300, 2500), (650, 3200)],
                    face={"all": "cpml", "zlo": "free"},
                    absorb_width=10 if a.quick else 16,
                    src=(nx * h / 3, ny * h / 2, 50.0), f0=15.0,
                    receivers=rec, context=ctx)
    w.step(steps, progress=True)

    p = w.read("p")                      # (nz, ny, nx), a host copy
    section = p[:, ny // 2, :]           # the vertical slice y = middle
    t = w.traces()                       # (receivers, samples)
    offset = t.receivers[:, 0] - t.source[0]
    np.save(os.path.join(a.out, "p.npy"), p)
    np.save(os.path.join(a.out, "gather.npy"), t.data)
    print("%d steps of %.3g ms on %s: t = %.3f s, |p| max %.3g Pa" % (
        w.steps, 1e3 * w.dt, ctx.backend, w.time, np.abs(p).max()))

    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    lim = np.abs(section).max() or 1.0
    im = ax[0].imshow(section, cmap="seismic", vmin=-lim, vmax=lim,
                      extent=(0, nx * h, n[2] * h, 0))
    ax[0].set(xlabel="x (m)", ylabel="depth z (m)",
              title="pressure at t = %.3f s" % w.time)
    fig.colorbar(im, ax=ax[0], label="p (%s)" % w.unit("p"))
    glim = np.percentile(np.abs(t.data), 99) or 1.0
    im = ax[1].imshow(t.data.T, cmap="gray", aspect="auto", vmin=-glim,
                      vmax=glim, extent=(offset[0], offset[-1],
                                         t.dt * t.data.shape[1], 0))
    ax[1].set(xlabel="offset (m)", ylabel="time (s)", title="shot gather")
    fig.colorbar(im, ax=ax[1], label="p (Pa)")
    save(fig, a.out, "seismic.png")


if __name__ == "__main__":
    main()
