"""PyTorch's NCCL process group on whatever libnccl.so.2 the process loaded:
NCCL's own, or symcomm's through LD_PRELOAD (tests/gpu/torch_shim.sh runs
both and compares). Run under torchrun, one process per GPU.

Every collective's result is checked exactly: inputs are small integers that
depend on rank and index, so float sums are exact in any order. Then a few
hundred steps of DistributedDataParallel on a small model with fixed seeds
write their losses to OUT/loss_<TAG>.txt (rank 0), for the runner to compare
with the other library's run. Exit status 0 only when every check passed."""
import os
import sys

import torch
import torch.distributed as dist

OUT = os.environ.get("OUT", ".")
TAG = os.environ.get("SHIM_TAG", "run")
STEPS = int(os.environ.get("SHIM_STEPS", "300"))

failures = []


def check(name, got, want):
    if torch.equal(got.cpu(), want.cpu()):
        return
    bad = (got.cpu() != want.cpu()).nonzero()
    first = tuple(bad[0].tolist()) if len(bad) else ()
    failures.append(f"{name}: {len(bad)} elements wrong, first at {first}: "
                    f"{got.cpu()[first].item() if first else '?'} != {want.cpu()[first].item() if first else '?'}")


def pattern(rank, n, dtype, dev, salt=0):
    # small integers: exact in every dtype tested, sums too
    i = torch.arange(n, device=dev, dtype=torch.int64)
    return ((i * 7 + rank * 13 + salt) % 61 - 30).to(dtype)


def collectives(rank, world, dev):
    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64):
        for n in (1, 1000, 1 << 20, (1 << 20) + 3):
            x = pattern(rank, n, dtype, dev)
            dist.all_reduce(x)
            want = sum(pattern(r, n, torch.int64, dev) for r in range(world)).to(dtype)
            check(f"all_reduce sum {dtype} {n}", x, want)
        x = pattern(rank, 4099, dtype, dev)
        dist.all_reduce(x, op=dist.ReduceOp.MAX)
        want = torch.stack([pattern(r, 4099, torch.int64, dev) for r in range(world)]).max(0).values.to(dtype)
        check(f"all_reduce max {dtype}", x, want)
    n = 12345
    inp = pattern(rank, n, torch.float32, dev)
    out = torch.full((world * n,), -999.0, device=dev)
    dist.all_gather_into_tensor(out, inp)
    check("all_gather_into_tensor", out, torch.cat([pattern(r, n, torch.float32, dev) for r in range(world)]))
    inp = pattern(rank, world * n, torch.float32, dev)
    out = torch.full((n,), -999.0, device=dev)
    dist.reduce_scatter_tensor(out, inp)
    full = sum(pattern(r, world * n, torch.int64, dev) for r in range(world)).to(torch.float32)
    check("reduce_scatter_tensor", out, full[rank * n:(rank + 1) * n])
    for root in range(world):
        x = pattern(rank, 3001, torch.float32, dev, salt=root)
        dist.broadcast(x, src=root)
        check(f"broadcast root {root}", x, pattern(root, 3001, torch.float32, dev, salt=root))
    # all_to_all_single: equal splits, then uneven ones (PyTorch sends to itself in the group)
    inp = pattern(rank, world * 1000, torch.float32, dev)
    out = torch.full((world * 1000,), -999.0, device=dev)
    dist.all_to_all_single(out, inp)
    want = torch.cat([pattern(r, world * 1000, torch.float32, dev)[rank * 1000:(rank + 1) * 1000] for r in range(world)])
    check("all_to_all_single", out, want)
    sizes = lambda src: [(src + dst) % 3 + 1 for dst in range(world)]  # elements src sends to dst
    inp = pattern(rank, sum(sizes(rank)), torch.float32, dev, salt=5)
    out_splits = [sizes(src)[rank] for src in range(world)]
    out = torch.full((sum(out_splits),), -999.0, device=dev)
    dist.all_to_all_single(out, inp, output_split_sizes=out_splits, input_split_sizes=sizes(rank))
    parts = []
    for src in range(world):
        s = sizes(src)
        off = sum(s[:rank])
        parts.append(pattern(src, sum(s), torch.float32, dev, salt=5)[off:off + s[rank]])
    check("all_to_all_single uneven", out, torch.cat(parts))
    # send/recv in a ring, and the batched form
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    x = pattern(rank, 70000, torch.float32, dev, salt=9)
    y = torch.full_like(x, -999.0)
    if rank % 2 == 0:
        dist.send(x, nxt)
        dist.recv(y, prv)
    else:
        dist.recv(y, prv)
        dist.send(x, nxt)
    check("send/recv ring", y, pattern(prv, 70000, torch.float32, dev, salt=9))
    y.fill_(-999.0)
    for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, x, nxt), dist.P2POp(dist.irecv, y, prv)]):
        w.wait()
    check("batch_isend_irecv ring", y, pattern(prv, 70000, torch.float32, dev, salt=9))


def groups(rank, world, dev):
    # a group of every other rank (all ranks take part in creating it), then split_group
    evens = list(range(0, world, 2))
    g = dist.new_group(evens)
    if rank in evens:
        x = pattern(rank, 5000, torch.float32, dev)
        dist.all_reduce(x, group=g)
        check("new_group all_reduce", x, sum(pattern(r, 5000, torch.int64, dev) for r in evens).to(torch.float32))
    halves = [list(range(0, (world + 1) // 2)), list(range((world + 1) // 2, world))]
    halves = [h for h in halves if h]
    sg = dist.split_group(split_ranks=halves)
    mine = [h for h in halves if rank in h][0]
    x = pattern(rank, 5000, torch.float32, dev, salt=3)
    dist.all_reduce(x, group=sg)
    check("split_group all_reduce", x, sum(pattern(r, 5000, torch.int64, dev, salt=3) for r in mine).to(torch.float32))


def graph(rank, world, dev):
    x = torch.ones(4096, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        dist.all_reduce(x)  # warm-up outside the capture, as PyTorch asks
    torch.cuda.current_stream().wait_stream(s)
    x.fill_(1.0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dist.all_reduce(x)
    x.fill_(1.0)
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()
    check("CUDA graph all_reduce x10", x, torch.full((4096,), float(world) ** 10, device=dev))


def ddp(rank, world, dev):
    torch.manual_seed(1234)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Tanh(), torch.nn.Linear(256, 10)).to(dev)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator(device="cpu").manual_seed(100 + rank)
    w_true = torch.randn(64, 10, generator=torch.Generator().manual_seed(7))
    losses = []
    for step in range(STEPS):
        xb = torch.randn(32, 64, generator=gen)
        yb = (xb @ w_true).argmax(1)
        loss = torch.nn.functional.cross_entropy(model(xb.to(dev)), yb.to(dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        dist.all_reduce(t)
        losses.append(t.item() / world)
    # every rank holds the same weights
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, src=0)
    check("DDP weights equal on every rank", flat, ref)
    if rank == 0:
        with open(os.path.join(OUT, f"loss_{TAG}.txt"), "w") as f:
            f.write("\n".join(f"{v:.9g}" for v in losses) + "\n")
    return losses


def main():
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)  # eager: split_group needs a communicator to split
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        with open("/proc/self/maps") as f:
            libs = sorted({line.split()[-1] for line in f if "libnccl.so" in line})
        print(f"[{TAG}] NCCL version as PyTorch sees it: {torch.cuda.nccl.version()}, world {world}; "
              f"libnccl loaded: {' '.join(libs)}", flush=True)
    for name, fn in (("collectives", collectives), ("groups", groups), ("graph", graph), ("ddp", ddp)):
        before = len(failures)
        try:
            fn(rank, world, dev)
        except Exception as e:  # a failure is reported, not a traceback of one rank only
            failures.append(f"{name}: {type(e).__name__}: {e}")
        torch.cuda.synchronize()
        print(f"[{TAG}] rank {rank}: {name} {'ok' if len(failures) == before else 'FAILED'}", flush=True)
    for f in failures:
        print(f"[{TAG}] rank {rank}: {f}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
