/* Text the strata program and its benchmarks write: UTF-8 checks and JSON
 * (and strata__fit, the library's way to cut a message to its buffer).
 * Header-only and outside the library's objects, so the case-file parser
 * (built alone into the fuzz harness), the program and the benchmarks
 * share it without linking anything. */
#ifndef STRATA_CORE_TEXT_H
#define STRATA_CORE_TEXT_H

#include <math.h>
#include <stdio.h>
#include <string.h>

/* strata__fit: messages are cut to their buffers the library's way, at a
 * word, with "..." */
#include "fit.h"

/* The length of the valid UTF-8 sequence starting at s (1 to 4), or 0
 * when s does not start one (a stray continuation byte, an overlong
 * form, a surrogate, a value above U+10FFFF, a sequence cut short). */
static inline int text_utf8_len(const unsigned char *s) {
  unsigned c = s[0];
  int n;
  unsigned min;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  unsigned v = c & (0x3Fu >> (n - 1));
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = v << 6 | (s[i] & 0x3Fu);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  return n;
}

/* Writes s as a JSON string: quotes and backslashes escaped, control
 * characters (and DEL) as \u00XX, valid UTF-8 as it is, and each byte
 * that is not part of valid UTF-8 (a path's bytes may be anything) as
 * \ufffd, the replacement character: the file always parses. */
static inline void json_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  fputc('"', f);
  while (*p) {
    int n = text_utf8_len(p);
    if (n == 0) {
      fputs("\\ufffd", f);
      p++;
    } else if (*p == '"' || *p == '\\') {
      fprintf(f, "\\%c", *p++);
    } else if (*p < 0x20 || *p == 0x7F) {
      fprintf(f, "\\u%04x", *p++);
    } else {
      fwrite(p, 1, (size_t)n, f);
      p += n;
    }
  }
  fputc('"', f);
}

/* Writes v with the printf format fmt ("%.6f"), or null when v is not
 * finite: JSON has no NaN or infinity. */
static inline void json_number(FILE *f, const char *fmt, double v) {
  if (isfinite(v))
    fprintf(f, fmt, v);
  else
    fputs("null", f);
}

#endif
