/*
** commands.h -- fa4-tune's subcommands, each taking parsed arguments and
** the streams to write to, and returning the process exit status:
** 0 success, 1 failure (a one-line "fa4-tune: ..." message on ERR),
** 2 bad usage, 130 interrupted by SIGINT.  main.c only dispatches, so the
** tests run the subcommands in-process.
*/
#ifndef FA4_TUNE_COMMANDS_H
#define FA4_TUNE_COMMANDS_H

#include <stdio.h>
#include "args.h"
#include "db_verify.h"

#define TUNE_EXIT_OK 0
#define TUNE_EXIT_FAIL 1
#define TUNE_EXIT_USAGE 2
#define TUNE_EXIT_INTERRUPTED 130

int cmd_tune(const tune_args *args, FILE *out, FILE *err);
int cmd_space(const tune_args *args, FILE *out, FILE *err);

/* verify: re-time the stored winners of device ARGS->device against the
** heuristic default; exit 1 when some no longer hold (and were not
** dropped with --drop).  tuner/verify.c. */
int cmd_verify(const tune_args *args, FILE *out, FILE *err);

/* The user database path of A (--db, else FA4_DB or the default), or NULL
** after the message "fa4-tune: CMD: no database path ..." on ERR. */
const char *tune_db_path(const tune_args *a, char *buf, size_t size, FILE *err);

/* The problem a stored winner W is timed (verify) or compiled (codes,
** rehash) at: its tuned shape when a trial recorded one, else one built
** from its key's buckets.  tuner/verify.c. */
fa4_problem winner_problem(const db_verify_winner *w);

/* codes: print each stored winner's machine-code hash under the kernel
** sources in use ($FA4_KERNEL_DIR or the embedded copy); rehash FILE: give
** the stale winners whose code is unchanged since FILE (codes' output under
** the sources they were tuned with) the current source hash.
** tuner/rehash.c. */
int cmd_codes(const tune_args *args, FILE *out, FILE *err);
int cmd_rehash(const tune_args *args, FILE *out, FILE *err);

/* show, export, import, merge, check: thin wrappers over lib/db.h. */
int cmd_db(const tune_args *args, FILE *out, FILE *err);

/* Install the SIGINT handler that sets search_stop (the second SIGINT
** kills the process as usual). */
void tune_install_sigint(void);

#endif
