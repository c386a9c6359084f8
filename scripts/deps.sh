#!/bin/sh
# Installs what strata needs to build on a fresh Debian or Ubuntu machine
# (a C compiler with OpenMP, CMake >= 3.24, make, zlib), or names what is missing.
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
# MPI (OpenMPI here) for the runs over several processes and GPUs
# (strata_dist_*; the CPU decomposition tests run under mpiexec).  Optional:
# without it the library is built without the multi-process engine.
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpiexec >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "strata: installing OpenMPI (libopenmpi-dev, openmpi-bin) with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq libopenmpi-dev openmpi-bin >/dev/null; }; } ||
      echo "strata: could not install OpenMPI; building without the multi-process engine" >&2
  else
    echo "strata: no MPI found; for runs over several processes or GPUs: sudo apt-get install libopenmpi-dev openmpi-bin" >&2
  fi
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
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "strata: installing clang and libomp-dev with apt-get (the fuzz harnesses)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq clang libomp-dev >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq clang libomp-dev >/dev/null; }; } ||
      echo "strata: could not install clang; the fuzz test will be skipped" >&2
  else
    echo "strata: no clang; for the fuzz test: sudo apt-get install clang libomp-dev" >&2
  fi
fi
# segyio for /usr/bin/python3 (python3-segyio): the tests read the SEG-Y
# gathers back with it (skipped, saying so, without it).  Optional.
if ! /usr/bin/python3 -c 'import segyio' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "strata: installing python3-segyio with apt-get (the SEG-Y tests)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq python3-segyio >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq python3-segyio >/dev/null; }; } ||
      echo "strata: could not install python3-segyio; its tests will be skipped" >&2
  else
    echo "strata: no segyio; for the SEG-Y tests: sudo apt-get install python3-segyio" >&2
  fi
fi
# HDF5 (libhdf5-dev; hdf5-tools for h5dump, which the tests read the
# files back with): the .h5 snapshots, traces and gathers.  Optional:
# without it the library is built without the HDF5 writers.
if [ ! -f /usr/include/hdf5/serial/hdf5.h ] && [ ! -f /usr/include/hdf5.h ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "strata: installing HDF5 (libhdf5-dev, hdf5-tools) with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get install -y -qq --no-install-recommends libhdf5-dev hdf5-tools >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends libhdf5-dev hdf5-tools >/dev/null; }; } ||
      echo "strata: could not install HDF5; building without the .h5 writers" >&2
  else
    echo "strata: no HDF5; for .h5 output: sudo apt-get install libhdf5-dev hdf5-tools" >&2
  fi
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
