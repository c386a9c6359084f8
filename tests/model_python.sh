#!/bin/sh
# Model files written by numpy (KIND npy: .npy and raw samples) or segyio
# (KIND segy), read back by test_model's python_files test.
# usage: model_python.sh TEST_MODEL SOURCE_DIR KIND
# Skipped (exit 77) with a message when python3, numpy or segyio is missing.
set -u
prog=$1 src=$2 kind=$3
. "$src/tests/python_numpy.sh"
dir=$(mktemp -d "${TMPDIR:-/tmp}/strata_model_py.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$py" "$src/tests/model_files.py" "$dir" "$kind"
rc=$?
[ "$rc" = 0 ] || exit "$rc"
STRATA_MODEL_FILES=$dir STRATA_MODEL_KIND=$kind "$prog" python_files
