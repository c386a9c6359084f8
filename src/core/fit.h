/* Cutting a message to its buffer.  Header-only, with no other part of
 * the library: the strata program cuts its own messages with it too
 * (cli/text.h). */
#ifndef STRATA_FIT_H
#define STRATA_FIT_H

#include <stddef.h>
#include <string.h>

/* After snprintf/vsnprintf of a message into buf (size bytes) returned
 * written: when it did not fit, the message ends instead at the last space
 * of its final quarter (else at a UTF-8 character boundary), followed by
 * "...", never cut mid-word or mid-character without saying so.  A message
 * that fit is left as it is. */
static inline void strata__fit(char *buf, size_t size, int written) {
  if (written >= 0 && (size_t)written < size) return;
  if (size < 8) {
    if (size) buf[0] = '\0';
    return;
  }
  size_t end = size - 4; /* room for "..." and the NUL */
  while (end > 0 && ((unsigned char)buf[end] & 0xC0) == 0x80) end--;
  for (size_t i = end; i > end - end / 4; i--)
    if (buf[i] == ' ') {
      end = i;
      break;
    }
  while (end > 0 && buf[end - 1] == ' ') end--;
  memcpy(buf + end, "...", 4);
}

#endif
