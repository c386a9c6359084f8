#!/usr/bin/env python3
"""The seismic run driven with CuPy arrays on a GPU: the velocity model
built with CuPy, the pressure handed back as a CuPy array of the solver's
own memory (no copy), a gradient taken with CuPy, and strata's Laplacian
applied to a CuPy array in strata's layout, in place.

    /usr/bin/python3 examples/python/wave_cupy.py [--quick]
"""
import argparse
import sys

import _common  # noqa: F401  (the package from the source tree)
import strata


def main():
    ap = argparse.ArgumentParser(description="a wave run with CuPy arrays")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    try:
        import cupy as cp
    except ImportError:
        sys.exit("wave_cupy: CuPy is not installed (this example needs a "
                 "GPU and CuPy)")
    ok, why = strata.backend_available("cuda")
    if not ok:
        sys.exit("wave_cupy: no usable GPU: " + why)
    gpu = strata.Context("cuda")
    n = (64, 64, 64) if a.quick else (256, 256, 256)
    h = 10.0
    z = cp.arange(n[2])[:, None, None] * h
    v = cp.broadcast_to(cp.where(z < 300, 1800.0, 2600.0), n[::-1])
    w = strata.Wave(n=n, h=h, velocity=v, f0=12.0,
                    face={"all": "cpml", "zlo": "free"}, context=gpu)
    w.step(200 if a.quick else 600, progress=True)
    p = w.array("p", like="cupy")                  # the solver's memory
    assert p.data.ptr == w.field("p").interior_ptr
    print("t = %.3f s, |p| max %.3g Pa (CuPy, on the GPU)" % (
        w.time, float(cp.abs(p).max())))
    # strata's order-8 Laplacian on a CuPy array in strata's layout
    lap = strata.laplacian(order=8, h=h, dims=3)
    u = strata.empty(p.shape, p.dtype, ghost=lap.radius, like="cupy")
    u[...] = p
    out = strata.apply(lap, u, bc=0.0, context=gpu)
    print("max |lap p| = %.3g Pa/m^2 (out is a %s)" % (
        float(cp.abs(out).max()), type(out).__name__))


if __name__ == "__main__":
    main()
