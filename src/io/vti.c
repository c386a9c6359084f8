/* VTK XML ImageData (.vti): point data in one appended raw block, 64-bit
 * block headers, little-endian; opens in ParaView and VisIt. */
#define _POSIX_C_SOURCE 200809L
#include "io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int name_ok(const char *s) {
  if (!s || !*s) return 0;
  for (; *s; s++)
    if (*s == '"' || *s == '<' || *s == '>' || *s == '&' || *s < ' ')
      return 0;
  return 1;
}

strata_status strata__vti_write_host(strata_context *ctx, const char *path,
                                     const size_t n[3], int nfields,
                                     const void *const *data,
                                     const strata_precision *prec,
                                     const char *const *names,
                                     const double spacing[3],
                                     const double origin[3]) {
  double h[3] = {1, 1, 1}, o0[3] = {0, 0, 0};
  char nm[STRATA__ARGNAME_SIZE];
  for (int a = 0; a < 3; a++) {
    if (spacing) h[a] = spacing[a];
    if (origin) o0[a] = origin[a];
    if (!(h[a] > 0) || !isfinite(h[a]) || !isfinite(o0[a]))
      return strata__fail_arg(ctx, STRATA_EINVAL,
                          strata__idx(nm, isfinite(o0[a]) ? "spacing"
                                                          : "origin", a),
                          isfinite(o0[a]) ? h[a] : o0[a],
                          "spacing must be positive and "
                          "finite and origin finite (axis %c: %g, %g)",
                          "xyz"[a], h[a], o0[a]);
  }
  for (int i = 0; i < nfields; i++)
    if (!name_ok(names[i]))
      return strata__fail_arg_s(ctx, STRATA_EINVAL,
                          strata__idx(nm, "names", i),
                          names[i] ? names[i] : "NULL",
                          "field %d's name is empty or "
                          "holds one of the characters \" < > &", i);
  strata__ofile o;
  strata_status s = strata__ofile_open(&o, ctx, path);
  if (s != STRATA_OK) return s;
  strata__ofile_format(&o,
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\""
      " header_type=\"UInt64\">\n"
      "  <ImageData WholeExtent=\"0 %zu 0 %zu 0 %zu\" Origin=\"%.17g %.17g "
      "%.17g\" Spacing=\"%.17g %.17g %.17g\" Direction=\"1 0 0 0 1 0 0 0 1\">\n"
      "    <Piece Extent=\"0 %zu 0 %zu 0 %zu\">\n"
      "      <PointData Scalars=\"%s\">\n",
      n[0] - 1, n[1] - 1, n[2] - 1, o0[0], o0[1], o0[2], h[0], h[1], h[2],
      n[0] - 1, n[1] - 1, n[2] - 1, names[0]);
  uint64_t offset = 0, count = (uint64_t)n[0] * n[1] * n[2];
  for (int i = 0; i < nfields; i++) {
    int es = (int)prec[i];
    strata__ofile_format(&o,
        "        <DataArray type=\"Float%d\" Name=\"%s\" "
        "NumberOfComponents=\"1\" format=\"appended\" offset=\"%llu\"/>\n",
        es * 8, names[i], (unsigned long long)offset);
    offset += 8 + count * (uint64_t)es;
  }
  strata__ofile_format(&o,
      "      </PointData>\n"
      "      <CellData>\n"
      "      </CellData>\n"
      "    </Piece>\n"
      "  </ImageData>\n"
      "  <AppendedData encoding=\"raw\">\n"
      "   _");
  for (int i = 0; i < nfields && o.status == STRATA_OK; i++) {
    uint64_t bytes = count * (uint64_t)prec[i];
    strata__ofile_write_le(&o, &bytes, 1, 8);
    strata__ofile_write_le(&o, data[i], count, (size_t)prec[i]);
  }
  strata__ofile_format(&o, "\n  </AppendedData>\n</VTKFile>\n");
  return strata__ofile_commit(&o);
}

strata_status strata_vti_write(const char *path, int nfields,
                               const strata_field *const *fields,
                               const char *const *names,
                               const double spacing[3],
                               const double origin[3]) {
  if (nfields < 1 || !fields || !fields[0] || !names) return STRATA_EINVAL;
  strata_context *ctx = fields[0]->ctx;
  const strata_field *f0 = fields[0];
  char nm[STRATA__ARGNAME_SIZE];
  for (int i = 0; i < nfields; i++) {
    if (!fields[i])
      return strata__fail_arg_s(ctx, STRATA_EINVAL,
                                strata__idx(nm, "fields", i), "NULL",
                                "field %d is NULL", i);
    for (int a = 0; a < 3; a++)
      if (fields[i]->d.n[a] != f0->d.n[a])
        return strata__fail_arg_s(ctx, STRATA_ESHAPE,
                                  strata__idx(nm, "fields", i), "set",
                                  "field %d ('%s') has a "
                                  "different shape from field 0", i,
                                  names[i] ? names[i] : "?");
  }
  void **host = calloc((size_t)nfields, sizeof *host);
  strata_precision *prec = calloc((size_t)nfields, sizeof *prec);
  strata_status s = host && prec ? STRATA_OK
                                 : strata__fail(ctx, STRATA_ENOMEM,
                                                "out of memory");
  for (int i = 0; i < nfields && s == STRATA_OK; i++) {
    prec[i] = fields[i]->d.precision;
    s = strata__field_to_host(fields[i], &host[i]);
  }
  if (s == STRATA_OK)
    s = strata__vti_write_host(ctx, path, f0->d.n, nfields,
                               (const void *const *)host, prec, names,
                               spacing, origin);
  for (int i = 0; host && i < nfields; i++) free(host[i]);
  free(host);
  free(prec);
  return s;
}

strata_status strata_field_save_vti(const strata_field *f, const char *name,
                                    const char *path, const double spacing[3],
                                    const double origin[3]) {
  if (!f) return STRATA_EINVAL;
  const strata_field *fs[1] = {f};
  const char *ns[1] = {name ? name : "u"};
  return strata_vti_write(path, 1, fs, ns, spacing, origin);
}

strata_status strata__series_check(strata_context *ctx, const char *who,
                                   int n, const char *const *files,
                                   const double *times, const char *bad) {
  char nm[STRATA__ARGNAME_SIZE];
  for (int i = 0; i < n; i++) {
    if (!files[i] || !*files[i] || strpbrk(files[i], bad) ||
        !name_ok(files[i]))
      return strata__fail_arg_s(ctx, STRATA_EINVAL,
                                strata__idx(nm, "files", i),
                                files[i] ? files[i] : "NULL",
                                "%s: file %d's name is empty or holds one of "
                                "the characters %s", who, i, bad);
    if (!isfinite(times[i]) || (i > 0 && !(times[i] > times[i - 1])))
      return strata__fail_arg(ctx, STRATA_EINVAL,
                              strata__idx(nm, "times", i), times[i],
                              "%s: time %d is %g; the times must be finite "
                              "and increasing", who, i, times[i]);
  }
  return STRATA_OK;
}

strata_status strata_pvd_write(strata_context *ctx, const char *path, int n,
                               const char *const *files,
                               const double *times) {
  if (n < 1 || !files || !times)
    return strata__fail_arg(ctx, STRATA_EINVAL, "n", n, "pvd: %d datasets%s; "
                            "a collection needs at least one", n,
                            files && times ? "" : " (or a NULL list)");
  strata_status s = strata__series_check(ctx, "pvd", n, files, times,
                                         "\"<>&");
  if (s != STRATA_OK) return s;
  strata__ofile o;
  if ((s = strata__ofile_open(&o, ctx, path)) != STRATA_OK) return s;
  strata__ofile_format(&o, "<?xml version=\"1.0\"?>\n"
                           "<VTKFile type=\"Collection\" version=\"0.1\" "
                           "byte_order=\"LittleEndian\">\n  <Collection>\n");
  for (int i = 0; i < n; i++)
    strata__ofile_format(&o, "    <DataSet timestep=\"%.17g\" group=\"\" "
                             "part=\"0\" file=\"%s\"/>\n", times[i],
                         files[i]);
  strata__ofile_format(&o, "  </Collection>\n</VTKFile>\n");
  return strata__ofile_commit(&o);
}
