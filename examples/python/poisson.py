#!/usr/bin/env python3
"""A Poisson solve: -lap(phi) = psi on the unit cube with phi = 0 on the
faces, psi = 3 pi^2 sin(pi x) sin(pi y) sin(pi z), whose solution is the
product of sines; multigrid to the tolerance, the residual per cycle and
the error against the exact solution.

    /usr/bin/python3 examples/python/poisson.py [--backend cpu|cuda] [--quick]
"""
import os

import numpy as np

from _common import options, pyplot, save
import strata


def main():
    a = options("a multigrid Poisson solve", "poisson_py.out")
    m = 31 if a.quick else 127
    h = 1.0 / (m + 1)
    x = np.arange(1, m + 1) * h
    exact = (np.sin(np.pi * x)[:, None, None] * np.sin(np.pi * x)[None, :, None]
             * np.sin(np.pi * x)[None, None, :])
    p = strata.Poisson(n=(m, m, m), h=h, disc="fd", bc=0.0,
                       context=strata.Context(a.backend))
    p["psi"] = 3 * np.pi ** 2 * exact
    r = p.solve()
    err = np.max(np.abs(p.read("phi") - exact))
    print("%d^3: %d cycles, residual %.3g -> %.3g (factor %.3g per cycle), "
          "max error %.3g (h^2 = %.3g)" % (m, r["cycles"], r["residual0"],
                                           r["residual"], r["factor"], err,
                                           h * h))
    np.save(os.path.join(a.out, "residuals.npy"), r["history"])
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(r["history"], "o-")
    ax.set(xlabel="cycle", ylabel="RMS residual", title="multigrid, %d^3" % m)
    save(fig, a.out, "poisson.png")


if __name__ == "__main__":
    main()
