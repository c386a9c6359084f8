#!/bin/sh
# Runs the Python package's pytest suite on the built library and program.
# Usage: python.sh SOURCE_DIR LIBRARY PROGRAM
# The interpreter: python_numpy.sh's choice with NumPy and pytest (exit 77,
# skipped, if none).
src=$1
export STRATA_LIBRARY=$2 STRATA_CLI=$3
need="numpy pytest"
. "$src/tests/python_numpy.sh"
cd "$src/python" || exit 1
exec env PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}" \
  PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -p no:cacheprovider tests
