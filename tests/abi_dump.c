/*
** abi_dump.c -- print the layout of every public struct of fa4.h, the
** values of its enums and version macros, and what each _INIT macro puts
** in each field, one fact per line:
**
**   struct NAME SIZE ALIGN
**   field STRUCT NAME OFFSET SIZE
**   init STRUCT FIELD VALUE...       (pointers: 0 for NULL, 1 otherwise)
**   const NAME VALUE
**   version STRING
**
** The Python binding's ctypes description (python/fa4/_abi.py) is compared
** with this output by python/tests/test_abi.py, so a header change the
** binding misses fails `make check`.  A field renamed or removed in the
** header fails here, at compile time; one added changes the struct's size.
*/
#include <stddef.h>
#include <stdio.h>
#include "fa4.h"

#define STRUCT(T) printf("struct %s %zu %zu\n", #T, sizeof(T), _Alignof(T))
#define FIELD(T, f) printf("field %s %s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T *)0)->f))
#define CONST(v) printf("const %s %lld\n", #v, (long long)(v))
#define INIT_INT(x, T, f) printf("init %s %s %lld\n", #T, #f, (long long)(x).f)
#define INIT_PTR(x, T, f) printf("init %s %s %d\n", #T, #f, (x).f != NULL)
#define INIT_FLOAT(x, T, f) printf("init %s %s %.9g\n", #T, #f, (double)(x).f)
#define INIT_ARR3(x, T, f) printf("init %s %s %lld %lld %lld\n", #T, #f, (long long)(x).f[0], \
                                  (long long)(x).f[1], (long long)(x).f[2])

static void context_options(void)
{
    fa4_context_options x = FA4_CONTEXT_OPTIONS_INIT;

    STRUCT(fa4_context_options);
    FIELD(fa4_context_options, struct_size);
    FIELD(fa4_context_options, db_path);
    FIELD(fa4_context_options, system_db_path);
    FIELD(fa4_context_options, no_database);
    FIELD(fa4_context_options, plan_only);
    FIELD(fa4_context_options, arch);
    FIELD(fa4_context_options, check_inputs);
    FIELD(fa4_context_options, reserved);
    FIELD(fa4_context_options, enable_sm100);
    INIT_INT(x, fa4_context_options, struct_size);
    INIT_PTR(x, fa4_context_options, db_path);
    INIT_PTR(x, fa4_context_options, system_db_path);
    INIT_INT(x, fa4_context_options, no_database);
    INIT_INT(x, fa4_context_options, plan_only);
    INIT_PTR(x, fa4_context_options, arch);
    INIT_INT(x, fa4_context_options, check_inputs);
    INIT_INT(x, fa4_context_options, reserved);
    INIT_INT(x, fa4_context_options, enable_sm100);
}

static void problem(void)
{
    fa4_problem x = FA4_PROBLEM_INIT;

    STRUCT(fa4_problem);
    FIELD(fa4_problem, struct_size);
    FIELD(fa4_problem, dtype);
    FIELD(fa4_problem, batch);
    FIELD(fa4_problem, seqlen_q);
    FIELD(fa4_problem, seqlen_k);
    FIELD(fa4_problem, heads_q);
    FIELD(fa4_problem, heads_kv);
    FIELD(fa4_problem, head_dim_qk);
    FIELD(fa4_problem, head_dim_v);
    FIELD(fa4_problem, causal);
    FIELD(fa4_problem, window_left);
    FIELD(fa4_problem, window_right);
    FIELD(fa4_problem, softmax_scale);
    FIELD(fa4_problem, return_lse);
    FIELD(fa4_problem, q_strides);
    FIELD(fa4_problem, k_strides);
    FIELD(fa4_problem, v_strides);
    FIELD(fa4_problem, o_strides);
    FIELD(fa4_problem, varlen);
    FIELD(fa4_problem, page_size);
    FIELD(fa4_problem, attention_sinks);
    FIELD(fa4_problem, block_table_stride);
    FIELD(fa4_problem, num_pages);
    FIELD(fa4_problem, reserved);
    FIELD(fa4_problem, softcap);
    FIELD(fa4_problem, out_dtype);
    FIELD(fa4_problem, token_scales);
    FIELD(fa4_problem, reserved2);
    INIT_INT(x, fa4_problem, struct_size);
    INIT_INT(x, fa4_problem, dtype);
    INIT_INT(x, fa4_problem, batch);
    INIT_INT(x, fa4_problem, seqlen_q);
    INIT_INT(x, fa4_problem, seqlen_k);
    INIT_INT(x, fa4_problem, heads_q);
    INIT_INT(x, fa4_problem, heads_kv);
    INIT_INT(x, fa4_problem, head_dim_qk);
    INIT_INT(x, fa4_problem, head_dim_v);
    INIT_INT(x, fa4_problem, causal);
    INIT_INT(x, fa4_problem, window_left);
    INIT_INT(x, fa4_problem, window_right);
    INIT_FLOAT(x, fa4_problem, softmax_scale);
    INIT_INT(x, fa4_problem, return_lse);
    INIT_ARR3(x, fa4_problem, q_strides);
    INIT_ARR3(x, fa4_problem, k_strides);
    INIT_ARR3(x, fa4_problem, v_strides);
    INIT_ARR3(x, fa4_problem, o_strides);
    INIT_INT(x, fa4_problem, varlen);
    INIT_INT(x, fa4_problem, page_size);
    INIT_INT(x, fa4_problem, attention_sinks);
    INIT_INT(x, fa4_problem, block_table_stride);
    INIT_INT(x, fa4_problem, num_pages);
    INIT_INT(x, fa4_problem, reserved);
    INIT_FLOAT(x, fa4_problem, softcap);
    INIT_INT(x, fa4_problem, out_dtype);
    INIT_INT(x, fa4_problem, token_scales);
    INIT_INT(x, fa4_problem, reserved2);
}

static void config(void)
{
    fa4_config x = FA4_CONFIG_INIT;

    STRUCT(fa4_config);
    FIELD(fa4_config, struct_size);
    FIELD(fa4_config, family);
    FIELD(fa4_config, bm);
    FIELD(fa4_config, bn);
    FIELD(fa4_config, stages);
    FIELD(fa4_config, swizzle);
    FIELD(fa4_config, fused_kv);
    FIELD(fa4_config, q_tiles);
    FIELD(fa4_config, warps);
    FIELD(fa4_config, consumer_wgs);
    FIELD(fa4_config, producer_regs);
    FIELD(fa4_config, consumer_regs);
    FIELD(fa4_config, cluster);
    FIELD(fa4_config, exp2_emu_pct);
    FIELD(fa4_config, rescale_threshold);
    FIELD(fa4_config, pingpong);
    FIELD(fa4_config, scheduler);
    FIELD(fa4_config, splits);
    FIELD(fa4_config, pack_gqa);
    FIELD(fa4_config, kv_split_warps);
    FIELD(fa4_config, late_k_release);
    FIELD(fa4_config, tanh_poly_pct);
    INIT_INT(x, fa4_config, struct_size);
    INIT_INT(x, fa4_config, family);
    INIT_INT(x, fa4_config, bm);
    INIT_INT(x, fa4_config, bn);
    INIT_INT(x, fa4_config, stages);
    INIT_INT(x, fa4_config, swizzle);
    INIT_INT(x, fa4_config, fused_kv);
    INIT_INT(x, fa4_config, q_tiles);
    INIT_INT(x, fa4_config, warps);
    INIT_INT(x, fa4_config, consumer_wgs);
    INIT_INT(x, fa4_config, producer_regs);
    INIT_INT(x, fa4_config, consumer_regs);
    INIT_INT(x, fa4_config, cluster);
    INIT_INT(x, fa4_config, exp2_emu_pct);
    INIT_INT(x, fa4_config, rescale_threshold);
    INIT_INT(x, fa4_config, pingpong);
    INIT_INT(x, fa4_config, scheduler);
    INIT_INT(x, fa4_config, splits);
    INIT_INT(x, fa4_config, pack_gqa);
    INIT_INT(x, fa4_config, kv_split_warps);
    INIT_INT(x, fa4_config, late_k_release);
    INIT_INT(x, fa4_config, tanh_poly_pct);
}

static void plan_options(void)
{
    fa4_plan_options x = FA4_PLAN_OPTIONS_INIT;

    STRUCT(fa4_plan_options);
    FIELD(fa4_plan_options, struct_size);
    FIELD(fa4_plan_options, config);
    FIELD(fa4_plan_options, allow_heuristic);
    FIELD(fa4_plan_options, no_binary_cache);
    INIT_INT(x, fa4_plan_options, struct_size);
    INIT_PTR(x, fa4_plan_options, config);
    INIT_INT(x, fa4_plan_options, allow_heuristic);
    INIT_INT(x, fa4_plan_options, no_binary_cache);
}

static void tensors(void)
{
    fa4_tensors x = FA4_TENSORS_INIT;

    STRUCT(fa4_tensors);
    FIELD(fa4_tensors, struct_size);
    FIELD(fa4_tensors, q);
    FIELD(fa4_tensors, k);
    FIELD(fa4_tensors, v);
    FIELD(fa4_tensors, o);
    FIELD(fa4_tensors, lse);
    FIELD(fa4_tensors, cu_seqlens_q);
    FIELD(fa4_tensors, cu_seqlens_k);
    FIELD(fa4_tensors, block_table);
    FIELD(fa4_tensors, seqused_k);
    FIELD(fa4_tensors, workspace);
    FIELD(fa4_tensors, seqlen_q);
    FIELD(fa4_tensors, seqlen_k);
    FIELD(fa4_tensors, batch);
    FIELD(fa4_tensors, sinks);
    FIELD(fa4_tensors, q_descale);
    FIELD(fa4_tensors, k_descale);
    FIELD(fa4_tensors, v_descale);
    FIELD(fa4_tensors, workspace_size);
    FIELD(fa4_tensors, q_token_scale);
    FIELD(fa4_tensors, k_token_scale);
    INIT_INT(x, fa4_tensors, struct_size);
    INIT_PTR(x, fa4_tensors, q);
    INIT_PTR(x, fa4_tensors, k);
    INIT_PTR(x, fa4_tensors, v);
    INIT_PTR(x, fa4_tensors, o);
    INIT_PTR(x, fa4_tensors, lse);
    INIT_PTR(x, fa4_tensors, cu_seqlens_q);
    INIT_PTR(x, fa4_tensors, cu_seqlens_k);
    INIT_PTR(x, fa4_tensors, block_table);
    INIT_PTR(x, fa4_tensors, seqused_k);
    INIT_PTR(x, fa4_tensors, workspace);
    INIT_INT(x, fa4_tensors, seqlen_q);
    INIT_INT(x, fa4_tensors, seqlen_k);
    INIT_INT(x, fa4_tensors, batch);
    INIT_PTR(x, fa4_tensors, sinks);
    INIT_PTR(x, fa4_tensors, q_descale);
    INIT_PTR(x, fa4_tensors, k_descale);
    INIT_PTR(x, fa4_tensors, v_descale);
    INIT_INT(x, fa4_tensors, workspace_size);
    INIT_PTR(x, fa4_tensors, q_token_scale);
    INIT_PTR(x, fa4_tensors, k_token_scale);
}

/* Enum types are passed as C int by the binding: their size must say so. */
static void enums(void)
{
    printf("enumsize fa4_status %zu\n", sizeof(fa4_status));
    printf("enumsize fa4_dtype %zu\n", sizeof(fa4_dtype));
    printf("enumsize fa4_family %zu\n", sizeof(fa4_family));
    printf("enumsize fa4_scheduler %zu\n", sizeof(fa4_scheduler));
    printf("enumsize fa4_config_source %zu\n", sizeof(fa4_config_source));
    printf("enumsize fa4_stream %zu\n", sizeof(fa4_stream));
    CONST(FA4_OK);
    CONST(FA4_EINVAL);
    CONST(FA4_ENOMEM);
    CONST(FA4_ENODEV);
    CONST(FA4_ENOTSUP);
    CONST(FA4_ECOMPILE);
    CONST(FA4_EDB);
    CONST(FA4_ECUDA);
    CONST(FA4_ENOFIT);
    CONST(FA4_DTYPE_BF16);
    CONST(FA4_DTYPE_FP16);
    CONST(FA4_DTYPE_FP8_E4M3);
    CONST(FA4_FAMILY_SM80);
    CONST(FA4_FAMILY_SM90);
    CONST(FA4_FAMILY_SM100);
    CONST(FA4_SCHED_PLAIN);
    CONST(FA4_SCHED_PERSISTENT);
    CONST(FA4_SCHED_LPT);
    CONST(FA4_SCHED_DYNAMIC);
    CONST(FA4_SOURCE_USER_EXACT);
    CONST(FA4_SOURCE_SYSTEM_EXACT);
    CONST(FA4_SOURCE_NEAREST);
    CONST(FA4_SOURCE_SAME_ARCH);
    CONST(FA4_SOURCE_HEURISTIC);
    CONST(FA4_SOURCE_EXPLICIT);
    CONST(FA4_SOURCE_STALE);
    CONST(FA4_VERSION_MAJOR);
    CONST(FA4_VERSION_MINOR);
    CONST(FA4_VERSION_PATCH);
    printf("version %s\n", FA4_VERSION_STRING);
}

int main(void)
{
    context_options();
    problem();
    config();
    plan_options();
    tensors();
    enums();
    return 0;
}
