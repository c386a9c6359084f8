/* Case files: INI-like sections and `key = value` lines with `#` comments,
 * checked against a schema of typed keys.  Every message names the file,
 * the line and the key.  No numerics here, and no output: errors go to
 * f->err for the caller to print. */
#ifndef STRATA_CASEFILE_H
#define STRATA_CASEFILE_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
  CF_INT,    /* a whole decimal number */
  CF_FLOAT,  /* a finite decimal number */
  CF_BOOL,   /* true/false, yes/no, on/off */
  CF_STRING, /* UTF-8 text; "double quotes" keep '#' and spaces at the ends */
  CF_ENUM,   /* one of choices, "a|b|c" */
  CF_INTS,   /* comma-separated list of CF_INT, optionally in [ ] */
  CF_FLOATS, /* comma-separated list of CF_FLOAT */
  CF_ENUMS   /* comma-separated list of CF_ENUM */
} cf_type;

typedef struct cf_key {
  const char *section;
  const char *key;
  cf_type type;
  double min, max;     /* numeric range of each value (min > max: none) */
  int nmin, nmax;      /* list lengths */
  const char *choices; /* CF_ENUM, CF_ENUMS */
  const char *def;     /* default as the docs show it; NULL = required */
  const char *doc;     /* one line for docs/cases.md */
} cf_key;

typedef struct cf_entry {
  char *section, *key, *value;
  int line;
} cf_entry;

typedef struct cf_section {
  char *name;
  int line;
} cf_section;

typedef struct cf_file {
  char *path;
  cf_entry *e;
  int n, cap;
  cf_section *s;
  int ns, scap;
  const cf_key *schema;
  int nschema;
  char err[4096]; /* room for a path and its message; longer ones are
                     cut at a word, ending in "..." */
} cf_file;

/* Parses text (len bytes, NUL bytes refused) into f; path names it in
 * messages.  Returns 0, or -1 with f->err set ("path:line: ..."). */
int cf_parse(cf_file *f, const char *path, const char *text, size_t len);
/* Reads and parses the file at path (at most 16 MiB). */
int cf_load(cf_file *f, const char *path);
void cf_free(cf_file *f);

/* Checks every section and key against schema (which f keeps): unknown
 * sections and keys, values of the wrong type, out of range or of the
 * wrong length, and required keys that are missing (in the sections of
 * mandatory, "a|b", and in every other section that is present).  Sections for which
 * allowed() returns 0 are refused with the reason it writes to why.
 * Returns 0, or -1 with f->err set. */
int cf_validate(cf_file *f, const cf_key *schema, int nschema,
                const char *mandatory,
                int (*allowed)(const char *section, void *user, char *why,
                               size_t n),
                void *user);

/* Sets section.key to value as if the file held it (a command-line
 * override, reported as `--set section.key`); replaces an existing value.
 * Returns 0, or -1 with f->err set. */
int cf_set(cf_file *f, const char *section, const char *key,
           const char *value);

/* After cf_validate: the value of section.key, or the default def when it
 * is absent (cf_int also reads enums whose choices are numbers).  Lists return their length and fill at most max values. */
int cf_has(const cf_file *f, const char *section, const char *key);
int cf_line(const cf_file *f, const char *section, const char *key);
int cf_section_line(const cf_file *f, const char *section);
long cf_int(const cf_file *f, const char *section, const char *key,
            long def);
double cf_float(const cf_file *f, const char *section, const char *key,
                double def);
int cf_bool(const cf_file *f, const char *section, const char *key, int def);
const char *cf_string(const cf_file *f, const char *section, const char *key,
                      const char *def);
int cf_ints(const cf_file *f, const char *section, const char *key,
            long *out, int max);
int cf_floats(const cf_file *f, const char *section, const char *key,
              double *out, int max);
/* CF_ENUMS: 1 when choice is in the list (or, absent, in def). */
int cf_enums_has(const cf_file *f, const char *section, const char *key,
                 const char *def, const char *choice);

/* A list of choices "a|b|c": whether s is one of them, and the list as
 * text "a, b, c" in buf (n bytes, cut to fit). */
int cf_in_choices(const char *choices, const char *s);
void cf_choices_text(const char *choices, char *buf, size_t n);

/* Sets f->err to "path:line: key 'section.key' " + message and returns
 * -1: for checks across keys made by the caller. */
int cf_fail(cf_file *f, const char *section, const char *key,
            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Writes the schema as Markdown tables, one per section. */
void cf_write_docs(const cf_key *schema, int n, FILE *out);

#endif
