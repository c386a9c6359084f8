#!/usr/bin/env python3
"""What the Python binding adds to a run (docs/performance.md, "Python").

For one solver on a small and a large grid: a Python loop of step(1),
one step(n) and a loop of bare ctypes calls, interleaved in every
repetition, and the C loop of strata_solver_step(s, 1) (bench_step_loop,
the same solver and options, in a process of its own), plus the cost of
one call that does no work (step(0)) through the package, bare ctypes and
C.  Each figure is the best and the median of --reps timings after a
warm-up; percentages compare bests.

    /usr/bin/python3 bench/bench_python.py [--kind wave|heat]
        [--sizes 64,256] [--steps 50,10] [--reps 5] [--backend cpu|cuda|auto]
        [--build build]

Run it from the source tree after building (bench_step_loop is a target of
the CMake project); PYTHONPATH=python, or the installed package.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def timed(fn, reps):
    fn()  # warm-up
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    t.sort()
    return t[0], t[len(t) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", default="wave", choices=["wave", "heat"])
    ap.add_argument("--sizes", default="64,256")
    ap.add_argument("--steps", default="50,10",
                    help="steps per timing, one per size (or one for all)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--build", default=None,
                    help="the build folder (default: beside libstrata.so)")
    a = ap.parse_args()
    import strata
    build = a.build or os.path.dirname(strata.LIBRARY_PATH)
    exe = os.path.join(build, "bench_step_loop")
    ctx = strata.Context(a.backend)
    dev = ctx.device_info()
    print("strata %s, %s; backend %s (%s), %s, Python %s" % (
        strata.__version__, strata.build_info, ctx.backend, dev["name"],
        "%d threads" % dev["threads"] if ctx.backend == "cpu" else
        "%.0f GiB" % (dev["memory_bytes"] / 2 ** 30), sys.version.split()[0]))
    print()
    print("| grid | steps | Python step(1) loop, s | step(n), s | bare ctypes "
          "step(1) loop, s | C step(1) loop, s (another process) | "
          "Python loop vs step(n) | step(n) vs C loop |")
    print("|---|---:|---|---|---|---|---:|---:|")
    calls = []
    sizes = [int(x) for x in a.sizes.split(",")]
    nsteps = [int(x) for x in a.steps.split(",")]
    nsteps += [nsteps[-1]] * (len(sizes) - len(nsteps))
    for n, steps in zip(sizes, nsteps):
        if a.kind == "wave":
            s = strata.Wave(n=(n, n, n), absorb_width=20 if n >= 128 else 8,
                            context=ctx)
        else:
            s = strata.Heat(n=(n, n, n), precision="f32", context=ctx)

        raw = strata._lib.lib.strata_solver_step
        ptr = s._ptr

        def loop():
            for _ in range(steps):
                s.step(1)

        def raw_loop():
            for _ in range(steps):
                raw(ptr, 1)

        # the three interleaved in every repetition, so that the load of a
        # shared machine falls on them alike
        t = {"loop": [], "stepn": [], "raw": []}
        s.step(steps)  # warm-up
        for _ in range(a.reps):
            for key, fn in (("loop", loop), ("stepn", lambda: s.step(steps)),
                            ("raw", raw_loop)):
                t0 = time.perf_counter()
                fn()
                t[key].append(time.perf_counter() - t0)
        for v in t.values():
            v.sort()
        pl = (t["loop"][0], t["loop"][a.reps // 2])
        pn = (t["stepn"][0], t["stepn"][a.reps // 2])
        pr = (t["raw"][0], t["raw"][a.reps // 2])
        k = 20000
        step0 = s.step

        def nothing():
            for _ in range(k):
                step0(0)
        pc = timed(nothing, a.reps)
        def raw_nothing():
            for _ in range(k):
                raw(ptr, 0)
        rc = timed(raw_nothing, a.reps)
        s.close()
        out = subprocess.run([exe, a.kind, str(n), str(steps), str(a.reps),
                              a.backend], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("bench_python: %s failed: %s" % (exe, out.stderr))
        c = json.loads(out.stdout)
        cl = c["c_loop_s"]
        print("| %d^3 | %d | %.4g / %.4g | %.4g / %.4g | %.4g / %.4g | "
              "%.4g / %.4g | %+.1f%% | %+.1f%% |" % (
                  n, steps, pl[0], pl[1], pn[0], pn[1], pr[0], pr[1], cl[0],
                  cl[1], 100 * (pl[0] / pn[0] - 1),
                  100 * (pn[0] / cl[0] - 1)))
        calls.append((n, pc[0] / k, rc[0] / k, c["c_call_s"][0]))
    print()
    print("Per call that does no work (step(0)), best of %d x 20000 calls:"
          % a.reps)
    for n, py, raw, cc in calls:
        print("- %d^3: strata.Solver.step %.2f us, the bare ctypes call %.2f "
              "us, C %.3f us" % (n, py * 1e6, raw * 1e6, cc * 1e6))


if __name__ == "__main__":
    main()
