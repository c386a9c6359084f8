#!/bin/sh
# The live view's cost on a run's throughput (docs/performance.md, "The
# live view's cost"): the same case run without --view and with --view
# while a client asks for one frame a second (the page's default), each
# ROUNDS times in turn; the loop's wall time (summary.json wall_s) of each
# run and the median cost in percent.
#   sh bench/view_cost.sh [STRATA] [CASE]
# Environment: N (grid points a side, default 512), STEPS (default 20000),
# ROUNDS (default 2), BACKEND (default auto).  Needs curl or python3 for
# the client.
set -eu
STRATA=${1:-build/strata}
CASE=${2:-examples/seismic3d.ini}
N=${N:-512}
STEPS=${STEPS:-20000}
ROUNDS=${ROUNDS:-2}
BACKEND=${BACKEND:-auto}
OUT=$(mktemp -d /tmp/strata_view_cost.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -s -o "$2" "$1" || true
  else
    python3 -c 'import sys, urllib.request as u
try: open(sys.argv[2], "wb").write(u.urlopen(sys.argv[1], timeout=30).read())
except Exception: pass' "$1" "$2"
  fi
}

wall() { sed -n 's/.*"wall_s": \([0-9.]*\).*/\1/p' "$1/summary.json"; }

run() { # NAME [--view 0]
  name=$1
  shift
  "$STRATA" run "$CASE" --set grid.n=$N,$N,$N --set run.steps=$STEPS \
    --set output.every=0 --set output.formats=npy --backend "$BACKEND" \
    --no-ceiling --quiet --out "$OUT/$name" "$@" 2>"$OUT/$name.err" &
  pid=$!
  frames=0
  if [ $# -gt 0 ]; then
    url=""
    while [ -z "$url" ] && kill -0 $pid 2>/dev/null; do
      sleep 0.2
      url=$(sed -n 's/.*watch the run at \(http[^ ]*\).*/\1/p' "$OUT/$name.err")
    done
    base=${url%%/\?*}
    token=${url##*token=}
    while kill -0 $pid 2>/dev/null; do
      fetch "$base/frame.png?token=$token" "$OUT/frame.png"
      frames=$((frames + 1))
      sleep 1
    done
  fi
  wait $pid || { cat "$OUT/$name.err" >&2; exit 1; }
  w=$(wall "$OUT/$name")
  echo "$name: wall $w s, $frames frames asked for" >&2
  echo "$w"
}

costs=""
r=1
while [ $r -le "$ROUNDS" ]; do
  a=$(run plain$r)
  b=$(run viewed$r --view 0)
  c=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", 100 * (b - a) / a }')
  echo "round $r: without $a s, watched $b s: cost $c %"
  costs="$costs $c"
  r=$((r + 1))
done
echo "$costs" | tr ' ' '\n' | sed '/^$/d' | sort -g |
  awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
         printf "median cost of watching at 1 frame/s: %.2f %%\n", m }'
