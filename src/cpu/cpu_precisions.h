/* Includes CPU_BODY (a file name in quotes) once per precision, with
 *   T        the value type (float, then double)
 *   FN(x)    x with a precision suffix (_f32, _f64)
 *   PT(x)    the point update x of ../core/point.h for T
 * Use: #define CPU_BODY "file.inc", then #include "cpu_precisions.h". */
#define T float
#define FN(x) x##_f32
#define PT(x) strata__pt_##x##_f32
#include CPU_BODY
#undef T
#undef FN
#undef PT
#define T double
#define FN(x) x##_f64
#define PT(x) strata__pt_##x##_f64
#include CPU_BODY
#undef T
#undef FN
#undef PT
#undef CPU_BODY
