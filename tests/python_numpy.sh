# Sourced by the tests that run python: sets py to a python3 that has the
# modules in $need (default numpy): $STRATA_PYTHON, else Debian's
# /usr/bin/python3, else the python3 on PATH; or exits 77 (skipped) saying
# what is missing.
need=${need:-numpy}
imports=$(echo "$need" | sed 's/ /, /g')
py=""
for p in ${STRATA_PYTHON:-} /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
  if [ -n "$p" ] && [ -x "$p" ] && "$p" -c "import $imports" >/dev/null 2>&1; then
    py=$p
    break
  fi
done
if [ -z "$py" ]; then
  echo "skip: no python3 with $need (Debian: $(for m in $need; do printf 'python3-%s ' $m; done)| scripts/deps.sh installs them)"
  exit 77
fi
