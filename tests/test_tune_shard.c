/*
** test_tune_shard.c -- fa4-tune --shard i/N: every problem of a list lands
** in exactly one shard, for several N, and the split is deterministic
** (problem index % N), so Slurm array tasks cover the list between them.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../tuner/args.h"
#include "../tuner/problems.h"

/* Build LIST for PRESET and shard I/N through the command line. */
static int build(problem_list *list, const char *preset, int i, int n)
{
    char shard[32], err[512];
    char *argv[] = { "fa4-tune", "tune", "--preset", (char *)preset,
                     "--shard", shard, NULL };
    tune_args a;

    snprintf(shard, sizeof shard, "%d/%d", i, n);
    memset(list, 0, sizeof *list);
    if (tune_args_parse(&a, 6, argv, err, sizeof err) != 0 ||
        problems_build(list, &a, err, sizeof err) != 0) {
        diag("  %s", err);
        return -1;
    }
    return 0;
}

int main(void)
{
    static const char *presets[] = { "fa-grid", "llama3-8b", "deepseek-192-128" };
    static const int counts[] = { 1, 2, 3, 4, 5, 7, 8, 16, 36, 37, 100 };
    size_t pi, ci;

    plan_lazy();
    for (pi = 0; pi < sizeof presets / sizeof presets[0]; pi++) {
        problem_list all;
        int total;

        if (build(&all, presets[pi], 0, 1) != 0) {
            ok(0, "preset %s builds", presets[pi]);
            continue;
        }
        total = all.count;
        for (ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            int n = counts[ci], i, j, good = 1, sum = 0, maxs = 0, mins = 1 << 30;
            int *seen = calloc((size_t)total, sizeof *seen);

            for (i = 0; i < n && good; i++) {
                problem_list sh, again;
                if (build(&sh, presets[pi], i, n) != 0 ||
                    build(&again, presets[pi], i, n) != 0) {
                    good = 0;
                    break;
                }
                sum += sh.count;
                if (sh.count > maxs) maxs = sh.count;
                if (sh.count < mins) mins = sh.count;
                for (j = 0; j < sh.count; j++) {
                    int idx = sh.items[j].index;
                    if (idx < 0 || idx >= total || idx % n != i ||
                        memcmp(&sh.items[j].problem, &all.items[idx].problem,
                               sizeof(fa4_problem)) != 0)
                        good = 0;
                    else
                        seen[idx]++;
                }
                /* the same shard twice: the same problems in the same order */
                if (again.count != sh.count)
                    good = 0;
                for (j = 0; good && j < sh.count; j++)
                    if (again.items[j].index != sh.items[j].index)
                        good = 0;
                problem_list_free(&sh);
                problem_list_free(&again);
            }
            for (j = 0; good && j < total; j++)
                if (seen[j] != 1)
                    good = 0;
            ok(good && sum == total,
               "%s (%d problems) over %d shards: each problem in exactly one",
               presets[pi], total, n);
            ok(maxs - mins <= 1,
               "%s over %d shards: sizes differ by at most one (%d..%d)",
               presets[pi], n, mins, maxs);
            free(seen);
        }
        problem_list_free(&all);
    }
    is_int(problems_shard_of(37, 4), 1, "problem 37 of 4 shards goes to 1");
    is_int(problems_shard_of(0, 1), 0, "one shard owns everything");
    return done_testing();
}
