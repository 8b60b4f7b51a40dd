# SPDX-License-Identifier: GPL-2.0
"""All-reduce bus bandwidth, as nccl-tests computes it, for
nccl/gpu/bench-nccl: torchrun, one process per GPU. Prints one line per
size on rank 0: SIZE BUSBW_GBPS (the median of --iters timed calls after
--warmup untimed ones), and checks the last result exactly.

  allreduce_bw.py [--min-size BYTES] [--max-size BYTES] [--iters N] [--warmup N]
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-size", type=int, default=8 << 20)
    ap.add_argument("--max-size", type=int, default=1 << 30)
    ap.add_argument("--iters", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    size = args.min_size
    ok = True
    while size <= args.max_size:
        n = size // 4
        x = torch.full((n,), float(rank + 1), device="cuda")
        times = []
        for i in range(args.warmup + args.iters):
            x.fill_(float(rank + 1))
            torch.cuda.synchronize()
            t = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            if i >= args.warmup:
                times.append(time.perf_counter() - t)
        want = float(world * (world + 1) // 2)
        if not torch.all(x == want).item():
            ok = False
            print(f"rank {rank}: all_reduce {size}: wrong result", flush=True)
        secs = statistics.median(times)
        busbw = size / secs * 2 * (world - 1) / world / 1e9
        if rank == 0:
            spread = (max(times) - min(times)) / secs
            print(f"{size} {busbw:.3f} {spread:.2f}", flush=True)
        size *= 2
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
