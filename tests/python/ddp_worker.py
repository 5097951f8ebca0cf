"""One rank of test_torch_ddp.py: trains the hologram_torch MLP under DistributedDataParallel
(gloo, CPU) on its half of each batch and rank 0 saves the final parameters. Also the
single-process reference (world size 1, the whole batch, no DDP). Usage:
    python ddp_worker.py RANK WORLD PORT OUT.pt"""
import os
import sys

import torch
import torch.distributed as dist

import hologram_torch as ht

STEPS, BATCH = 8, 32


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(ht.nn.Linear(20, 32), ht.nn.GELU(), ht.nn.LayerNorm(32),
                               ht.nn.Linear(32, 4))


def data(step):
    g = torch.Generator().manual_seed(100 + step)
    return torch.randn(BATCH, 20, generator=g), torch.randint(0, 4, (BATCH,), generator=g)


def main():
    rank, world, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    torch.set_num_threads(1)
    net = model()
    if world > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        dist.init_process_group("gloo", rank=rank, world_size=world)
        net = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = ht.nn.CrossEntropyLoss()
    per = BATCH // world
    for step in range(STEPS):
        x, t = data(step)
        x, t = x[rank * per:(rank + 1) * per], t[rank * per:(rank + 1) * per]
        opt.zero_grad()
        loss_fn(net(x), t).backward()   # DDP averages the gradients over the ranks
        opt.step()
    if rank == 0:
        mod = net.module if world > 1 else net
        torch.save({k: v.detach().clone() for k, v in mod.state_dict().items()}, out)
    if world > 1:
        # Both ranks past their last collective before either tears gloo down: a rank that
        # closes its pairs while the other still sends can abort in gloo's destructor.
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
