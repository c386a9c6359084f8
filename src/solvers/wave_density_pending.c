/* The density setter of the wave solver's public interface, for a solver
 * without variable density: it refuses every model, so that callers
 * (the case files' [model] density) report the limit rather than run
 * with a density they did not get. */
#include "wave_internal.h"

strata_status strata_wave_set_density(strata_wave *w, const double *rho) {
  if (!w) return STRATA_EINVAL;
  (void)rho;
  return strata__fail_arg_s(w->ctx, STRATA_ENOTSUP, "rho", "set",
                            "wave: this solver has constant density; a "
                            "density model is not supported");
}
