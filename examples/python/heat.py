#!/usr/bin/env python3
"""The heat equation against its analytic decay: the mode
sin(2 pi k x / N) cos(2 pi k y / N) on a periodic plate decays by
g = 1 - 8 D sin^2(pi k / N) per step (the discrete scheme's own factor),
close to exp(-8 pi^2 k^2 D / N^2), the continuum's.

    /usr/bin/python3 examples/python/heat.py [--backend cpu|cuda] [--quick]
"""
import os

import numpy as np

from _common import options, pyplot, save
import strata


def main():
    a = options("heat decay against theory", "heat_py.out")
    N, k, D = (64, 2, 0.2) if a.quick else (256, 3, 0.2)
    x = np.arange(N)
    mode = np.sin(2 * np.pi * k * x / N)[None, :] * np.cos(
        2 * np.pi * k * x / N)[:, None]                 # (ny, nx)
    h = strata.Heat(n=(N, N), D=D, bc="periodic", precision="f64",
                    context=strata.Context(a.backend))
    h["u"] = mode
    g = 1 - 8 * D * np.sin(np.pi * k / N) ** 2
    amp = []
    for _ in range(20):
        h.step(N // 4)
        u = h.read("u")
        amp.append((h.steps, np.abs(u).max()))
    steps, got = np.array(amp).T
    discrete = g ** steps
    continuum = np.exp(-2 * 4 * np.pi ** 2 * k ** 2 * D * steps / N ** 2)
    err = np.max(np.abs(h.read("u") - discrete[-1] * mode))
    print("after %d steps: amplitude %.6g, discrete theory %.6g (max error "
          "%.2g), continuum %.6g" % (steps[-1], got[-1], discrete[-1], err,
                                     continuum[-1]))
    np.save(os.path.join(a.out, "amplitude.npy"), np.array(amp))
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(steps, got, "o", label="strata")
    ax.semilogy(steps, discrete, "-", label="discrete theory")
    ax.semilogy(steps, continuum, "--", label="continuum")
    ax.set(xlabel="step", ylabel="amplitude", title="heat: mode decay")
    ax.legend()
    save(fig, a.out, "heat.png")


if __name__ == "__main__":
    main()
