#!/bin/sh
# The test "fuzz": builds the libFuzzer harnesses of fuzz/ with clang
# (AddressSanitizer and UndefinedBehaviorSanitizer, the library too) in a
# build folder of their own, then runs each for STRATA_FUZZ_SECONDS seconds
# (default 60; 0 skips them).  Without clang, or a clang without libFuzzer,
# the test is skipped (exit 77) and says why.  A crash, a leak or undefined
# behaviour fails it; the input that caused it is left in the build folder.
# Usage: fuzz.sh SOURCE_DIR BUILD_DIR
set -u
src=$1
build=$2
seconds=${STRATA_FUZZ_SECONDS:-60}
if [ "$seconds" = 0 ]; then
  echo "fuzz: skipped: STRATA_FUZZ_SECONDS=0"
  exit 77
fi
cc=$(command -v clang 2>/dev/null)
if [ -z "$cc" ]; then
  echo "fuzz: skipped: clang not found (the harnesses need clang's libFuzzer:" \
       "apt-get install clang libomp-dev; .ci/run installs them)"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <omp.h>\nint LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return omp_get_max_threads() < 0; }\n' \
  > "$probe/p.c"
if ! "$cc" -fopenmp -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz: skipped: $cc cannot build a libFuzzer harness with OpenMP" \
       "(-fsanitize=fuzzer -fopenmp): apt-get install clang libomp-dev"
  exit 77
fi
echo "fuzz: building the harnesses with $cc in $build"
mkdir -p "$build"
log=$build/build.log
if ! { cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER="$cc" \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_FUZZ=ON \
         -DSTRATA_TESTS=OFF -DSTRATA_CUDA=OFF -DSTRATA_MPI=OFF \
         -DSTRATA_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF >"$log" 2>&1 &&
       cmake --build "$build" -j 2 --target fuzz_casefile fuzz_checkpoint fuzz_model \
         >>"$log" 2>&1; }; then
  tail -n 30 "$log"
  echo "fuzz: the harnesses did not build (log: $log)"
  exit 1
fi
cd "$build/fuzz" || exit 1
rm -rf corpus_ck corpus_cf corpus_model crash-* leak-* timeout-* oom-*
mkdir corpus_ck corpus_cf corpus_model
cp "$src"/fuzz/corpus/* corpus_cf/
# the model seeds: small SEG-Y and .npy files (fuzz/corpus_model)
cp "$src"/fuzz/corpus_model/* corpus_model/
# the checkpoint seeds: each kind's saved state, written by the harness
if ! STRATA_FUZZ_SEEDS=corpus_ck ./fuzz_checkpoint -runs=0 corpus_ck \
     >seeds.log 2>&1; then
  tail -n 30 seeds.log
  echo "fuzz: fuzz_checkpoint could not write its seeds"
  exit 1
fi
rc=0
for h in casefile:corpus_cf checkpoint:corpus_ck model:corpus_model; do
  name=${h%%:*}
  corpus=${h#*:}
  echo "fuzz: fuzz_$name for $seconds s"
  if ! ./fuzz_"$name" -max_total_time="$seconds" -timeout=20 \
       -rss_limit_mb=4096 -print_final_stats=1 "$corpus" >"$name.log" 2>&1; then
    tail -n 60 "$name.log"
    echo "fuzz: fuzz_$name FAILED (its input: $build/fuzz/crash-*, log $build/fuzz/$name.log)"
    rc=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" \
      "$name.log" | sed "s/^/fuzz: fuzz_$name: /"
  fi
done
exit $rc
