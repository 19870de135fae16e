"""One FA4-CuTe (sm90) forward call between cudaProfilerStart/Stop, for ncu
--profile-from-start off: bench/ncu_gaps.sh profiles it next to libfa4's
kernel on the same shape.  Args: B S HQ HKV D CAUSAL."""
import os
import sys

import torch

sys.path.insert(0, os.environ["FA4_AOT_DIR"])
import fa4_aot  # noqa: E402

b, s, hq, hkv, d, causal = (int(x) for x in sys.argv[1:7])
q = torch.randn(b, s, hq, d, device="cuda", dtype=torch.bfloat16)
k = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
v = torch.randn(b, s, hkv, d, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    fa4_aot.flash_attn_func(q, k, v, causal=bool(causal))
torch.cuda.synchronize()
torch.cuda.profiler.start()
fa4_aot.flash_attn_func(q, k, v, causal=bool(causal))
torch.cuda.synchronize()
torch.cuda.profiler.stop()
