#!/bin/sh
# Installs the built library into a temporary prefix and builds a small
# consumer against it twice: through pkg-config and through the CMake
# package.  Usage: install_consumer.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
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
libdir=$(ls -d "$tmp/prefix"/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH=$libdir; export PKG_CONFIG_PATH
if command -v pkg-config >/dev/null 2>&1; then
  cc "$tmp/consumer.c" -o "$tmp/pc" $(pkg-config --cflags --libs strata) \
     -Wl,-rpath,"$(pkg-config --variable=libdir strata)"
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
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
"$tmp/cm/build/consumer"
