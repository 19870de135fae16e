"""One PyTorch SDPA forward call (cuDNN or FA2 backend forced) between
cudaProfilerStart/Stop, for ncu --profile-from-start off: the cuDNN
counterpart of ncu_peer.py.  Args: BACKEND(cudnn|flash) B S HQ HKV D CAUSAL
[LAYOUT(bhsd|bshd)]; bhsd (contiguous) is cuDNN's faster layout."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[sys.argv[1]]
b, s, hq, hkv, d, causal = (int(x) for x in sys.argv[2:8])
layout = sys.argv[8] if len(sys.argv) > 8 else "bhsd"


def make(h):
    x = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
    return x.transpose(1, 2).contiguous() if layout == "bhsd" else x.transpose(1, 2)


q, k, v = make(hq), make(hkv), make(hkv)
with sdpa_kernel(backend):
    for _ in range(3):
        F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=hq != hkv)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), enable_gqa=hq != hkv)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
