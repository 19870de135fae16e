/* dump: compile one sm90 variant (default or CONFIG env text) of an env-described problem, write cubin */
/* Build: gcc -O1 -Ilib -Ibuild -Ibuild/lib -I/usr/local/cuda/include dump.c build/.libs/libfa4_core.a -o dump -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ljansson -ldl -lpthread -lm
   Env: D DV SEQ BATCH HQ HKV CAUSAL FP8 FP16 SOFTCAP, CONFIG (text; else the default), LOG=1 prints the ptxas report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fa4.h"
#include "config.h"
#include "budget.h"
#include "jit.h"
#include "device.h"
#include "problem.h"
static int ev(const char *n, int d) { const char *s = getenv(n); return s && *s ? atoi(s) : d; }
int main(int argc, char **argv)
{
    fa4_problem pb = FA4_PROBLEM_INIT;

    pb.dtype = ev("FP8", 0) ? FA4_DTYPE_FP8_E4M3 : ev("FP16", 0) ? FA4_DTYPE_FP16 : FA4_DTYPE_BF16;
    pb.batch = ev("BATCH", 1); pb.seqlen_q = pb.seqlen_k = ev("SEQ", 16384);
    pb.heads_q = ev("HQ", 16); pb.heads_kv = ev("HKV", pb.heads_q);
    pb.head_dim_qk = ev("D", 128); pb.head_dim_v = ev("DV", 0);
    pb.causal = ev("CAUSAL", 0);
    if (getenv("SOFTCAP")) pb.softcap = atof(getenv("SOFTCAP"));
    device_limits dev; char why[512];
    { fa4_problem r; if (problem_resolve(&r, &pb, why, sizeof why)) { fprintf(stderr, "resolve: %s\n", why); return 1; } pb = r; }
    if (device_limits_for_arch(&dev, "sm_90a", why, sizeof why)) { fprintf(stderr, "%s\n", why); return 1; }
    fa4_config c;
    if (getenv("CONFIG")) { if (config_parse(&c, getenv("CONFIG"), why, sizeof why)) { fprintf(stderr, "%s\n", why); return 1; } }
    else if (config_default(&c, &dev, &pb, FA4_FAMILY_SM90, why, sizeof why)) { fprintf(stderr, "%s\n", why); return 1; }
    char buf[512]; fprintf(stderr, "%s\n", fa4_config_format(&c, buf, sizeof buf));
    fa4_layout lay;
    if (budget_fit(&lay, &dev, &pb, &c, why, sizeof why)) { fprintf(stderr, "fit: %s\n", why); return 1; }
    jit_kernel k; { char key[17]; jit_key(key, "sm_90a", &pb, &c, &lay); fprintf(stderr, "key %s\n", key); }
    if (jit_compile(&k, "sm_90a", &pb, &c, &lay, why, sizeof why)) { fprintf(stderr, "compile: %s\n", why); return 1; }
    fprintf(stderr, "regs %d spill %d\n%s\n", k.regs, k.spill_bytes, getenv("LOG") ? k.log : "");
    FILE *f = fopen(argc > 1 ? argv[1] : "out.cubin", "wb"); fwrite(k.cubin, 1, k.cubin_size, f); fclose(f);
    return 0;
}
