/*
** split.c -- the problem queue of fa4-tune's device workers.  See split.h.
*/
#include "split.h"

int split_same_class(const fa4_problem *a, const fa4_problem *b)
{
    int adv = a->head_dim_v ? a->head_dim_v : a->head_dim_qk;
    int bdv = b->head_dim_v ? b->head_dim_v : b->head_dim_qk;

    return a->dtype == b->dtype && a->head_dim_qk == b->head_dim_qk &&
           adv == bdv && a->heads_q / a->heads_kv == b->heads_q / b->heads_kv &&
           a->causal == b->causal && a->window_left == b->window_left &&
           (a->causal || a->window_right == b->window_right) &&
           a->return_lse == b->return_lse && a->varlen == b->varlen &&
           a->page_size == b->page_size && (a->softcap > 0) == (b->softcap > 0) &&
           !a->attention_sinks == !b->attention_sinks;
}

int split_classes(int *class_of, const problem_list *list)
{
    int i, j, n = 0;

    for (i = 0; i < list->count; i++) {
        for (j = 0; j < i; j++)
            if (split_same_class(&list->items[i].problem, &list->items[j].problem))
                break;
        class_of[i] = j < i ? class_of[j] : n++;
    }
    return n;
}

/* 1 when a worker other than W tunes a problem of class C now. */
static int class_busy(const int *class_of, int nworkers, const int *current,
                      int w, int c)
{
    int k;

    for (k = 0; k < nworkers; k++)
        if (k != w && current[k] >= 0 && class_of[current[k]] == c)
            return 1;
    return 0;
}

int split_next(int n, const int *class_of, const int *started, int nworkers,
               const int *current, int w, int last)
{
    int i, free_class = -1, any = -1;

    for (i = 0; i < n; i++) {
        if (started[i])
            continue;
        if (nworkers > 1 && last >= 0 && class_of[i] == last)
            return i;
        if (any < 0)
            any = i;
        if (free_class < 0 &&
            !class_busy(class_of, nworkers, current, w, class_of[i]))
            free_class = i;
    }
    return free_class >= 0 ? free_class : any;
}
