# Sourced by the tests that run python: sets py to a python3 that has
# numpy (Debian's /usr/bin/python3 first), or exits 77 (skipped) saying
# what is missing.
py=""
for p in /usr/bin/python3 "$(command -v python3 2>/dev/null)"; do
  if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import numpy' >/dev/null 2>&1; then
    py=$p
    break
  fi
done
if [ -z "$py" ]; then
  echo "skip: no python3 with numpy (Debian: python3-numpy)"
  exit 77
fi
