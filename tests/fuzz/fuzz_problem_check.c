/*
** fuzz_problem_check.c -- libFuzzer target for fa4_problem_check() (and
** the problem key the database derives from a problem).  The input is a
** list of edits to a valid problem, 9 bytes each: a field number and a
** 64-bit value stored into that field (truncated to its width), so the
** empty input is a valid problem and every byte moves one field -- the
** fuzzer spends its time on values, not on finding a valid struct.
** A finding is a crash, an ASan report or, built with UBSan, undefined
** behaviour (signed overflow in a size check).  See tests/fuzz/README.
*/
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "fa4.h"
#include "db.h"

#define F(field) { offsetof(fa4_problem, field), sizeof(((fa4_problem *)0)->field) }
static const struct { size_t off, size; } fields[] = {
    F(struct_size), F(dtype), F(batch), F(seqlen_q), F(seqlen_k), F(heads_q),
    F(heads_kv), F(head_dim_qk), F(head_dim_v), F(causal), F(window_left),
    F(window_right), F(softmax_scale), F(return_lse),
    F(q_strides[0]), F(q_strides[1]), F(q_strides[2]),
    F(k_strides[0]), F(k_strides[1]), F(k_strides[2]),
    F(v_strides[0]), F(v_strides[1]), F(v_strides[2]),
    F(o_strides[0]), F(o_strides[1]), F(o_strides[2]),
    F(varlen), F(page_size), F(attention_sinks), F(block_table_stride),
    F(num_pages),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fa4_problem p = FA4_PROBLEM_INIT;
    char why[512];
    size_t i;

    p.batch = 2;
    p.seqlen_q = p.seqlen_k = 1000;
    p.heads_q = 16;
    p.heads_kv = 4;
    p.head_dim_qk = 128;
    for (i = 0; i + 9 <= size; i += 9) {
        size_t f = data[i] % NFIELDS;
        uint64_t v;

        memcpy(&v, data + i + 1, 8);
        /* Little-endian: the low bytes of V land in the field. */
        memcpy((char *)&p + fields[f].off, &v, fields[f].size);
    }
    /* A struct_size beyond the struct would be a caller bug the API
       cannot detect (it reads only what struct_size covers); keep it in
       range so the fuzzer tests the checks, not that contract. */
    if (p.struct_size > sizeof p)
        p.struct_size = sizeof p;
    if (fa4_problem_check(&p, why, sizeof why) == FA4_OK) {
        db_seqlen_bucket(p.seqlen_q);
        db_work_bucket(&p);
    }
    fa4_problem_check(&p, NULL, 0);
    return 0;
}
