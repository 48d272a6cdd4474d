# SPDX-License-Identifier: MIT
"""zygote_smoke: run_realworld.sh's check that a worker forked by zygote.py
starts CUDA as a fresh process would: it initializes CUDA, runs one kernel
and prints what it saw. Run through the zygote with the CUPTI floor as
CUDA_INJECTION64_PATH (and CUPTI_FLOOR_VERBOSE=1), the floor's
"cupti_floor:" line on stderr proves the driver read the worker's
injection variable at cuInit.
"""
import json
import os
import time

import torch

t = time.perf_counter()
x = torch.ones(4, device="cuda") * 2
torch.cuda.synchronize()
print(json.dumps({"example": "zygote_smoke",
                  "result": {"sum": float(x.sum().item())},
                  "timing": {"cuda_init_s": round(time.perf_counter() - t, 3)},
                  "injection": os.environ.get("CUDA_INJECTION64_PATH", "")}), flush=True)
