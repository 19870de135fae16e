/*
** split.h -- how fa4-tune's device workers share the problem list: each
** worker takes the next problem whenever it is free (a queue, not a fixed
** share, so a device never idles while problems are left), by a rule that
** keeps a class of problems -- the same kernel variants -- on one device
** where it can: each variant is then compiled once and loaded on one GPU,
** and the devices compile different variants while the others time.
** Nothing here touches a device, so the tests check the rule directly.
*/
#ifndef FA4_TUNE_SPLIT_H
#define FA4_TUNE_SPLIT_H

#include "fa4.h"
#include "problems.h"

/* 1 when A and B build the same kernel variants: the problem key without
** the sequence lengths and batch (varlen and paging are compiled in). */
int split_same_class(const fa4_problem *a, const fa4_problem *b);

/* Number the classes of LIST's problems into CLASS_OF (0, 1, ... in order
** of first appearance); returns how many there are. */
int split_classes(int *class_of, const problem_list *list);

/*
** The next problem for worker W of NWORKERS, -1 when none is left.
** N problems of classes CLASS_OF; STARTED[i] 1: problem i was taken;
** CURRENT[k]: the problem worker k tunes now (-1: none); LAST: the class
** W tuned last (-1: none).  The first in list order of, by preference:
** with several workers a problem of class LAST (its variants are loaded
** on W's device), one of a class no other worker is tuning now (its
** builds meet no one's), any.  One worker takes the list in order.
*/
int split_next(int n, const int *class_of, const int *started, int nworkers,
               const int *current, int w, int last);

#endif
