#!/bin/sh
# Installs what strata needs to build on a fresh Debian or Ubuntu machine
# (a C compiler with OpenMP, CMake >= 3.24, make, zlib), or names what is
# missing; and the optional parts (below), each only when it is absent.
# The CUDA toolkit is optional: without nvcc the CPU engine is built alone.
set -u
missing=""
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
if command -v cmake >/dev/null 2>&1; then
  v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  set -- $v
  if [ "${1:-0}" -lt 3 ] || { [ "${1:-0}" -eq 3 ] && [ "${2:-0}" -lt 24 ]; }; then
    missing="$missing cmake"
  fi
else
  missing="$missing cmake"
fi

# optional WHAT WITHOUT PACKAGE...: installs the packages with apt-get as
# root (an update first only when the plain install fails), else says how
# to; WHAT says what they are for, WITHOUT what happens without them.
# norecommends=1 leaves the packages' recommendations out.
optional() {
  what=$1 without=$2
  shift 2
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "strata: installing $* with apt-get ($what)" >&2
    export DEBIAN_FRONTEND=noninteractive
    set -- ${norecommends:+--no-install-recommends} "$@"
    { apt-get install -y -qq "$@" >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq "$@" >/dev/null; }; } ||
      echo "strata: could not install $*; $without" >&2
  else
    echo "strata: for $what: sudo apt-get install $*" >&2
  fi
  norecommends=
}

# MPI (OpenMPI here) for the runs over several processes and GPUs
# (strata_dist_*; the CPU decomposition tests run under mpiexec).
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpiexec >/dev/null 2>&1; then
  optional "runs over several processes or GPUs" \
    "building without the multi-process engine" libopenmpi-dev openmpi-bin
fi
# The distribution's python3 with NumPy, pytest and setuptools (the
# package in python/ and its tests), segyio (the SEG-Y tests write and read
# files with it, and examples/make_model.py).
if ! /usr/bin/python3 -c 'import numpy, pytest, setuptools, segyio' >/dev/null 2>&1; then
  optional "the Python package, its tests and the model file tests" \
    "those tests will be skipped" python3 python3-numpy python3-pytest \
    python3-setuptools python3-segyio
fi
# libmicrohttpd (and pkg-config, which finds it): the live view's HTTP
# server (strata run --view, strata view DIR).
if ! pkg-config --exists libmicrohttpd 2>/dev/null; then
  optional "the live view (--view)" "building without the live view" \
    libmicrohttpd-dev pkg-config
fi
# clang with libFuzzer, and the OpenMP runtime it builds the library with:
# the test "fuzz" runs the harnesses of fuzz/ when clang is there.  Only
# when asked (STRATA_FUZZ_DEPS=1, as .ci/run does): a build does not need it.
fuzz_ready() {
  command -v clang >/dev/null 2>&1 &&
    echo 'int main(void) { return 0; }' |
      clang -x c -fopenmp -fsanitize=fuzzer-no-link - -o /dev/null >/dev/null 2>&1
}
if [ "${STRATA_FUZZ_DEPS:-0}" = 1 ] && ! fuzz_ready; then
  optional "the fuzz harnesses" "the fuzz test will be skipped" clang libomp-dev
fi
# Chromium, headless: the live view's browser test opens the page in it.
# Only when asked (STRATA_BROWSER_DEPS=1, as .ci/run does).
if [ "${STRATA_BROWSER_DEPS:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  optional "the live view's browser test" "the browser test will be skipped" chromium
fi
# HDF5 (libhdf5-dev; hdf5-tools for h5dump, which the tests read the
# files back with): the .h5 snapshots, traces and gathers.
if { [ ! -f /usr/include/hdf5/serial/hdf5.h ] && [ ! -f /usr/include/hdf5.h ]; } ||
   ! command -v h5dump >/dev/null 2>&1; then
  norecommends=1 optional "the .h5 output" \
    "building without the .h5 writers" libhdf5-dev hdf5-tools
fi

# Parallel HDF5 (libhdf5-openmpi-dev, beside the serial library: their
# headers live in /usr/include/hdf5/openmpi and /usr/include/hdf5/serial):
# with MPI, each rank of a run over several processes writes its own part
# of the .h5 snapshots; without it they are gathered on rank 0 first.
if command -v mpicc >/dev/null 2>&1 &&
   [ ! -f /usr/include/hdf5/openmpi/hdf5.h ]; then
  norecommends=1 optional "the .h5 snapshots written by every rank" \
    "the .h5 snapshots are gathered on one rank" libhdf5-openmpi-dev
fi

# zlib (PNG compression, CRC-32)
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
[ -z "$missing" ] && exit 0
echo "strata: missing build tools:$missing" >&2
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "strata: installing them with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq $missing >/dev/null && exit 0
  echo "strata: apt-get could not install:$missing" >&2
  exit 1
fi
echo "strata: install them with: sudo apt-get install$missing" >&2
exit 1
