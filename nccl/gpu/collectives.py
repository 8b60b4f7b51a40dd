# SPDX-License-Identifier: GPL-2.0
"""Collectives over NCCL, checked exactly: run by nccl/gpu/run-nccl with
torchrun, one process per GPU. Every value is a small integer, so sums
are exact in float32 and every element can be compared.

  collectives.py [--max-size BYTES] [--iters N]
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def sizes(max_size):
    s = 1024
    while s < max_size:
        yield s
        s *= 8
    yield max_size


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-size", type=int, default=1 << 30)
    ap.add_argument("--iters", type=int, default=2)
    args = ap.parse_args()

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    dev = torch.device("cuda")
    failed = 0

    def check(name, nbytes, got, want, secs, reporter=0):
        nonlocal failed
        ok = torch.equal(got, want)
        if not ok:
            failed += 1
            bad = (got != want).nonzero()
            print(f"rank {rank}: {name} {nbytes}: FAIL at {bad[:4].tolist()}", flush=True)
        elif rank == reporter:
            gbps = nbytes / secs / 1e9 if secs > 0 else 0.0
            print(f"{name:15s} {nbytes:>11d} B  ok  {secs * 1e3:9.2f} ms  {gbps:7.2f} GB/s", flush=True)

    for nbytes in sizes(args.max_size):
        n = nbytes // 4
        base = torch.arange(n, device=dev, dtype=torch.int32) % 251
        for it in range(args.iters):
            # all-reduce: sum over ranks of (base + rank + it)
            x = (base + rank + it).to(torch.float32)
            torch.cuda.synchronize()
            t = time.perf_counter()
            dist.all_reduce(x)
            torch.cuda.synchronize()
            secs = time.perf_counter() - t
            want = (base * world + sum(range(world)) + world * it).to(torch.float32)
            check("all_reduce", nbytes, x, want, secs)

            # all-gather: rank r contributes base + r
            chunk = n // world
            mine = (base[:chunk] + rank).to(torch.float32)
            out = torch.empty(chunk * world, device=dev, dtype=torch.float32)
            t = time.perf_counter()
            dist.all_gather_into_tensor(out, mine)
            torch.cuda.synchronize()
            secs = time.perf_counter() - t
            want = torch.cat([(base[:chunk] + r).to(torch.float32) for r in range(world)])
            check("all_gather", nbytes, out, want, secs)

            # reduce-scatter: everyone gives base + rank; rank r keeps chunk r
            full = (base[:chunk * world] + rank).to(torch.float32)
            part = torch.empty(chunk, device=dev, dtype=torch.float32)
            t = time.perf_counter()
            dist.reduce_scatter_tensor(part, full)
            torch.cuda.synchronize()
            secs = time.perf_counter() - t
            want = (base[rank * chunk:(rank + 1) * chunk] * world + sum(range(world))).to(torch.float32)
            check("reduce_scatter", nbytes, part, want, secs)

            # send/recv: rank 0 sends, rank 1 receives
            if world >= 2 and rank < 2:
                buf = (base + 7 + it).to(torch.float32) if rank == 0 else torch.zeros(n, device=dev)
                t = time.perf_counter()
                if rank == 0:
                    dist.send(buf, 1)
                else:
                    dist.recv(buf, 0)
                torch.cuda.synchronize()
                secs = time.perf_counter() - t
                if rank == 1:
                    check("send_recv", nbytes, buf, (base + 7 + it).to(torch.float32), secs, 1)

    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print("collectives: %s" % ("FAILED" if failed else "all ok"), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
