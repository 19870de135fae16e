#!/bin/bash
# Is the device's NVRTC deterministic?  The same sm90 variant (the d64 512
# seed config; the fp8 tuned config under a causal mask) compiled in six
# processes each: the variant key, ptxas's stack/spill line, the cubin's
# md5; with the shipped kernels (max-free, falling back) and with the
# max-free loop forced (_dev/kmf1).  Carries: _dev (dump: a compile-only
# driver of lib/jit.c, dump.c here, linked with libfa4_core.a).  Output (the
# library before --no-cache): call8.txt.
cd _dev
C="sm90 bm=192 bn=128 stages=2 swizzle=128 fused_kv=0 q_tiles=1 warps=0 wgs=3 regs=32/160 cluster=1 exp2_emu=0 rescale=8 pingpong=1 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
F="sm90 bm=128 bn=192 stages=2 swizzle=64 fused_kv=1 q_tiles=1 warps=0 wgs=2 regs=24/240 cluster=1 exp2_emu=0 rescale=8 pingpong=0 sched=persistent splits=1 pack_gqa=0 kv_split_warps=0 late_k=0"
for i in 1 2 3 4 5 6; do
  for kd in "" "$PWD/kmf1"; do
    o=$(FA4_KERNEL_DIR=$kd LOG=1 CONFIG="$C" BATCH=32 D=64 SEQ=512 HQ=32 ./dump /tmp/a.cubin 2>&1)
    echo "d64 [${kd:+kmf1}] $(echo "$o" | grep -o 'key [0-9a-f]*\|regs [0-9]* spill [0-9-]*\|[0-9]* bytes stack frame, [0-9]* bytes spill stores\|compile: .*' | tr '\n' ' ') $(md5sum /tmp/a.cubin 2>/dev/null | cut -c1-12)"; rm -f /tmp/a.cubin
    o=$(FA4_KERNEL_DIR=$kd LOG=1 CONFIG="$F" FP8=1 CAUSAL=1 D=128 SEQ=16384 HQ=16 ./dump /tmp/b.cubin 2>&1)
    echo "fp8 [${kd:+kmf1}] $(echo "$o" | grep -o 'key [0-9a-f]*\|regs [0-9]* spill [0-9-]*\|[0-9]* bytes stack frame, [0-9]* bytes spill stores\|compile: .*' | tr '\n' ' ') $(md5sum /tmp/b.cubin 2>/dev/null | cut -c1-12)"; rm -f /tmp/b.cubin
  done
done
