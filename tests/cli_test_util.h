/* Helpers shared by the strata program's end-to-end tests (test_cli.c and
 * test_cli_async.c): one scratch folder per program (dir), files in it,
 * running `strata ARGS` (and `mpiexec -n P strata ARGS`) there, and
 * starting a long run in the background to stop it with a signal.
 *
 * Include after runner.h, with CLI_TEST_NAME defined to the program's name:
 * its scratch folder is /tmp/strata_<CLI_TEST_NAME>.XXXXXX. */
#ifndef STRATA_CLI_TEST_UTIL_H
#define STRATA_CLI_TEST_UTIL_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef STRATA_CLI_PATH
#error "tests/CMakeLists.txt defines STRATA_CLI_PATH and STRATA_SOURCE_DIR"
#endif
#ifndef CLI_TEST_NAME
#error "define CLI_TEST_NAME (the test program's name) before this header"
#endif

/* the scratch folder every helper below works in; setup() makes it */
static char dir[256];

/* dir/name, in one of 8 rotating buffers */
static inline const char *tp(const char *name) {
  static char buf[8][1024];
  static int k;
  k = (k + 1) % 8;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

static inline int setup(void) {
  if (dir[0]) return 0;
  snprintf(dir, sizeof dir, "/tmp/strata_" CLI_TEST_NAME ".XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

/* The whole file, 0-terminated (its length in *n), or NULL. */
static inline char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  long L = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (L = ftell(f)) >= 0 &&
      fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)L + 1)) &&
      fread(b, 1, (size_t)L, f) != (size_t)L) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (!b) return NULL;
  b[L] = 0;
  if (n) *n = (size_t)L;
  return b;
}

static inline int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

static inline int exists(const char *path) { return access(path, F_OK) == 0; }

static inline int rm_rf(const char *path) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  return system(cmd);
}

/* A wait status as a shell gives it: the exit code, or 128 + signal. */
static inline int exit_code(int st) {
  if (st == -1) return -1;
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  return 128 + WTERMSIG(st);
}

/* Runs `strata ARGS` in dir; stdout and stderr go to out.txt / err.txt.
 * Returns the exit code (or 128 + signal). */
static inline int strata(const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >out.txt 2>err.txt", dir,
           STRATA_CLI_PATH, args);
  return exit_code(system(cmd));
}

static inline char *err_text(void) { return slurp(tp("err.txt"), NULL); }
static inline char *out_text(void) { return slurp(tp("out.txt"), NULL); }

/* ---- runs in the background, stopped by a signal ------------------------ */

static inline void sleep_s(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9 + 0.5);
  nanosleep(&ts, NULL);
}

/* Waits (polling every 50 ms, at most `seconds`) for dir/name to appear,
 * then `settle` seconds more to let the run step. */
static inline void wait_for_path(const char *name, double seconds,
                                 double settle) {
  int polls = (int)(seconds / 0.05 + 0.5);
  for (int i = 0; i < polls && !exists(tp(name)); i++) sleep_s(0.05);
  sleep_s(settle);
}

/* How mpiexec runs here: as root and with more ranks than cores where CI
 * needs it, one OpenMP thread per rank. */
static const char *const cli_mpi_env[][2] = {
    {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
    {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
    {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
    {"OMP_NUM_THREADS", "1"}};
#define CLI_MPI_ENV_N ((int)(sizeof cli_mpi_env / sizeof cli_mpi_env[0]))

/* Forks a child that runs prog with argv in dir, its stderr in err.txt;
 * with `mpi` the child leads its own process group (mpiexec and its ranks:
 * one group to kill if stuck) and gets cli_mpi_env.  The child's id, or -1. */
static inline pid_t spawn_in_dir(const char *prog, char *const argv[],
                                 int mpi) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (mpi) setpgid(0, 0);
  if (chdir(dir) != 0) _exit(99);
  FILE *e = freopen("err.txt", "w", stderr);
  (void)e;
  for (int i = 0; mpi && i < CLI_MPI_ENV_N; i++)
    setenv(cli_mpi_env[i][0], cli_mpi_env[i][1], 1);
  execv(prog, argv);
  _exit(98);
}

/* `strata run INI --no-ceiling [--backend BACKEND]` in dir, in the
 * background (backend NULL: the default one). */
static inline pid_t spawn_cli(const char *ini, const char *backend) {
  char *argv[] = {"strata", "run", (char *)ini, "--no-ceiling",
                  backend ? "--backend" : NULL, (char *)backend, NULL};
  return spawn_in_dir(STRATA_CLI_PATH, argv, 0);
}

/* waitpid for pid, polling every 100 ms for at most `seconds`: pid (its
 * status in *status), or -1 on an error; 0 when it ran on, after killing
 * it (and its process group, for a child of spawn_cli_mpi) and reaping it. */
static inline pid_t wait_bounded(pid_t pid, int *status, double seconds) {
  int polls = (int)(seconds / 0.1 + 0.5);
  pid_t w = 0;
  for (int i = 0; i < polls && (w = waitpid(pid, status, WNOHANG)) == 0; i++)
    sleep_s(0.1);
  if (w == 0) {
    kill(-pid, SIGKILL); /* spawn_cli_mpi's group */
    kill(pid, SIGKILL);  /* spawn_cli's child, in the caller's group */
    waitpid(pid, status, 0);
  }
  return w;
}

/* ---- several processes (mpiexec -n P strata ...) ------------------------- */

#ifdef STRATA_MPIEXEC
/* Runs `mpiexec -n np strata ARGS` in dir like strata(), with cli_mpi_env. */
static inline int strata_mpi(int np, const char *args) {
  char env[512] = "", cmd[4096];
  size_t used = 0;
  for (int i = 0; i < CLI_MPI_ENV_N && used < sizeof env; i++)
    used += (size_t)snprintf(env + used, sizeof env - used, "%s%s=%s",
                             i ? " " : "", cli_mpi_env[i][0],
                             cli_mpi_env[i][1]);
  snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' -n %d '%s' %s "
           ">out.txt 2>err.txt", dir, env, STRATA_MPIEXEC, np,
           STRATA_CLI_PATH, args);
  return exit_code(system(cmd));
}

/* Whether mpiexec is Open MPI's (which forwards SIGUSR1 to the ranks). */
static inline int mpiexec_is_open_mpi(void) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --version 2>&1 | grep -q 'Open MPI\\|OpenRTE'",
           STRATA_MPIEXEC);
  return system(cmd) == 0;
}

/* `mpiexec -n nranks strata run INI --no-ceiling --backend cpu` in dir, in
 * the background, in a process group of its own (for wait_bounded). */
static inline pid_t spawn_cli_mpi(const char *ini, int nranks) {
  char n[16];
  snprintf(n, sizeof n, "%d", nranks);
  char *argv[] = {"mpiexec", "-n", n, STRATA_CLI_PATH, "run", (char *)ini,
                  "--no-ceiling", "--backend", "cpu", NULL};
  return spawn_in_dir(STRATA_MPIEXEC, argv, 1);
}

/* The stop-signal run: `mpiexec -n 2 strata run INI` in the background
 * (spawn_cli_mpi); once dir/started appears (at most start_s, then settle_s
 * more, as wait_for_path) SIGUSR1 to mpiexec, which Open MPI's forwards to
 * the ranks; then a wait of at most 60 s (wait_bounded), the status in
 * *status.  mpiexec's id once it ended; 0 when it ran on (killed, with its
 * ranks); -1 when it could not be started or waited for. */
static inline pid_t mpi_run_stopped(const char *ini, const char *started,
                                    double start_s, double settle_s,
                                    int *status) {
  pid_t pid = spawn_cli_mpi(ini, 2);
  if (pid < 0) return -1;
  wait_for_path(started, start_s, settle_s);
  kill(pid, SIGUSR1);
  return wait_bounded(pid, status, 60);
}
#endif

#endif
