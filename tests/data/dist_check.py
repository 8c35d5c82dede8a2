# SPDX-License-Identifier: GPL-3.0-or-later
"""A rank of a real torch.distributed job for tst_sweep_launch (docs/sweeps.md "Launchers").

Joins the process group with init_method="env://" (gloo, CPU): MASTER_ADDR, MASTER_PORT,
WORLD_SIZE and RANK from the environment, as Orrery (per_gpu) or torchrun (per_node) set them.
All-reduces rank + 1 and writes what it saw to <out>/rank-<RANK>.json.

    python dist_check.py OUT [WORD...]      (WORDs are recorded: rendered placeholders)
"""

import datetime
import json
import os
import socket
import sys

import torch
import torch.distributed as dist

out = sys.argv[1]
dist.init_process_group("gloo", init_method="env://", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
seen = {
    "rank": rank,
    "world_size": world,
    "sum": value.item(),
    "host": socket.gethostname(),
    "slurm_nodeid": os.environ.get("SLURM_NODEID"),
    "words": sys.argv[2:],
}
for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK", "NNODES", "MASTER_ADDR", "MASTER_PORT",
             "GROUP_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID"):
    seen["env_" + name] = os.environ.get(name)
dist.barrier()
dist.destroy_process_group()
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, f"rank-{rank}.json.tmp"), "w", encoding="utf-8") as f:
    json.dump(seen, f)
os.replace(os.path.join(out, f"rank-{rank}.json.tmp"), os.path.join(out, f"rank-{rank}.json"))
