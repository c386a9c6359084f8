#!/bin/sh
# Runs the Python package's pytest suite on the built library and program.
# Usage: python.sh SOURCE_DIR LIBRARY PROGRAM
# The interpreter: $STRATA_PYTHON, else the first of /usr/bin/python3 and
# python3 on PATH that has NumPy and pytest (exit 77, skipped, if none).
src=$1
export STRATA_LIBRARY=$2 STRATA_CLI=$3
for py in ${STRATA_PYTHON:-} /usr/bin/python3 python3; do
  if "$py" -c 'import numpy, pytest' >/dev/null 2>&1; then
    cd "$src/python" || exit 1
    exec env PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}" \
      PYTHONDONTWRITEBYTECODE=1 \
      "$py" -m pytest -q -p no:cacheprovider tests
  fi
done
echo "python: skipped: no python3 with numpy and pytest" \
     "(sudo apt-get install python3-numpy python3-pytest)"
exit 77
