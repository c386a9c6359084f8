/* The sizes of the public structs, for bindings that mirror them in
 * another language (python/strata checks its ctypes copies at import). */
#include "internal.h"

#include <string.h>

size_t strata_abi_sizeof(const char *name) {
#define STRATA__ABI(T) {#T, sizeof(T)}
  static const struct {
    const char *name;
    size_t size;
  } table[] = {
      STRATA__ABI(strata_context_options), STRATA__ABI(strata_device_info),
      STRATA__ABI(strata_field_desc),      STRATA__ABI(strata_field_layout),
      STRATA__ABI(strata_boundary),        STRATA__ABI(strata_stencil),
      STRATA__ABI(strata_apply_options),   STRATA__ABI(strata_png_coord),
      STRATA__ABI(strata_png_options),     STRATA__ABI(strata_traces),
      STRATA__ABI(strata_heat_options),    STRATA__ABI(strata_heat_info),
      STRATA__ABI(strata_wave_options),    STRATA__ABI(strata_wave_info),
      STRATA__ABI(strata_fdtd_options),    STRATA__ABI(strata_mg_options),
      STRATA__ABI(strata_mg_result),       STRATA__ABI(strata_operator_options),
      STRATA__ABI(strata_solver_options),  STRATA__ABI(strata_solver_info),
      STRATA__ABI(strata_field_window),    STRATA__ABI(strata_model_file),
      STRATA__ABI(strata_model),           STRATA__ABI(strata_survey_options),
      STRATA__ABI(strata_survey_result),
  };
#undef STRATA__ABI
  if (!name) return 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return table[i].size;
  return 0;
}
