"""Why compare.py's d64 non-causal 512 row took the heuristic with the re-tuned
seed: plan it through the Python binding in this process (torch imported
first when argv[1] == 'torch'), print the config, its source, the context's
warnings and the NVRTC library the process mapped."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../python"))
if sys.argv[1:2] == ["torch"]:
    import torch  # noqa: F401
    torch.zeros(1, device="cuda")
from fa4 import _abi, _lib
lib = _lib.Library(sys.argv[2])
ctx = _lib.Context(0, lib=lib, db_path=sys.argv[3], no_database=False)
for b, sq, hq, d, c in [(32, 512, 32, 64, 0), (32, 512, 32, 64, 1), (32, 512, 8, 256, 1)]:
    p = _abi.Problem.init(batch=b, seqlen_q=sq, seqlen_k=sq, heads_q=hq, heads_kv=hq, head_dim_qk=d,
                          head_dim_v=d, causal=c)
    plan = ctx.plan(p)
    print(b, sq, hq, d, c, plan.describe())
print("warnings:", ctx.warnings())
print([l.split()[-1] for l in open("/proc/self/maps") if "nvrtc" in l][:3])
