/* End-to-end tests of strata run's background snapshot writer:
 * the files it writes are the bytes the synchronous path writes (one
 * process, and over 2 processes with MPI); a snapshot that cannot be
 * written fails the run, with the file's name, whether the failure is seen
 * at a later hand-off or at the end; Ctrl-C (and SIGUSR1 through
 * mpiexec) stops the run with every snapshot handed over written. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reference.h"
#include "runner.h"

#define CLI_TEST_NAME "test_cli_async"
#include "cli_test_util.h"

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in folder sub of dir (at most max), summary.json left
 * out; the count, or -1. */
static int list_dir(const char *sub, char **names, int max) {
  DIR *d = opendir(tp(sub));
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max)
    if (e->d_name[0] != '.' && strcmp(e->d_name, "summary.json"))
      names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, by_name);
  return n;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
}

/* Folders a and b of dir hold the same files (summary.json aside), byte
 * for byte, and at least want_min of them; prints the first difference. */
static int same_folders(const char *a, const char *b, int want_min) {
  char *na[512], *nb[512];
  int ca = list_dir(a, na, 512), cb = list_dir(b, nb, 512), ok = 1;
  if (ca < want_min || ca != cb) {
    fprintf(stderr, "  %s holds %d files, %s %d (at least %d wanted)\n", a,
            ca, b, cb, want_min);
    ok = 0;
  }
  for (int i = 0; ok && i < ca; i++) {
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/%s", a, na[i]);
    snprintf(pb, sizeof pb, "%s/%s", b, nb[i]);
    size_t la = 0, lb = 0;
    char *x = slurp(tp(pa), &la), *y = slurp(tp(pb), &lb);
    if (strcmp(na[i], nb[i]) || !x || !y || la != lb || la == 0 ||
        memcmp(x, y, la)) {
      fprintf(stderr, "  %s and %s differ\n", pa, pb);
      ok = 0;
    }
    free(x);
    free(y);
  }
  free_names(na, ca > 0 ? ca : 0);
  free_names(nb, cb > 0 ? cb : 0);
  return ok;
}

/* Folder sub holds no temporary file (NAME.tmp.PID). */
static int no_tmp_files(const char *sub) {
  char *names[4096];
  int n = list_dir(sub, names, 4096), ok = n >= 0;
  for (int i = 0; i < n; i++)
    if (strstr(names[i], ".tmp.")) {
      fprintf(stderr, "  %s/%s left behind\n", sub, names[i]);
      ok = 0;
    }
  free_names(names, n > 0 ? n : 0);
  return ok;
}

static int summary_has(const char *sub, const char *text) {
  char p[600];
  snprintf(p, sizeof p, "%s/summary.json", sub);
  char *js = slurp(tp(p), NULL);
  int has = js && strstr(js, text);
  free(js);
  return has;
}

/* A heat case (2D) and a wave case (3D, a PNG slice, receivers), every
 * few steps in npy, vti and png, with a checkpoint in between: the
 * background writer (the default) and output.async = false write the same
 * files, byte for byte, and the summary says which path wrote them.  On
 * the CPU engine, whose results do not depend on timing (the CUDA
 * engine's autotuner may pick another kernel in the second run). */
static const char *const cases[2] = {
    "'" STRATA_SOURCE_DIR "/examples/heat2d.ini' --set grid.n=48,40 "
    "--set run.steps=30 --set output.every=3 --set output.movie=false",
    "'" STRATA_SOURCE_DIR "/examples/seismic3d.ini' --set grid.n=40,36,36 "
    "--set boundary.width=8 --set run.steps=40 --set receivers.count=8 "
    "--set receivers.start=50,180,20 --set receivers.end=350,180,20 "
    "--set source.position=200,180,50 --set output.every=4 "
    "--set output.traces=npy"};
/* snapshots: step 0, every 3 (4) steps, final; three files each, plus the
 * checkpoint (and the traces) */
static const int case_files[2] = {3 * (11 + 1) + 1, 3 * (11 + 1) + 2};

/* Runs cases[c] on the CPU engine, snapshots in npy, vti and png, into
 * folder out of dir, with the options opts ("" or "--NAME VALUE ") and
 * through the synchronous path when sync; over np processes (mpiexec) when
 * np > 1.  The exit code, as strata(). */
static int run_case(int np, int c, const char *opts, const char *out,
                    int sync) {
  char args[2048];
  snprintf(args, sizeof args, "run %s --backend cpu --quiet --no-ceiling "
           "--set output.formats=npy,vti,png %s--out %s%s", cases[c], opts,
           out, sync ? " --set output.async=false" : "");
#ifdef STRATA_MPIEXEC
  if (np > 1) return strata_mpi(np, args);
#endif
  return np > 1 ? -1 : strata(args);
}

TEST(async_snapshots_match_sync) {
  CHECK(setup() == 0);
  for (int c = 0; c < 2; c++) {
    for (int sync = 0; sync < 2; sync++) {
      const char *out = sync ? "sync" : "async";
      rm_rf(tp(out));
      int rc = run_case(1, c, "--checkpoint-every 10 ", out, sync);
      char *e = err_text();
      CHECKF(rc == 0, "case %d, %s: exit %d: %s", c, out, rc, e ? e : "");
      free(e);
      CHECKF(summary_has(out, sync ? "\"output_async\": false"
                                   : "\"output_async\": true"),
             "case %d: %s/summary.json", c, out);
      CHECK(summary_has(out, "\"output_s\": ") &&
            summary_has(out, "\"output_writer_s\": "));
    }
    CHECKF(same_folders("async", "sync", case_files[c]), "case %d", c);
    CHECK(exists(tp("async/snap_000000.vti")) &&
          exists(tp("async/final.png")));
  }
  rm_rf(tp("async"));
  rm_rf(tp("sync"));
  return 0;
}

/* A snapshot whose name is taken by a folder cannot be renamed into place
 * (for root too): the run exits 1 naming the file, writes no summary,
 * leaves no temporary file, and writes no snapshot handed over after the
 * failed one.  Once where the failure is seen at a later hand-off or the
 * end of the loop (a snapshot in the loop), once at the end (final.png);
 * the synchronous path gives the same message. */
TEST(unwritable_snapshot_fails_run) {
  CHECK(setup() == 0);
  static const struct {
    const char *blocked, *after;
  } cs[] = {{"snap_000006.npy", "snap_000009.npy"},
            {"final.png", NULL}};
  char msg[2][1024];
  for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
    for (int sync = 0; sync < 2; sync++) {
      char blocked[600];
      rm_rf(tp("blocked"));
      CHECK(mkdir(tp("blocked"), 0755) == 0);
      snprintf(blocked, sizeof blocked, "blocked/%s", cs[c].blocked);
      CHECK(mkdir(tp(blocked), 0755) == 0);
      int rc = run_case(1, 0, "", "blocked", sync);
      char *e = err_text();
      CHECKF(rc == 1 && e && strstr(e, "cannot write blocked/") &&
                 strstr(e, cs[c].blocked),
             "%s blocked (%s): exit %d: %s", cs[c].blocked,
             sync ? "sync" : "async", rc, e ? e : "");
      /* "strata: cannot write PATH: reason", up to the temporary name */
      const char *tmp = strstr(e, ".tmp.");
      snprintf(msg[sync], sizeof msg[sync], "%.*s",
               tmp ? (int)(tmp - e) : (int)strlen(e), e);
      free(e);
      CHECK(!exists(tp("blocked/summary.json")));
      CHECK(no_tmp_files("blocked"));
      CHECK(exists(tp("blocked/snap_000003.png")));
      if (cs[c].after) {
        snprintf(blocked, sizeof blocked, "blocked/%s", cs[c].after);
        CHECKF(!exists(tp(blocked)), "%s written after the failure",
               cs[c].after);
      }
    }
    CHECKF(!strcmp(msg[0], msg[1]), "async '%s', sync '%s'", msg[0], msg[1]);
  }
  rm_rf(tp("blocked"));
  return 0;
}

/* The folder sub of a run stopped by a signal, snapshots every `every`
 * steps of ny x nx in npy and png: the summary says interrupted and
 * async; interrupted.* and the checkpoint are there; every snapshot up to
 * the step the run stopped at is whole; no temporary file.  0 or 1. */
static int stopped_whole(const char *sub, long every, size_t ny,
                         size_t nx) {
  char name[600];
  snprintf(name, sizeof name, "%s/summary.json", sub);
  char *js = slurp(tp(name), NULL);
  CHECKF(js && strstr(js, "\"interrupted\": true") &&
             strstr(js, "\"output_async\": true"),
         "%s", js ? js : "no summary");
  const char *p = strstr(js, "\"steps_done\": ");
  long done = p ? strtol(p + 14, NULL, 10) : -1;
  free(js);
  CHECKF(done >= 0, "steps_done %ld", done);
  static const char *const ends[3] = {"interrupted.npy", "interrupted.png",
                                      "checkpoint.stck"};
  for (int i = 0; i < 3; i++) {
    snprintf(name, sizeof name, "%s/%s", sub, ends[i]);
    CHECKF(exists(tp(name)), "%s", name);
  }
  for (long s = 0; s <= done; s += every) {
    snprintf(name, sizeof name, "%s/snap_%06ld.npy", sub, s);
    strata_precision prec;
    int nd = 0;
    size_t shape[4];
    void *data = NULL;
    CHECKF(strata_npy_read(NULL, tp(name), &prec, &nd, shape, &data) ==
                   STRATA_OK &&
               nd == 2 && shape[0] == ny && shape[1] == nx,
           "%s (run stopped at step %ld)", name, done);
    free(data);
    snprintf(name, sizeof name, "%s/snap_%06ld.png", sub, s);
    CHECKF(exists(tp(name)), "%s", name);
  }
  CHECK(no_tmp_files(sub));
  return 0;
}

/* Writes dir/STEM.ini, a 64 x 48 heat case with no end (for a signal to
 * stop), snapshots in npy and png every `every` steps, and removes its
 * output folder STEM.out; 0, or -1. */
static int write_endless_case(const char *stem, long every) {
  char ini[256], name[64];
  snprintf(ini, sizeof ini, "[solver]\nkind = heat\n[grid]\nn = 64, 48\n"
           "[run]\nsteps = 2000000000\n[output]\nevery = %ld\n"
           "formats = npy, png\n", every);
  snprintf(name, sizeof name, "%s.ini", stem);
  if (write_file(tp(name), ini) != 0) return -1;
  snprintf(name, sizeof name, "%s.out", stem);
  rm_rf(tp(name));
  return 0;
}

/* Ctrl-C while snapshots are handed over every few steps: exit 130, and
 * every snapshot of a step up to the one the run stopped at is written
 * whole (the writer drained before the interrupted state, the checkpoint
 * and the summary). */
TEST(interrupt_drains_writer) {
  CHECK(setup() == 0);
  const long every = 400;
  CHECK(write_endless_case("long", every) == 0);
  pid_t pid = spawn_cli("long.ini", "cpu");
  CHECK(pid >= 0);
  /* wait for the first snapshot, then let it step */
  wait_for_path("long.out/snap_000000.png", 20, 0.3);
  kill(pid, SIGINT);
  int st;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECKF(exit_code(st) == 130, "status %d", st);
  CHECK(stopped_whole("long.out", every, 48, 64) == 0);
  rm_rf(tp("long.out"));
  return 0;
}

/* A snapshot the writer thread cannot write stops the run at once, not at
 * the next snapshot: here the first snapshot of an endless run, whose next
 * one is 10^9 steps away. */
TEST(write_failure_stops_run) {
  CHECK(setup() == 0);
  CHECK(write_endless_case("stuck", 1000000000L) == 0);
  CHECK(mkdir(tp("stuck.out"), 0755) == 0);
  CHECK(mkdir(tp("stuck.out/snap_000000.npy"), 0755) == 0);
  pid_t pid = spawn_cli("stuck.ini", "cpu");
  CHECK(pid >= 0);
  int st = 0;
  pid_t w = wait_bounded(pid, &st, 60);
  CHECKF(w == pid, "the run went on for 60 s after its first snapshot "
         "failed");
  CHECKF(exit_code(st) == 1, "status %d", st);
  char *e = err_text();
  CHECKF(e && strstr(e, "cannot write stuck.out/snap_000000.npy"), "%s",
         e ? e : "no message");
  free(e);
  CHECK(!exists(tp("stuck.out/summary.json")));
  CHECK(no_tmp_files("stuck.out"));
  rm_rf(tp("stuck.out"));
  return 0;
}

/* A run into a folder that a killed run wrote into removes that run's
 * NAME.tmp.PID files, and keeps those of a process still running. */
TEST(stale_temporaries_cleaned) {
  CHECK(setup() == 0);
  rm_rf(tp("tmpk.out"));
  CHECK(mkdir(tp("tmpk.out"), 0755) == 0);
  long gone = ref_dead_pid();
  CHECK(gone > 0);
  char dead[64], dead_ck[64], live[64];
  snprintf(dead, sizeof dead, "tmpk.out/snap_000400.npy.tmp.%ld", gone);
  snprintf(dead_ck, sizeof dead_ck, "tmpk.out/checkpoint.stck.tmp.%ld",
           gone);
  snprintf(live, sizeof live, "tmpk.out/other.npy.tmp.%ld", (long)getpid());
  CHECK(write_file(tp(dead), "partial") == 0);
  CHECK(write_file(tp(dead_ck), "partial") == 0);
  CHECK(write_file(tp(live), "being written") == 0);
  CHECK(run_case(1, 0, "", "tmpk.out", 0) == 0);
  CHECK(!exists(tp(dead)) && !exists(tp(dead_ck)));
  CHECK(exists(tp(live)));
  CHECK(remove(tp(live)) == 0);
  CHECK(no_tmp_files("tmpk.out"));
  rm_rf(tp("tmpk.out"));
  return 0;
}

/* SIGTERM while a checkpoint is read (here from a pipe that stalls after
 * the header) stops the program at once with exit code 130, nothing
 * written. */
TEST(stop_signal_while_reading_checkpoint) {
  CHECK(setup() == 0);
  CHECK(write_endless_case("rd", 1000000000L) == 0);
  rm_rf(tp("rd.out"));
  char *cka[] = {"strata", "run", "rd.ini", "--no-ceiling", "--quiet",
                 "--backend", "cpu", "--set", "run.steps=3",
                 "--checkpoint-every", "2", NULL};
  pid_t pid = spawn_in_dir(STRATA_CLI_PATH, cka, 0);
  CHECK(pid > 0);
  int st = 0;
  CHECK(wait_bounded(pid, &st, 60) == pid && exit_code(st) == 0);
  size_t len = 0;
  char *ck = slurp(tp("rd.out/checkpoint.stck"), &len);
  CHECK(ck && len > 200);
  rm_rf(tp("rd.out"));
  CHECK(mkfifo(tp("pipe.stck"), 0600) == 0);
  char *argv[] = {"strata", "run", "rd.ini", "--no-ceiling", "--quiet",
                  "--backend", "cpu", "--restart", "pipe.stck", NULL};
  pid = spawn_in_dir(STRATA_CLI_PATH, argv, 0);
  CHECK(pid > 0);
  int fd = -1; /* open succeeds once the run opens the pipe to read */
  for (int i = 0; i < 600 && fd < 0; i++)
    if ((fd = open(tp("pipe.stck"), O_WRONLY | O_NONBLOCK)) < 0) sleep_s(0.05);
  CHECK(fd >= 0);
  CHECK(write(fd, ck, 100) == 100); /* the header and a little more */
  sleep_s(0.3);
  kill(pid, SIGTERM);
  pid_t w = wait_bounded(pid, &st, 20);
  close(fd);
  free(ck);
  remove(tp("pipe.stck"));
  CHECKF(w == pid, "SIGTERM did not stop the reading in 20 s");
  CHECKF(exit_code(st) == 130, "exit %d", exit_code(st));
  char *e = err_text();
  CHECKF(e && strstr(e, "pipe.stck: interrupted while reading the checkpoint"),
         "%s", e ? e : "");
  free(e);
  CHECK(!exists(tp("rd.out")));
  return 0;
}

#ifdef STRATA_MPIEXEC
/* Over 2 processes rank 0 gathers each snapshot into the writer's buffer:
 * the files are those of the synchronous one-process run; a snapshot it
 * cannot write fails every rank, the message printed once. */
TEST(mpi_async_matches_sync) {
  CHECK(setup() == 0);
  for (int c = 0; c < 2; c++) {
    for (int k = 0; k < 2; k++) {
      const char *out = k ? "mpi2" : "sync1";
      rm_rf(tp(out));
      int rc = run_case(k ? 2 : 1, c, "", out, !k);
      char *e = err_text();
      CHECKF(rc == 0, "case %d, %s: exit %d: %s", c, out, rc, e ? e : "");
      free(e);
    }
    CHECK(summary_has("mpi2", "\"output_async\": true") &&
          summary_has("mpi2", "\"ranks\": 2"));
    /* no checkpoint here: its parts differ from one process's by design */
    CHECKF(same_folders("mpi2", "sync1", case_files[c] - 1), "case %d", c);
  }
  rm_rf(tp("mpi2"));
  rm_rf(tp("sync1"));
  rm_rf(tp("blocked"));
  CHECK(mkdir(tp("blocked"), 0755) == 0);
  CHECK(mkdir(tp("blocked/snap_000006.vti"), 0755) == 0);
  int rc = run_case(2, 0, "", "blocked", 0);
  char *e = err_text();
  const char *m = e ? strstr(e, "cannot write blocked/snap_000006.vti") : NULL;
  CHECKF(rc != 0 && m && !strstr(m + 1, "cannot write blocked/"),
         "exit %d: %s", rc, e ? e : "");
  free(e);
  CHECK(!exists(tp("blocked/summary.json")));
  CHECK(no_tmp_files("blocked"));
  rm_rf(tp("blocked"));
  return 0;
}

/* SIGUSR1 to Open MPI's mpiexec (forwarded to every rank) while rank 0's
 * writer has snapshots in hand: every rank stops at one step, and every
 * snapshot up to it is written whole (as interrupt_drains_writer). */
TEST(mpi_stop_signal_drains_writer) {
  CHECK(setup() == 0);
  if (!mpiexec_is_open_mpi())
    SKIP("mpiexec is not Open MPI's (SIGUSR1 forwarding)");
  const long every = 200;
  CHECK(write_endless_case("mlong", every) == 0);
  /* bounded, as test_cli's mpi_stop_signal: some launchers do not
   * deliver the signal */
  int st = 0;
  pid_t w = mpi_run_stopped("mlong.ini", "mlong.out/snap_000000.png", 30,
                            0.3, &st);
  if (w == 0) {
    rm_rf(tp("mlong.out"));
    SKIP("mpiexec did not stop the run within 60 s of SIGUSR1");
  }
  CHECK(w > 0);
  CHECKF(WIFEXITED(st) && WEXITSTATUS(st) != 0, "status %d", st);
  CHECK(exists(tp("mlong.out/checkpoint.stck.rank1")));
  CHECK(stopped_whole("mlong.out", every, 48, 64) == 0);
  rm_rf(tp("mlong.out"));
  return 0;
}
#else
TEST(mpi_async_matches_sync) { SKIP("strata was built without MPI"); }
TEST(mpi_stop_signal_drains_writer) { SKIP("strata was built without MPI"); }
#endif

TEST(cleanup) {
  CHECK(rm_rf(dir) == 0);
  return 0;
}

RUN_TESTS(async_snapshots_match_sync, unwritable_snapshot_fails_run,
          interrupt_drains_writer, write_failure_stops_run,
          stale_temporaries_cleaned, stop_signal_while_reading_checkpoint,
          mpi_async_matches_sync,
          mpi_stop_signal_drains_writer, cleanup)
