#!/bin/sh
# Installs the built library and program into a temporary prefix (not the
# default one, and moved once installed) and checks that they work from
# there without LD_LIBRARY_PATH: the program runs a small case and loads
# the installed library, and a small consumer builds and runs twice,
# through pkg-config and through the CMake package.
# Usage: install_consumer.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH
fail() { echo "install_consumer: $*" >&2; exit 1; }

# the program's libstrata must be the one installed beside it
check_lib() { # program prefix
  line=$(ldd "$1" | grep 'libstrata\.so' || true)
  case $line in
    *"=> $2/"*) ;;
    *) ldd "$1" >&2
       fail "$1 does not load libstrata from $2:${line:- no libstrata}" ;;
  esac
}

cmake --install "$build" --prefix "$tmp/install/prefix" >/dev/null
# moved after installing: everything must find its parts relative to itself
mv "$tmp/install/prefix" "$tmp/moved"
prefix=$tmp/moved
[ -x "$prefix/bin/strata" ] || fail "no $prefix/bin/strata"
check_lib "$prefix/bin/strata" "$prefix"
"$prefix/bin/strata" version >/dev/null || fail "installed strata does not run"
cat > "$tmp/tiny.ini" <<'INI'
[solver]
kind = operator
[grid]
n = 16, 12
[run]
steps = 3
backend = cpu
[operator]
scale = 0.1
identity = true
[output]
every = 0
formats = npy
INI
(cd "$tmp" && "$prefix/bin/strata" run tiny.ini --quiet --no-ceiling) ||
  fail "installed strata cannot run a case"
[ -f "$tmp/tiny.out/final.npy" ] || fail "the installed strata wrote no final.npy"

cat > "$tmp/consumer.c" <<'C'
#include <strata.h>
#include <stdio.h>
int main(void) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &o) != STRATA_OK) return 1;
  strata_field_desc d = {1, {16, 1, 1}, 1, STRATA_F64};
  strata_field *f = NULL;
  if (strata_field_create(ctx, &d, &f) != STRATA_OK) return 1;
  double v = 0;
  if (strata_field_fill(f, 1.5) || strata_field_norm(f, STRATA_NORM_SUM, &v)) return 1;
  strata_field_destroy(&f);
  strata_context_destroy(&ctx);
  printf("consumer: sum %g, strata %s\n", v, strata_version());
  return v == 24.0 ? 0 : 1;
}
C
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH=$libdir; export PKG_CONFIG_PATH
if command -v pkg-config >/dev/null 2>&1; then
  # exactly what pkg-config gives: its Libs carry the library's RPATH
  cc "$tmp/consumer.c" -o "$tmp/pc" $(pkg-config --cflags --libs strata)
  check_lib "$tmp/pc" "$prefix"
  "$tmp/pc"
else
  echo "pkg-config not installed: pkg-config consumer skipped"
fi
mkdir "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.24)
project(consumer C)
find_package(strata REQUIRED)
add_executable(consumer ../consumer.c)
target_link_libraries(consumer PRIVATE strata::strata)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
check_lib "$tmp/cm/build/consumer" "$prefix"
"$tmp/cm/build/consumer"

# the Python package, installed beside them, finds the installed library
# and program relative to itself (skipped without a python3 with NumPy)
pkgdir=$(ls -d "$prefix"/lib/python3*/*-packages 2>/dev/null | head -n 1)
if [ -n "$pkgdir" ] && [ -d "$pkgdir/strata" ]; then
  for py in /usr/bin/python3 python3; do
    "$py" -c 'import numpy' >/dev/null 2>&1 || continue
    (cd "$tmp" && env -u STRATA_LIBRARY -u STRATA_CLI PYTHONPATH="$pkgdir" \
      PYTHONDONTWRITEBYTECODE=1 "$py" -c "
import os, sys, strata
from strata import _case
pre = sys.argv[1]
assert strata.LIBRARY_PATH.startswith(pre + '/'), strata.LIBRARY_PATH
assert _case.find_program() == pre + '/bin/strata', _case.find_program()
f = strata.Field((4, 5), context=strata.Context('cpu'))
f.fill(2.0)
assert f.norm('sum') == 40.0
r = strata.run_case('tiny.ini', out='py.out', extra=['--no-ceiling'])
assert r['final'].shape == (12, 16), r.files
" "$prefix") || fail "the installed Python package does not work"
    break
  done
fi
