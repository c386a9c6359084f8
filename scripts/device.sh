#!/bin/bash
# One call on the GPU machine: configure and build (Release, sm_90a: ARCH), run the
# whole CTest suite, run the GPU tests again under compute-sanitizer
# (memcheck and racecheck, on the reduced sizes of STRATA_TEST_QUICK=1),
# then the benchmark (every operator x variant x precision on 512^3 and
# 1024x512x256, the auto path, and the 25-point star on 376^3 for the
# FDTD3d comparison).  Logs go to $OUT (at most 8 files).  Every stage runs
# against a deadline so the whole call ends inside 10 minutes.
#
#   scripts/device.sh [all|test|bench|solvers|sanitize|dist|survey|density]...  (default: all)
#
# dist (not part of all; on a machine of several GPUs): the distributed
# tests on 1, 2 and 4 GPUs (one rank each, NCCL), then the weak (512^3 a
# GPU) and strong (1024^3) scaling of the wave and heat solvers in each
# precision of DIST_PREC (default "f32 f64"), and the scaling table of the
# README in its form (scripts/dist_table.awk: device, date, commit,
# efficiency and exposed exchange a row) in $OUT/dist_table.md; then the
# variable-coefficient multigrid over 1, 2 and 4 GPUs (test_dist_mg, and
# one fp64 FMG solve of HPGMG-FV's problem, DIST_MG_WEAK^3 = 256^3 a GPU,
# at the cost rule's gather level and at each of DIST_MG_LEVELS).
#
# survey (not part of all): test_survey on the GPU, then the shots per hour
# of examples/survey3d_gpu.ini on one GPU and (with 2 or more) on two.
#
# density (not part of all): the variable-density and 2D wave tests on the
# GPU and their benchmarks (bench_solvers wave-density and wave2d) with each
# block shape of k_wsv and with the scalar k_wave.
#
# Environment: ARCH (CMAKE_CUDA_ARCHITECTURES, default 90a), SEEDS (1: also
# build, test and benchmark the seeds' strategies, -DSTRATA_CUDA_SEEDS=ON),
# OUT (default /tmp/strata-out), BUILD (default
# /tmp/strata-build), BUDGET seconds (default 560), TESTS (ctest arguments
# for the test stage), SOLVERS (bench_solvers' first argument), SAN_TESTS
# (the sanitizer stage's programs), SAN_CAP (seconds per program, 150).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/strata-out}
B=${BUILD:-/tmp/strata-build}
BUDGET=${BUDGET:-560}
mkdir -p "$OUT"
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }
stages=${*:-all}
want() { case " $stages " in *" all "*|*" $1 "*) return 0;; esac; return 1; }
note() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$OUT/summary.txt"; }

{
  date -u +"%Y-%m-%d %H:%M:%S UTC"
  # the commit, and whether the tree differs from it (a copied tree may
  # carry a stale .git: then the files, not the commit, are what ran)
  echo "$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo ' with changes')"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  nvcc --version | tail -2
  command -v compute-sanitizer cuobjdump
} > "$OUT/env.txt" 2>&1
note "start: $(head -1 "$OUT/env.txt"), $(sed -n 4p "$OUT/env.txt")"
rm -f "$HOME/.cache/strata/tune-v1.txt" # a warm machine keeps the last call's choices

# keep going past targets others are still writing; the GPU work needs only
# the library, the GPU tests and the benchmark driver
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${ARCH:-90a} \
  -DSTRATA_CUDA_SEEDS=$([ "${SEEDS:-0}" = 1 ] && echo ON || echo OFF) \
  > "$OUT/build.log" 2>&1 &&
  cmake --build "$B" -j 16 -- -k >> "$OUT/build.log" 2>&1
rc=$?
note "build rc=$rc"
for f in "$B/strata_bench" "$B/tests/test_cuda_ops" "$B/tests/test_cuda_api"; do
  if [ ! -x "$f" ]; then note "missing $f"; grep -E "error" "$OUT/build.log" | head -20; exit 1; fi
done

if want test; then
  # the GPU tests and the CPU oracle's own test (TESTS="" runs the whole suite)
  # several OpenMP test programs at once: few threads each, and no spinning,
  # or they starve each other (test_heat alone took minutes with 16 spinning
  # threads in each of 8 programs)
  (cd "$B" && OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive \
     timeout $(( $(left) - 200 )) ctest -V -j 4 --timeout 400 \
     ${TESTS-"-R" "test_cuda|test_operators"}) \
    > "$OUT/ctest.log" 2>&1
  note "ctest rc=$? $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
  # the test that fills the whole GPU, alone
  STRATA_TEST_DEVICE_FULL=1 timeout 60 "$B/tests/test_cuda_api" cuda_transfer_device_full \
    >> "$OUT/ctest.log" 2>&1
  note "test_cuda_api cuda_transfer_device_full (alone) rc=$?"
  grep -E "checks,|launch shapes|FAIL|Skipped|Failed|\*\*\*" "$OUT/ctest.log" | tee -a "$OUT/summary.txt" | head -30
fi

if want bench; then
  # the machine's own copy ceiling through PyTorch, as a cross-check
  timeout 60 python3 - > "$OUT/bench.txt" 2>&1 <<'EOF'
import torch
x = torch.empty(1 << 28, dtype=torch.float32, device="cuda").uniform_()
y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(20): y.copy_(x)
e.record(); torch.cuda.synchronize()
t = s.elapsed_time(e) / 20 / 1e3
print(f"torch device-to-device copy of 1 GiB: {2 * x.numel() * 4 / t / 1e9:.1f} GB/s (read + write)")
EOF
  timeout $(( $(left) - 150 )) "$B/strata_bench" --backend cuda --csv "$OUT/bench.csv" \
    >> "$OUT/bench.txt" 2>&1
  note "bench (all variants) rc=$?"
  timeout $(( $(left) - 120 )) "$B/strata_bench" --backend cuda --variants auto \
    >> "$OUT/bench.txt" 2>&1
  note "bench (auto) rc=$?"
  timeout $(( $(left) - 110 )) "$B/strata_bench" --backend cuda --size 376x376x376 \
    --ops 25pt --precision f32 >> "$OUT/bench.txt" 2>&1
  note "bench (376^3 25-point) rc=$?"
  cat "$HOME/.cache/strata/tune-v1.txt" >> "$OUT/bench.txt" 2>/dev/null
  # SASS of the radius-1 kernels, for the instruction bound of the general box
  cuobjdump -sass "$B/libstrata.so" 2>&1 |
    awk '/Function : /{p = ($0 ~ /k_kdv?I[fd]Li[123]E/)} p' > "$OUT/sass.txt"
  cuobjdump -res-usage "$B/libstrata.so" 2>&1 | grep -A1 -E "k_(streamv?|kdv?|pencil|copycube)" |
    grep -E "Function|REG" | paste - - | sed -E 's/Function ([^:]*):.*REG:([0-9]+).*SHARED:([0-9]+).*/\1 REG=\2 SHARED=\3/' >> "$OUT/summary.txt"
fi

if want solvers; then
  # the solvers and multigrid on the GPU engine (docs/performance.md)
  # SOLVERS: what bench_solvers runs (all, heat, heat2d, heat3d, wave, fdtd);
  # the multigrid benchmark only with all
  timeout $(( $(left) - 60 )) "$B/bench_solvers" ${SOLVERS:-all} --backend cuda --reps 5 \
    > "$OUT/solvers.txt" 2>&1
  note "bench_solvers ${SOLVERS:-all} rc=$?"
  if [ "${SOLVERS:-all}" = all ]; then
    timeout $(( $(left) - 30 )) "$B/bench_mg" --backend cuda >> "$OUT/solvers.txt" 2>&1
    note "bench_mg rc=$?"
  fi
fi

if [ "${stages#*dist}" != "$stages" ]; then
  NG=$(nvidia-smi -L | wc -l)
  nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
  # NVLink multicast stays off on these machines (KINDS.md); root runs need
  # OpenMPI's consent
  export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  MPI="mpirun -x NCCL_NVLS_ENABLE -x STRATA_TEST_BACKEND=cuda -x OMP_NUM_THREADS=4"
  : > "$OUT/dist.txt"
  for np in 1 2 4; do
    [ $np -gt "$NG" ] && continue
    STRATA_TEST_BACKEND=cuda timeout 240 $MPI -n $np "$B/tests/test_dist" >> "$OUT/dist.txt" 2>&1
    note "test_dist on $np GPU(s) rc=$? $(grep -E 'passed,' "$OUT/dist.txt" | tail -1)"
    # the y-z split (2 x 1 on 2 GPUs, 2 x 2 on 4): packed x-z faces
    STRATA_TEST_BACKEND=cuda timeout 240 $MPI -n $np "$B/tests/test_dist" --yz >> "$OUT/dist.txt" 2>&1
    note "test_dist --yz on $np GPU(s) rc=$? $(grep -E 'passed,' "$OUT/dist.txt" | tail -1)"
  done
  for prec in ${DIST_PREC:-f32 f64}; do
    pflag=; [ "$prec" = f64 ] && pflag=--f64
    for np in 1 2 4; do
      [ $np -gt "$NG" ] && continue
      timeout 150 $MPI -n $np "$B/bench_dist" --backend cuda --weak ${DIST_WEAK:-512} \
        --steps ${DIST_STEPS:-40} $pflag >> "$OUT/dist.txt" 2>&1
      note "bench_dist weak $prec np=$np rc=$?"
      timeout 150 $MPI -n $np "$B/bench_dist" --backend cuda --strong ${DIST_STRONG:-1024} \
        --steps ${DIST_STEPS:-40} $pflag >> "$OUT/dist.txt" 2>&1
      note "bench_dist strong $prec np=$np rc=$?"
    done
  done
  # multigrid (fv7, fp64): the ranks against one process on the GPUs, and
  # one FMG solve of HPGMG-FV's problem, 256^3 a GPU (weak scaling)
  for np in 1 2 4; do
    [ $np -gt "$NG" ] && continue
    STRATA_TEST_BACKEND=cuda timeout 120 $MPI -n $np "$B/tests/test_dist_mg" >> "$OUT/dist.txt" 2>&1
    note "test_dist_mg on $np GPU(s) rc=$? $(grep -E 'passed,' "$OUT/dist.txt" | tail -1)"
    timeout 150 $MPI -n $np "$B/bench_dist" --backend cuda --solver mg \
      --weak ${DIST_MG_WEAK:-256} --steps ${DIST_MG_STEPS:-10} >> "$OUT/dist.txt" 2>&1
    note "bench_dist mg weak np=$np rc=$?"
    # the gather level by hand (the cost rule's alternatives): rank 0's
    # coarse work against more exchanges of small messages
    [ $np -gt 1 ] && for L in ${DIST_MG_LEVELS:-3 4 5}; do
      timeout 100 $MPI -n $np "$B/bench_dist" --backend cuda --solver mg \
        --weak ${DIST_MG_WEAK:-256} --steps ${DIST_MG_STEPS:-10} \
        --agglomerate $L >> "$OUT/dist.txt" 2>&1
      note "bench_dist mg weak np=$np agglomerate=$L rc=$?"
    done
  done
  grep -E "^(wave|heat|mg|#)" "$OUT/dist.txt" | tee -a "$OUT/summary.txt"
  # the table of the README and docs/performance.md, from these runs
  awk -v date="$(head -1 "$OUT/env.txt")" -v commit="$(sed -n 2p "$OUT/env.txt")" \
    -f scripts/dist_table.awk "$OUT/dist.txt" | tee "$OUT/dist_table.md" >> "$OUT/summary.txt"
  cat "$OUT/dist_table.md"
fi

if [ "${stages#*density}" != "$stages" ]; then
  # variable density and the 2D section (not part of all): their GPU tests
  # against the CPU engine (k_wsv, and k_wave by wave_kernel=scalar), the
  # racecheck of k_wsv, then bench_solvers wave-density and wave2d with
  # k_wsv's block shapes (wave_svb) and k_wave, in one machine's run
  : > "$OUT/density.txt"
  for t in wave_step_density_vs_cpu wave_step_vs_cpu wave_step_scalar_vs_cpu wave_step_shapes_vs_cpu; do
    timeout 150 "$B/tests/test_cuda_solvers" $t >> "$OUT/density.txt" 2>&1
    note "test_cuda_solvers $t rc=$?"
  done
  STRATA_TEST_QUICK=1 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$B/tests/test_cuda_solvers" wave_step_density_vs_cpu >> "$OUT/density.txt" 2>&1
  note "racecheck wave_step_density_vs_cpu rc=$?"
  for w in wave-density wave2d; do
    for v in default wave_svb=alt wave_svb=tall wave_svb=narrow wave_kernel=scalar; do
      [ $w = wave-density ] && [ $v = wave_svb=narrow ] && continue
      [ $w = wave2d ] && [ $v = wave_svb=tall ] && continue
      tune=; [ $v != default ] && tune="--tuning $v"
      timeout 90 "$B/bench_solvers" $w --backend cuda --reps 5 $tune > /tmp/strata-vd.txt 2>&1
      note "bench_solvers $w $v rc=$?"
      (echo "== bench_solvers $w $v"; cat /tmp/strata-vd.txt) >> "$OUT/density.txt"
      grep -E "^\| CPML|copy" /tmp/strata-vd.txt | sed "s/^/  $v: /" >> "$OUT/summary.txt"
    done
  done
fi

if [ "${stages#*survey}" != "$stages" ]; then
  # surveys on the GPU: the shot calls against a new solver (test_survey on
  # cuda), then shots per hour of examples/survey3d_gpu.ini on one GPU and
  # on 2 (one rank each), whose gathers must be the same bytes
  NG=$(nvidia-smi -L | wc -l)
  export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  STRATA_TEST_BACKEND=cuda timeout 120 "$B/tests/test_survey" > "$OUT/survey.txt" 2>&1
  note "test_survey on cuda rc=$? $(grep -E 'passed,' "$OUT/survey.txt" | tail -1)"
  rm -rf /tmp/strata-survey1 /tmp/strata-survey2 /tmp/strata-survey3
  timeout $(( $(left) / 2 )) "$B/strata" run examples/survey3d_gpu.ini --backend cuda \
    --out /tmp/strata-survey1 >> "$OUT/survey.txt" 2>&1
  note "survey on 1 GPU rc=$? $(grep -E '^survey:' "$OUT/survey.txt" | tail -1)"
  if [ "$NG" -ge 2 ]; then
    timeout $(( $(left) - 20 )) mpirun -x NCCL_NVLS_ENABLE -n 2 "$B/strata" run \
      examples/survey3d_gpu.ini --backend cuda --out /tmp/strata-survey2 \
      >> "$OUT/survey.txt" 2>&1
    note "survey on 2 GPUs rc=$? $(grep -E '^survey:' "$OUT/survey.txt" | tail -1)"
    same=0; for f in /tmp/strata-survey1/shot_*.sgy; do
      cmp -s "$f" "/tmp/strata-survey2/${f##*/}" || same=$((same + 1)); done
    note "gathers differing between 1 and 2 GPUs: $same"
    # each shot split over the 2 GPUs (survey.split): its first shot's gather
    # against the one-GPU run's
    timeout $(( $(left) - 10 )) mpirun -x NCCL_NVLS_ENABLE -n 2 "$B/strata" run \
      examples/survey3d_gpu.ini --backend cuda --out /tmp/strata-survey3 \
      --set survey.split=true --set survey.count=2,1 >> "$OUT/survey.txt" 2>&1
    note "survey split over 2 GPUs rc=$? $(grep -E '^survey:' "$OUT/survey.txt" | tail -1)"
    cmp -s /tmp/strata-survey1/shot_0001.sgy /tmp/strata-survey3/shot_0001.sgy
    note "split shot 1 the same as on one GPU: $([ $? = 0 ] && echo yes || echo NO)"
  fi
fi

if want sanitize; then
  : > "$OUT/sanitizer.log"
  for tool in memcheck racecheck; do
    # SAN_TESTS: programs, each optionally with one test name ("prog:test")
    for spec in ${SAN_TESTS:-test_cuda_api test_cuda_ops test_cuda_solvers test_multigrid:kernels_cuda}; do
      t=${spec%%:*}; name=; [ "$t" != "$spec" ] && name=${spec#*:}
      budget=$(( $(left) - 10 ))
      [ $budget -gt ${SAN_CAP:-150} ] && budget=${SAN_CAP:-150}
      if [ $budget -lt 20 ]; then note "sanitizer $tool $spec: no time left"; continue; fi
      STRATA_TEST_QUICK=1 timeout $budget compute-sanitizer --tool $tool \
        --error-exitcode 9 "$B/tests/$t" $name >> "$OUT/sanitizer.log" 2>&1
      rc=$?
      if [ $rc = 124 ]; then
        note "sanitizer $tool $spec: TIMED OUT after ${budget}s (no summary: raise SAN_CAP)"
      else
        note "sanitizer $tool $spec rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tail -1)"
      fi
    done
  done
fi
note "done"
grep -E "^(copy|7-point|27-point|25-point|d/d|2D)" "$OUT/bench.txt" 2>/dev/null | head -80
