#!/usr/bin/env python3
"""A synthetic earth model for strata's wave solver: a water layer over
folded sediments cut by a normal fault, pierced by a salt diapir with an
overhanging top; P-wave velocity and density, 2D (an x-z section) and 3D.

    python3 examples/make_model.py --out model
    strata run examples/seismic_model.ini

Writes to --out (default ./model):
    model2d_vp.npy, model2d_rho.npy   shape (nz, nx), float32
    model3d_vp.npy, model3d_rho.npy   shape (nz, ny, nx), float32
and, when segyio is installed, the same as SEG-Y (IEEE floats, one trace
per x (and y) position, samples along depth; 3D traces numbered by inline
along y and crossline along x): model2d_vp.sgy, model3d_vp.sgy, ...
Both are what strata's [model] section reads (docs/cases.md); the SEG-Y
sample interval field holds the depth spacing in millimetres, so give
strata `spacing` as for the .npy files.

Velocities in m/s, density in kg/m^3 (Gardner's rho = 310 v^0.25 in the
sediments, 1000 in the water, 2150 in the salt).  z is depth, down; the
model's first sample is at x = y = z = 0.  Needs numpy
(Debian: python3-numpy); segyio (python3-segyio) for the SEG-Y files.
"""
import argparse
import os
import sys

try:
    import numpy as np
except ImportError:
    sys.exit("make_model.py needs numpy (Debian: apt-get install python3-numpy)")

WATER_V, WATER_RHO = 1500.0, 1000.0
SALT_V, SALT_RHO = 4500.0, 2150.0
# sediment layers from the seabed down: (base depth of the interface below
# the layer in m, velocity at its top in m/s); the last one has no base
LAYERS = [(420, 1750), (640, 2000), (880, 2250), (1120, 2500),
          (1380, 2800), (1650, 3150), (None, 3550)]
GRADIENT = 0.3  # m/s per metre of depth below each layer's top


def seabed(x, y, X, Y):
    """Seabed depth: a gentle slope with a low swell."""
    return 140 + 40 * x / X + 12 * np.sin(2 * np.pi * y / max(Y, 1.0) + 0.7)


def interface(base, i, x, y, X, Y):
    """Depth of sediment interface i: an anticline whose amplitude grows
    with depth, plunging along y, with a shorter undulation on top."""
    amp = 40 + 25 * i
    fold = amp * np.exp(-((x - 0.35 * X) / (0.22 * X)) ** 2)
    plunge = 1 + 0.35 * np.cos(2 * np.pi * y / max(Y, 1.0))
    wiggle = 18 * np.sin(2 * np.pi * x / (0.3 * X) + 0.9 * i)
    return base - fold * plunge + wiggle


def fault_throw(x, y, z, X, Y):
    """A normal fault dipping 60 degrees towards +x: the hanging wall
    (east of the plane) is down-thrown by 110 m."""
    xf = 0.62 * X + z / np.tan(np.radians(60)) + 0.08 * (y - Y / 2)
    return np.where(x > xf, 110.0, 0.0)


def salt(x, y, z, X, Y, dims):
    """A diapir: a stem rising from the bottom, an overhanging cap."""
    xs, ys = 0.5 * X, 0.5 * Y
    r = np.abs(x - xs) if dims == 2 else np.hypot(x - xs, (y - ys) * 1.3)
    r0 = 0.11 * X
    top = 780 + 160 * (r / r0) ** 2
    cap = (z >= top) & (z < 1120) & (r < r0)
    stem = (z >= 1120) & (r < 0.55 * r0 + 0.04 * (z - 1120))
    return cap | stem


def build(dims, h, X, Y, Z):
    """Velocity and density on a grid of spacing h covering the box."""
    nx, nz = int(round(X / h)) + 1, int(round(Z / h)) + 1
    ny = int(round(Y / h)) + 1 if dims == 3 else 1
    z, y, x = np.meshgrid(np.arange(nz) * h, np.arange(ny) * h,
                          np.arange(nx) * h, indexing="ij")
    sb = seabed(x, y, X, Y)
    zs = z - fault_throw(x, y, z, X, Y)  # depth on the footwall's layers
    # the layer of each point: how many interfaces lie above it
    tops = [sb] + [interface(base, i, x, y, X, Y)
                   for i, (base, _) in enumerate(LAYERS[:-1])]
    layer = np.zeros(z.shape, dtype=int)
    for t in tops[1:]:
        layer += zs >= t
    v0 = np.array([v for _, v in LAYERS])[layer]
    top = np.choose(layer, tops)
    v = v0 + GRADIENT * np.maximum(zs - top, 0)
    rho = 310.0 * v ** 0.25
    water = z < sb
    v = np.where(water, WATER_V, v)
    rho = np.where(water, WATER_RHO, rho)
    s = salt(x, y, z, X, Y, dims)
    v = np.where(s, SALT_V, v)
    rho = np.where(s, SALT_RHO, rho)
    if dims == 2:
        v, rho = v[:, 0, :], rho[:, 0, :]
    return v.astype(np.float32), rho.astype(np.float32)


def write_segy(path, a, h, dims):
    """a: (nz, nx) or (nz, ny, nx) as SEG-Y, IEEE floats."""
    import contextlib
    import io
    import segyio
    quiet = contextlib.redirect_stdout(io.StringIO())  # segyio prints lines
    with quiet:
        write_segy_quiet(segyio, path, a, h, dims)


def write_segy_quiet(segyio, path, a, h, dims):
    if dims == 2:
        data = np.ascontiguousarray(a.T)  # (nx, nz): a trace per x
        segyio.tools.from_array2D(path, data, format=5, dt=int(h * 1000))
    else:
        data = np.ascontiguousarray(a.transpose(1, 2, 0))  # (ny, nx, nz)
        segyio.tools.from_array(path, data, format=5, dt=int(h * 1000))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="model", help="output folder")
    ap.add_argument("--dims", choices=["2", "3", "both"], default="both")
    ap.add_argument("--spacing", type=float, default=20.0,
                    help="sample spacing in metres (default 20)")
    ap.add_argument("--size", default="4000,2000,2000",
                    help="extent x,y,z in metres (default 4000,2000,2000)")
    ap.add_argument("--no-segy", action="store_true",
                    help="only .npy, even when segyio is installed")
    a = ap.parse_args()
    X, Y, Z = (float(s) for s in a.size.split(","))
    os.makedirs(a.out, exist_ok=True)
    try:
        import segyio  # noqa: F401
        segy = not a.no_segy
    except ImportError:
        segy = False
        if not a.no_segy:
            print("segyio not installed (Debian: python3-segyio): .npy only")
    for dims in ([2, 3] if a.dims == "both" else [int(a.dims)]):
        v, rho = build(dims, a.spacing, X, Y, Z)
        for name, arr in (("vp", v), ("rho", rho)):
            stem = os.path.join(a.out, "model%dd_%s" % (dims, name))
            np.save(stem + ".npy", arr)
            if segy:
                write_segy(stem + ".sgy", arr, a.spacing, dims)
        shape = " x ".join(str(n) for n in v.shape[::-1])
        print("%dD: %s samples (x%s, z) %g m apart; vp %.0f..%.0f m/s, "
              "rho %.0f..%.0f kg/m^3 -> %s/model%dd_{vp,rho}.npy%s"
              % (dims, shape, ", y" if dims == 3 else "", a.spacing,
                 v.min(), v.max(), rho.min(), rho.max(), a.out, dims,
                 " and .sgy" if segy else ""))


if __name__ == "__main__":
    main()
