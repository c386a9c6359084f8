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
