/* A tiny test runner shared by the tests and the benchmarks.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_OK(strata_call(...), ctx); return 0; }
 *   RUN_TESTS(name, other_name)
 *
 * A test returns 0 (pass), 1 (fail) or TEST_SKIP (skipped, with a reason
 * printed by SKIP).  A program prints one line per test and closes with
 * "N passed, N failed, N skipped"; it exits 1 on any failure, 77 when every
 * test was skipped (CTest then reports it skipped), else 0.  A test name
 * given on the command line runs only that test. */
#ifndef STRATA_TEST_RUNNER_H
#define STRATA_TEST_RUNNER_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "strata.h"

#define TEST_SKIP 77

#define TEST(name) static int name(void)

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                          \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#define CHECKF(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "  %s:%d: check failed: %s: ", __FILE__, __LINE__,      \
              #cond);                                                          \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* expr must return STRATA_OK; on failure print the code and ctx's message. */
#define CHECK_OK(expr, ctx)                                                    \
  do {                                                                         \
    strata_status s_ = (expr);                                                 \
    if (s_ != STRATA_OK) {                                                     \
      fprintf(stderr, "  %s:%d: %s returned %s: %s\n", __FILE__, __LINE__,     \
              #expr, strata_status_name(s_), strata_context_error(ctx));       \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* expr must return status want. */
#define CHECK_STATUS(expr, want, ctx)                                          \
  do {                                                                         \
    strata_status s_ = (expr);                                                 \
    if (s_ != (want)) {                                                        \
      fprintf(stderr, "  %s:%d: %s returned %s, expected %s (%s)\n",          \
              __FILE__, __LINE__, #expr, strata_status_name(s_),               \
              strata_status_name(want), strata_context_error(ctx));            \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* ctx's last failure names argument arg with value value
 * (strata_context_error_arg / _value). */
#define CHECK_ARG(ctx, arg, value)                                             \
  CHECKF(!strcmp(strata_context_error_arg(ctx), (arg)) &&                      \
             !strcmp(strata_context_error_value(ctx), (value)),                \
         "names '%s' = '%s', expected '%s' = '%s' (%s)",                       \
         strata_context_error_arg(ctx), strata_context_error_value(ctx),       \
         (arg), (value), strata_context_error(ctx))

#define SKIP(...)                                                              \
  do {                                                                         \
    printf("  skip: ");                                                        \
    printf(__VA_ARGS__);                                                       \
    printf("\n");                                                              \
    return TEST_SKIP;                                                          \
  } while (0)

typedef struct {
  const char *name;
  int (*fn)(void);
} strata_test_entry;

static inline double strata_test_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A context on the CPU engine (the oracle), or NULL. */
static inline strata_context *strata_test_cpu_context(void) {
  strata_context_options o;
  strata_context_options_init(&o);
  o.backend = STRATA_BACKEND_CPU;
  strata_context *ctx = NULL;
  if (strata_context_create(&ctx, &o) != STRATA_OK) return NULL;
  return ctx;
}

static inline int strata_test_main(int argc, char **argv,
                                   const strata_test_entry *t, int n) {
  int passed = 0, failed = 0, skipped = 0;
  for (int i = 0; i < n; i++) {
    if (argc > 1 && strcmp(argv[1], t[i].name) != 0) continue;
    printf("---- %s\n", t[i].name);
    fflush(stdout);
    double t0 = strata_test_clock();
    int r = t[i].fn();
    double dt = strata_test_clock() - t0;
    const char *what = r == 0 ? "ok" : r == TEST_SKIP ? "skipped" : "FAIL";
    printf("%-8s %s (%.2f s)\n", what, t[i].name, dt);
    fflush(stdout);
    fflush(stderr);
    if (r == 0)
      passed++;
    else if (r == TEST_SKIP)
      skipped++;
    else
      failed++;
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (failed) return 1;
  if (passed == 0 && skipped > 0) return 77;
  return 0;
}

#define STRATA__TE(f) {#f, f},
#define STRATA__FOR_EACH(M, ...) STRATA__FE_N(__VA_ARGS__, STRATA__FE_32, STRATA__FE_31, STRATA__FE_30, STRATA__FE_29, STRATA__FE_28, STRATA__FE_27, STRATA__FE_26, STRATA__FE_25, STRATA__FE_24, STRATA__FE_23, STRATA__FE_22, STRATA__FE_21, STRATA__FE_20, STRATA__FE_19, STRATA__FE_18, STRATA__FE_17, STRATA__FE_16, STRATA__FE_15, STRATA__FE_14, STRATA__FE_13, STRATA__FE_12, STRATA__FE_11, STRATA__FE_10, STRATA__FE_9, STRATA__FE_8, STRATA__FE_7, STRATA__FE_6, STRATA__FE_5, STRATA__FE_4, STRATA__FE_3, STRATA__FE_2, STRATA__FE_1)(M, __VA_ARGS__)
#define STRATA__FE_N(_1,_2,_3,_4,_5,_6,_7,_8,_9,_10,_11,_12,_13,_14,_15,_16,_17,_18,_19,_20,_21,_22,_23,_24,_25,_26,_27,_28,_29,_30,_31,_32,N,...) N
#define STRATA__FE_1(M, a) M(a)
#define STRATA__FE_2(M, a, ...) M(a) STRATA__FE_1(M, __VA_ARGS__)
#define STRATA__FE_3(M, a, ...) M(a) STRATA__FE_2(M, __VA_ARGS__)
#define STRATA__FE_4(M, a, ...) M(a) STRATA__FE_3(M, __VA_ARGS__)
#define STRATA__FE_5(M, a, ...) M(a) STRATA__FE_4(M, __VA_ARGS__)
#define STRATA__FE_6(M, a, ...) M(a) STRATA__FE_5(M, __VA_ARGS__)
#define STRATA__FE_7(M, a, ...) M(a) STRATA__FE_6(M, __VA_ARGS__)
#define STRATA__FE_8(M, a, ...) M(a) STRATA__FE_7(M, __VA_ARGS__)
#define STRATA__FE_9(M, a, ...) M(a) STRATA__FE_8(M, __VA_ARGS__)
#define STRATA__FE_10(M, a, ...) M(a) STRATA__FE_9(M, __VA_ARGS__)
#define STRATA__FE_11(M, a, ...) M(a) STRATA__FE_10(M, __VA_ARGS__)
#define STRATA__FE_12(M, a, ...) M(a) STRATA__FE_11(M, __VA_ARGS__)
#define STRATA__FE_13(M, a, ...) M(a) STRATA__FE_12(M, __VA_ARGS__)
#define STRATA__FE_14(M, a, ...) M(a) STRATA__FE_13(M, __VA_ARGS__)
#define STRATA__FE_15(M, a, ...) M(a) STRATA__FE_14(M, __VA_ARGS__)
#define STRATA__FE_16(M, a, ...) M(a) STRATA__FE_15(M, __VA_ARGS__)
#define STRATA__FE_17(M, a, ...) M(a) STRATA__FE_16(M, __VA_ARGS__)
#define STRATA__FE_18(M, a, ...) M(a) STRATA__FE_17(M, __VA_ARGS__)
#define STRATA__FE_19(M, a, ...) M(a) STRATA__FE_18(M, __VA_ARGS__)
#define STRATA__FE_20(M, a, ...) M(a) STRATA__FE_19(M, __VA_ARGS__)
#define STRATA__FE_21(M, a, ...) M(a) STRATA__FE_20(M, __VA_ARGS__)
#define STRATA__FE_22(M, a, ...) M(a) STRATA__FE_21(M, __VA_ARGS__)
#define STRATA__FE_23(M, a, ...) M(a) STRATA__FE_22(M, __VA_ARGS__)
#define STRATA__FE_24(M, a, ...) M(a) STRATA__FE_23(M, __VA_ARGS__)
#define STRATA__FE_25(M, a, ...) M(a) STRATA__FE_24(M, __VA_ARGS__)
#define STRATA__FE_26(M, a, ...) M(a) STRATA__FE_25(M, __VA_ARGS__)
#define STRATA__FE_27(M, a, ...) M(a) STRATA__FE_26(M, __VA_ARGS__)
#define STRATA__FE_28(M, a, ...) M(a) STRATA__FE_27(M, __VA_ARGS__)
#define STRATA__FE_29(M, a, ...) M(a) STRATA__FE_28(M, __VA_ARGS__)
#define STRATA__FE_30(M, a, ...) M(a) STRATA__FE_29(M, __VA_ARGS__)
#define STRATA__FE_31(M, a, ...) M(a) STRATA__FE_30(M, __VA_ARGS__)
#define STRATA__FE_32(M, a, ...) M(a) STRATA__FE_31(M, __VA_ARGS__)

#define RUN_TESTS(...)                                                         \
  int main(int argc, char **argv) {                                            \
    static const strata_test_entry tests_[] = {                                \
        STRATA__FOR_EACH(STRATA__TE, __VA_ARGS__)};                            \
    return strata_test_main(argc, argv, tests_,                                \
                            (int)(sizeof tests_ / sizeof tests_[0]));          \
  }

#endif
