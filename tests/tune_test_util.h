/*
** tune_test_util.h -- run an fa4-tune command in process for the tuner's
** tests: the words are parsed as on the command line and dispatched to
** the command's function, with its output captured.
*/
#ifndef FA4_TUNE_TEST_UTIL_H
#define FA4_TUNE_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include "../tuner/args.h"
#include "../tuner/commands.h"

/*
** Run fa4-tune with the NULL-terminated words after "fa4-tune" (any
** subcommand); standard output into OUT, standard error (or the parse
** error) into ERR.  Returns the exit status, TUNE_EXIT_USAGE when the
** words do not parse.
*/
static inline int tune_run(char *out, size_t osize, char *err, size_t esize,
                           const char *first, ...)
{
    char *argv[64];
    int argc = 0, rc;
    tune_args a;
    va_list ap;
    const char *w;
    FILE *o, *e;
    size_t n;

    argv[argc++] = (char *)"fa4-tune";
    va_start(ap, first);
    for (w = first; w && argc < 63; w = va_arg(ap, const char *))
        argv[argc++] = (char *)w;
    va_end(ap);
    argv[argc] = NULL;
    out[0] = '\0';
    if (tune_args_parse(&a, argc, argv, err, esize) != 0)
        return TUNE_EXIT_USAGE;
    o = tmpfile();
    e = tmpfile();
    rc = a.cmd == TUNE_CMD_SPACE ? cmd_space(&a, o, e)
       : a.cmd == TUNE_CMD_VERIFY ? cmd_verify(&a, o, e)
       : a.cmd == TUNE_CMD_CODES ? cmd_codes(&a, o, e)
       : a.cmd == TUNE_CMD_REHASH ? cmd_rehash(&a, o, e)
       : a.cmd == TUNE_CMD_TUNE ? cmd_tune(&a, o, e) : cmd_db(&a, o, e);
    rewind(o);
    n = fread(out, 1, osize - 1, o);
    out[n] = '\0';
    rewind(e);
    n = fread(err, 1, esize - 1, e);
    err[n] = '\0';
    fclose(o);
    fclose(e);
    return rc;
}

#endif
