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

/* Over several processes each rank writes its own part of a checkpoint:
 * rank 0 to the one-process name, rank r > 0 to that name + ".rank<r>"
 * (ckpt_part_path), in version 2 of the format, which records the rank
 * and the number of ranks after the header.  part is then this rank's;
 * NULL for one process (version 1, unchanged). */
typedef struct {
  int rank, nranks;
} ckpt_part;
void ckpt_part_path(const char *path, int rank, char *out, size_t n);

/* Writes path (under a temporary name, renamed when complete; a part's
 * temporary file is left for ckpt_commit, so that every rank's new part
 * replaces the old one only once all were written).  A distributed
 * field's part is the planes this rank owns.  Returns 0, or -1 with the
 * reason in err. */
int ckpt_save(const char *path, const char *kind, uint64_t hash, long step,
              int nfields, strata_field *const *fields,
              const ckpt_part *part, char *err, size_t en);
/* A part written by ckpt_save*: keep 1 renames it to path, keep 0 removes
 * it.  Returns 0, or -1 with the reason in err. */
int ckpt_commit(const char *path, int keep, char *err, size_t en);
/* Reads path into fields (of the shapes and precisions saved) and *step.
 * Refuses, with a message naming the difference, a file that is not a
 * checkpoint, is damaged (CRC), or was written for another solver, case,
 * shape or precision, or for another rank or number of ranks (a part
 * given to one process, a one-process file to a part). */
int ckpt_load(const char *path, const char *kind, uint64_t hash, long *step,
              int nfields, strata_field *const *fields,
              const ckpt_part *part, char *err, size_t en);

/* The same for a solver that saves its state as one opaque buffer (wave,
 * fdtd): the buffer follows the header, the CRC-32 closes the file.
 * ckpt_load_blob returns the buffer in *blob (malloc'd; the caller frees
 * it) and its length in *n. */
int ckpt_save_blob(const char *path, const char *kind, uint64_t hash,
                   long step, const void *blob, size_t n,
                   const ckpt_part *part, char *err, size_t en);
int ckpt_load_blob(const char *path, const char *kind, uint64_t hash,
                   long *step, void **blob, size_t *n, const ckpt_part *part,
                   char *err, size_t en);

#endif
