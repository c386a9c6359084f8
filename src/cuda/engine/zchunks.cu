/* The z chunks of the 2.5D walks (operators and solvers alike).  The one
 * model: the number of z chunks that minimises waves x (planes per chunk +
 * warm-up planes). */
#include "cuda_internal.h"

int strata__cu_zchunks(int xy_blocks, int blocks_per_sm, int sms, int nz,
                       int warmup) {
  const long long slots = (long long)(blocks_per_sm > 0 ? blocks_per_sm : 1) *
                          (sms > 0 ? sms : 1);
  int best = 1;
  double best_cost = 1e300;
  for (int c = 1; c <= 64 && c <= nz; c++) {
    const long long blocks = (long long)xy_blocks * c;
    const long long waves = (blocks + slots - 1) / slots;
    const long long len = (nz + c - 1) / c;
    const double cost = (double)waves * (double)(len + warmup);
    if (cost < best_cost * 0.999) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}
