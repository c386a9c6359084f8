/* Checkpoints of a run: the fields' interiors, the step, and what they
 * belong to (solver kind, a hash of the case's physics), closed by a
 * CRC-32 so a damaged file is refused. */
#ifndef STRATA_CLI_CHECKPOINT_H
#define STRATA_CLI_CHECKPOINT_H

#include <stdint.h>

#include "casefile.h"
#include "strata.h"

/* A hash of the case's entries outside [case], [run] and [output]: what a
 * restart must share with the run that wrote the checkpoint. */
uint64_t ckpt_case_hash(const cf_file *f);

/* Writes path (under a temporary name, renamed when complete).  Returns 0,
 * or -1 with the reason in err. */
int ckpt_save(const char *path, const char *kind, uint64_t hash, long step,
              int nfields, strata_field *const *fields, char *err, size_t en);
/* Reads path into fields (of the shapes and precisions saved) and *step.
 * Refuses, with a message naming the difference, a file that is not a
 * checkpoint, is damaged (CRC), or was written for another solver, case,
 * shape or precision. */
int ckpt_load(const char *path, const char *kind, uint64_t hash, long *step,
              int nfields, strata_field *const *fields, char *err, size_t en);

/* The same for a solver that saves its state as one opaque buffer (wave,
 * fdtd): the buffer follows the header, the CRC-32 closes the file.
 * ckpt_load_blob returns the buffer in *blob (malloc'd; the caller frees
 * it) and its length in *n. */
int ckpt_save_blob(const char *path, const char *kind, uint64_t hash,
                   long step, const void *blob, size_t n, char *err,
                   size_t en);
int ckpt_load_blob(const char *path, const char *kind, uint64_t hash,
                   long *step, void **blob, size_t *n, char *err, size_t en);

#endif
