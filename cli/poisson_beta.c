/* [poisson] beta for discretization = fv7: the coefficient of
 * -div(beta grad phi) = psi per cell, from an expression family (constant,
 * sines, jump) or an .npy file, handed to strata_mg_set_coefficients. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* beta from [poisson] beta_file: the grid's shape, f32 or f64, every value
 * positive and finite.  Returns a malloc'ed array or NULL (failed, said). */
static double *beta_from_file(run_state *r) {
  const char *path = cf_string(&r->cf, "poisson", "beta_file", NULL);
  if (!path) {
    run_case_fail(r, "poisson", "beta", "beta = file needs [poisson] "
                  "beta_file");
    return NULL;
  }
  strata_precision p;
  int nd = 0;
  size_t sh[4];
  void *data = NULL;
  strata_status s = strata_npy_read(r->ctx, path, &p, &nd, sh, &data);
  if (s != STRATA_OK) {
    run_case_fail(r, "poisson", "beta_file", "%s",
                  strata_context_error(r->ctx));
    return NULL;
  }
  int ok = nd == r->dims;
  for (int a = 0; ok && a < r->dims; a++)
    ok = sh[a] == r->n[r->dims - 1 - a];
  if (!ok) {
    free(data);
    run_case_fail(r, "poisson", "beta_file", "'%s' has %d axes, not the "
                  "grid's shape (%s %zu, %zu%s%zu)", path, nd,
                  r->dims == 3 ? "nz, ny, nx =" : "ny, nx =",
                  r->n[r->dims - 1], r->n[r->dims - 2],
                  r->dims == 3 ? ", " : "", r->dims == 3 ? r->n[0] : 0);
    return NULL;
  }
  const size_t np = r->n[0] * r->n[1] * r->n[2];
  double *beta = malloc(np * sizeof *beta);
  if (!beta) {
    free(data);
    run_fail(r, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < np; i++) {
    beta[i] = p == STRATA_F32 ? ((float *)data)[i] : ((double *)data)[i];
    if (!(beta[i] > 0) || !isfinite(beta[i])) {
      run_case_fail(r, "poisson", "beta_file", "'%s' holds %g at element "
                    "%zu; beta must be positive and finite", path, beta[i],
                    i);
      free(beta);
      free(data);
      return NULL;
    }
  }
  free(data);
  return beta;
}

int poisson_set_beta(run_state *r, strata_mg *mg) {
  const char *fam = cf_string(&r->cf, "poisson", "beta", "constant");
  double *beta;
  if (!strcmp(fam, "file")) {
    beta = beta_from_file(r);
    if (!beta) return -1;
  } else {
    const size_t np = r->n[0] * r->n[1] * r->n[2];
    const double amp = cf_float(&r->cf, "poisson", "beta_amplitude", 0.25);
    const double ratio = cf_float(&r->cf, "poisson", "beta_ratio", 100);
    const int sines = !strcmp(fam, "sines"), jump = !strcmp(fam, "jump");
    beta = malloc(np * sizeof *beta);
    if (!beta) return run_fail(r, "out of memory");
    size_t p = 0;
    for (size_t k = 0; k < r->n[2]; k++)
      for (size_t j = 0; j < r->n[1]; j++)
        for (size_t i = 0; i < r->n[0]; i++, p++) {
          /* the cell centre as a fraction of the box along each axis */
          const size_t idx[3] = {i, j, k};
          double x[3];
          for (int a = 0; a < 3; a++)
            x[a] = ((double)idx[a] + 0.5) / (double)r->n[a];
          double v = 1;
          if (sines) {
            double s = amp;
            for (int a = 0; a < r->dims; a++) s *= sin(2 * M_PI * x[a]);
            v = 1 + s;
          } else if (jump)
            v = x[0] < 0.5 ? 1 : ratio;
          beta[p] = v;
        }
  }
  strata_status s = strata_mg_set_coefficients(mg, beta, NULL);
  free(beta);
  if (s != STRATA_OK)
    return run_case_fail(r, "poisson", "beta", "%s",
                         strata_context_error(r->ctx));
  return 0;
}
