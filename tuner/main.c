/*
** main.c -- fa4-tune: parse the command line and dispatch to the
** subcommand (commands.c).  See fa4-tune(1).
*/
#include <stdio.h>

#include "args.h"
#include "commands.h"

int main(int argc, char **argv)
{
    tune_args args;
    char err[1024];

    if (tune_args_parse(&args, argc, argv, err, sizeof err) != 0) {
        fprintf(stderr, "fa4-tune: %s\n", err);
        return TUNE_EXIT_USAGE;
    }
    switch (args.cmd) {
    case TUNE_CMD_HELP:
        fputs(tune_args_usage(), stdout);
        return TUNE_EXIT_OK;
    case TUNE_CMD_VERSION:
        printf("fa4-tune %s\n", fa4_version());
        return TUNE_EXIT_OK;
    case TUNE_CMD_TUNE:
        return cmd_tune(&args, stdout, stderr);
    case TUNE_CMD_SPACE:
        return cmd_space(&args, stdout, stderr);
    case TUNE_CMD_VERIFY:
        return cmd_verify(&args, stdout, stderr);
    case TUNE_CMD_CODES:
        return cmd_codes(&args, stdout, stderr);
    case TUNE_CMD_REHASH:
        return cmd_rehash(&args, stdout, stderr);
    case TUNE_CMD_SHOW:
    case TUNE_CMD_EXPORT:
    case TUNE_CMD_IMPORT:
    case TUNE_CMD_MERGE:
    case TUNE_CMD_CHECK:
        return cmd_db(&args, stdout, stderr);
    case TUNE_CMD_NONE:
        break;
    }
    fprintf(stderr, "fa4-tune: no subcommand (fa4-tune --help)\n");
    return TUNE_EXIT_USAGE;
}
