"""Writes the model files test_model's python_files test reads back: each
holds f(i, j, k) = 1500.25 + 3 i + 7 j + 11 k at sample (i, j, k) along
x, y, z, a value exact in every sample type used.

usage: model_files.py DIR npy|segy
Exits 77 (skipped) with a message when numpy, or for segy segyio, is
missing."""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("skip: numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

NX, NY, NZ = 7, 5, 6


def field(nx, ny, nz):
    """The values as an array indexed [i, j, k] (x, y, z)."""
    i, j, k = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz),
                          indexing="ij")
    return 1500.25 + 3 * i + 7 * j + 11 * k


def write_npy(d):
    f = field(NX, NY, NZ)
    # strata's own layout (nz, ny, nx), and Devito's (nx, ny, nz)
    zyx = f.transpose(2, 1, 0).astype("<f4")
    np.save(os.path.join(d, "zyx_f4.npy"), np.ascontiguousarray(zyx))
    np.save(os.path.join(d, "xyz_f8.npy"), np.ascontiguousarray(f, "<f8"))
    # a transposed view: numpy saves it in Fortran order
    assert not zyx.flags.c_contiguous
    np.save(os.path.join(d, "zyx_fortran_f4.npy"), zyx)
    # 2D sections (nz, nx) and (nx, nz)
    g = field(NX, 1, NZ)[:, 0, :]
    np.save(os.path.join(d, "zx_f8.npy"), np.ascontiguousarray(g.T, "<f8"))
    np.save(os.path.join(d, "xz_f4.npy"), np.ascontiguousarray(g, "<f4"))
    # raw samples: big-endian f4 in x, y, z order; little-endian f8 z, y, x
    f.astype(">f4").tofile(os.path.join(d, "xyz_be_f4.bin"))
    f.transpose(2, 1, 0).astype("<f8").tofile(os.path.join(d, "zyx_le_f8.bin"))


def write_segy(d):
    try:
        import segyio
    except ImportError:
        print("skip: segyio is not installed (Debian: python3-segyio)")
        sys.exit(77)
    f = field(NX, NY, NZ).astype(np.float32)
    # a 3D cube, IBM floats: segyio's cube is [inline, crossline, sample];
    # inlines run along y, crosslines along x
    segyio.tools.from_array(os.path.join(d, "cube_ibm.sgy"),
                            np.ascontiguousarray(f.transpose(1, 0, 2)), format=1)
    # the same cube, IEEE floats, written trace by trace in reverse order
    # with inline numbers 10, 12, ... and crosslines 100, 101, ...
    spec = segyio.spec()
    spec.format = 5
    spec.samples = list(range(NZ))
    spec.ilines = list(range(10, 10 + 2 * NY, 2))
    spec.xlines = list(range(100, 100 + NX))
    spec.sorting = 2
    with segyio.create(os.path.join(d, "cube_ieee_shuffled.sgy"), spec) as s:
        t = 0
        for j in reversed(range(NY)):
            for i in reversed(range(NX)):
                s.header[t] = {segyio.TraceField.INLINE_3D: 10 + 2 * j,
                               segyio.TraceField.CROSSLINE_3D: 100 + i,
                               segyio.TraceField.TRACE_SAMPLE_COUNT: NZ}
                s.trace[t] = f[i, j, :]
                t += 1
    # a 2D section (one inline), IEEE floats
    segyio.tools.from_array2D(os.path.join(d, "section_ieee.sgy"),
                              np.ascontiguousarray(f[:, 0, :]), format=5)
    # and read back by segyio itself, as a check of this script
    with segyio.open(os.path.join(d, "cube_ibm.sgy")) as s:
        assert np.array_equal(segyio.tools.cube(s), f.transpose(1, 0, 2))


def main():
    d, what = sys.argv[1], sys.argv[2]
    os.makedirs(d, exist_ok=True)
    if what == "npy":
        write_npy(d)
    else:
        write_segy(d)


if __name__ == "__main__":
    main()
