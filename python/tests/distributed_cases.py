"""The cases of test_distributed.py, run in every process of a process group: each builds the
same DTensors twice from the same global tensors, runs them through PyTorch and through
tilegemm (routing on), and compares the outputs' placements and values, then the gradients'.
A case also checks that the routed run reached tilegemm's ops, forward and backward, and no
aten.mm / addmm / bmm.

On GPUs (NCCL) the products are the library's; with device "cpu" (gloo, for machines without a
GPU) tilegemm's ops keep their sharding rules, autograd and routing, but their local products
are torch's own aten ops on the shards (emulate_on_cpu): that checks the rules and the
reductions they imply, not the library's arithmetic.

    torchrun --nproc-per-node 2 python/tests/distributed_cases.py [--cpu] [CASE ...]
"""
import contextlib
import datetime
import json
import os
import sys
import traceback

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.utils._python_dispatch import TorchDispatchMode

import tilegemm.torch as tgt

PRODUCTS = ("aten.mm", "aten.addmm", "aten.bmm", "aten.matmul", "aten.linear")


class Ops(TorchDispatchMode):
    """Records the operators that reach the dispatcher (outside DTensor: the DTensor-level
    calls), e.g. "tilegemm.mm.default"."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))

    def check_routed(self, what):
        torch_products = sorted({s for s in self.seen if s.startswith(PRODUCTS)})
        assert any(s.startswith("tilegemm.") for s in self.seen), f"{what}: no tilegemm op ran"
        assert not torch_products, f"{what}: PyTorch products ran: {torch_products}"


def emulate_on_cpu():
    """tilegemm's ops on CPU tensors, for the gloo runs: routing takes float32 CPU tensors and
    the local products are aten's.  Rules, autograd formulas and routing are tilegemm's."""
    def routable(*tensors):
        return all(t is None or (isinstance(t, torch.Tensor) and t.dtype == torch.float32)
                   for t in tensors)

    tgt._routable = routable
    tgt._mm_impl = lambda a, b, math: torch.ops.aten.mm(a, b)
    tgt._bmm_impl = lambda a, b, math: torch.ops.aten.bmm(a, b)
    tgt._addmm_impl = lambda c, a, b, beta, alpha, math: torch.ops.aten.addmm(
        c, a, b, beta=beta, alpha=alpha)


class Context:
    def __init__(self, device):
        self.device = device
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.mesh = init_device_mesh(device, (self.world,))

    def rand(self, *shape, seed):
        """The same global tensor on every rank (a CPU generator, then moved)."""
        g = torch.Generator().manual_seed(seed)
        return (torch.rand(shape, generator=g) * 2 - 1).to(self.device)

    def dt(self, x, placement):
        return distribute_tensor(x, self.mesh, [placement])


def close(got, want, what, rtol=1e-4):
    """got within rtol of want's largest magnitude, elementwise (FP32 products of k <= 128 in
    two summation orders sit near 1e-6 of it)."""
    got, want = got.double(), want.double()
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    scale = want.abs().max().item() or 1.0
    err = (got - want).abs().max().item() / scale if got.numel() else 0.0
    assert err <= rtol, f"{what}: largest difference {err:.3g} of the largest magnitude"


def full(t):
    return t.full_tensor() if isinstance(t, DTensor) else t


def compare(ctx, fn, *inputs):
    """fn on DTensors made from inputs [(global tensor, placement), ...], by PyTorch and routed
    to tilegemm: the same output placement and values, then the same gradients (placements and
    values) for a cotangent placed like the output (replicated where it is Partial)."""
    runs = []
    for routed in (False, True):
        args = [ctx.dt(x, p).requires_grad_() for x, p in inputs]
        with Ops() as ops, (tgt.enabled() if routed else contextlib.nullcontext()):
            out = fn(*args)
        runs.append((args, out, ops))
    (ref_args, want, _), (args, got, ops) = runs
    ops.check_routed("forward")
    assert got.placements == want.placements, \
        f"output placed {got.placements}, PyTorch's {want.placements}"
    close(full(got), full(want), "output")
    placed = [Replicate() if p.is_partial() else p for p in want.placements]
    cotangent = distribute_tensor(ctx.rand(*want.shape, seed=99), ctx.mesh, placed)
    want_grads = torch.autograd.grad(want, ref_args, cotangent)
    with Ops() as ops:
        grads = torch.autograd.grad(got, args, cotangent)
    ops.check_routed("backward")
    for i, (g, w) in enumerate(zip(grads, want_grads)):
        assert g.placements == w.placements, \
            f"gradient {i} placed {g.placements}, PyTorch's {w.placements}"
        close(full(g), full(w), f"gradient {i}")


# --- The cases --------------------------------------------------------------------------------
def case_colwise(ctx):
    """ColwiseParallel's product, y = x @ w.T with w split on its rows (w.T on its columns):
    y split on its last dimension; as F.linear and as mm(x, w.T)."""
    x, w = ctx.rand(16, 96, seed=1), ctx.rand(24, 96, seed=2)
    compare(ctx, lambda x, w: F.linear(x, w), (x, Replicate()), (w, Shard(0)))
    compare(ctx, lambda x, w: torch.mm(x, w.t()), (x, Replicate()), (w, Shard(0)))


def case_colwise_bias(ctx):
    """addmm's bias split with the output: [n] on dim 0 for an output split on dim 1."""
    x, w, b = ctx.rand(16, 96, seed=3), ctx.rand(24, 96, seed=4), ctx.rand(24, seed=5)
    compare(ctx, F.linear, (x, Replicate()), (w, Shard(0)), (b, Shard(0)))


def case_linear_3d(ctx):
    """Column-wise over a batch of sequences: the output split on its last (third) dim."""
    x, w, b = ctx.rand(2, 8, 64, seed=6), ctx.rand(24, 64, seed=7), ctx.rand(24, seed=8)
    compare(ctx, F.linear, (x, Replicate()), (w, Shard(0)), (b, Shard(0)))


def case_rowwise(ctx):
    """RowwiseParallel's product: x split on its columns, w.T on its rows; the output Partial
    (reduced later by the collective), a replicated bias made Partial for it."""
    x, w, b = ctx.rand(16, 96, seed=9), ctx.rand(24, 96, seed=10), ctx.rand(24, seed=11)
    compare(ctx, F.linear, (x, Shard(1)), (w, Shard(1)), (b, Replicate()))
    compare(ctx, lambda x, w: torch.mm(x, w.t()), (x, Shard(1)), (w, Shard(1)))


def case_replicated(ctx):
    x, w, b = ctx.rand(16, 96, seed=12), ctx.rand(24, 96, seed=13), ctx.rand(24, seed=14)
    compare(ctx, F.linear, (x, Replicate()), (w, Replicate()), (b, Replicate()))
    compare(ctx, torch.mm, (x, Replicate()), (w.t().contiguous(), Replicate()))


def case_rows(ctx):
    """x split on its rows (data or sequence parallel), w replicated: the output on its rows."""
    x, w, b = ctx.rand(16, 96, seed=15), ctx.rand(24, 96, seed=16), ctx.rand(24, seed=17)
    compare(ctx, F.linear, (x, Shard(0)), (w, Replicate()), (b, Replicate()))


def case_addmm_bias_matrix(ctx):
    """A full m x n input split with the output, beta and alpha not 1."""
    c, a, b = ctx.rand(16, 24, seed=18), ctx.rand(16, 96, seed=19), ctx.rand(96, 24, seed=20)
    compare(ctx, lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
            (c, Shard(1)), (a, Replicate()), (b, Shard(1)))
    compare(ctx, lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
            (c, Replicate()), (a, Shard(1)), (b, Shard(0)))


def case_bmm(ctx):
    """A batch split across ranks."""
    a, b = ctx.rand(4, 16, 96, seed=21), ctx.rand(4, 96, 24, seed=22)
    compare(ctx, torch.bmm, (a, Shard(0)), (b, Shard(0)))
    compare(ctx, torch.bmm, (a, Shard(2)), (b, Shard(1)))


def mlp(ctx, seed=0, width=64, hidden=128):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.GELU(),
                               torch.nn.Linear(hidden, width)).to(ctx.device)


def train(ctx, net, routed, steps=3, seed=30, width=64):
    """Losses of `steps` SGD steps on batches made from `seed` (one per rank when seed
    depends on it), the last step's gradients (full tensors, placements), and the operators
    seen.  routed: tilegemm.torch.enable() for the whole run."""
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    losses, ops = [], Ops()
    if routed:
        tgt.enable()
    try:
        with ops:
            for step in range(steps):
                x = ctx.rand(32, width, seed=seed + 2 * step)
                y = ctx.rand(32, width, seed=seed + 2 * step + 1)
                loss = F.mse_loss(net(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                grads = [(full(p.grad), getattr(p.grad, "placements", None))
                         for p in net.parameters()]
                opt.step()
                losses.append(loss.detach())
    finally:
        tgt.disable()
    return torch.stack(losses).cpu(), grads, ops


def check_training(ctx, build, seed):
    want_losses, want_grads, _ = train(ctx, build(), False, seed=seed)
    losses, grads, ops = train(ctx, build(), True, seed=seed)
    ops.check_routed("training")
    close(losses, want_losses, "losses")
    for i, ((g, placed), (w, want_placed)) in enumerate(zip(grads, want_grads)):
        assert placed == want_placed, f"gradient {i} placed {placed}, PyTorch's {want_placed}"
        close(g, w, f"gradient {i}")


def case_tp_mlp(ctx):
    """A tensor-parallel MLP (ColwiseParallel then RowwiseParallel, parallelize_module), three
    SGD steps under tilegemm.torch.enable(): losses and gradients as PyTorch's."""
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)

    def build():
        return parallelize_module(mlp(ctx), ctx.mesh,
                                  {"0": ColwiseParallel(), "2": RowwiseParallel()})

    check_training(ctx, build, seed=30)


def case_fsdp(ctx):
    """FSDP2 (fully_shard on each Linear and the model), a batch per rank, three SGD steps:
    losses and (sharded) gradients as PyTorch's."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard

    def build():
        net = mlp(ctx)
        for layer in (net[0], net[2]):
            fully_shard(layer, mesh=ctx.mesh)
        return fully_shard(net, mesh=ctx.mesh)

    check_training(ctx, build, seed=40 + 100 * ctx.rank)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


# --- Running them in a process group ---------------------------------------------------------
def run_cases(device, names):
    """{name: None or the failure's text} for this rank."""
    ctx = Context(device)
    results = {}
    for name in names:
        try:
            CASES[name](ctx)
            results[name] = None
        except Exception:
            results[name] = traceback.format_exc(limit=-4)
        dist.barrier()
    return results


def setup(device, rank, world, init_method=None):
    if device == "cpu":
        torch.set_num_threads(1)
        emulate_on_cpu()
        backend = "gloo"
    else:
        torch.cuda.set_device(rank % torch.cuda.device_count())
        torch.backends.cuda.matmul.allow_tf32 = False
        backend = "nccl"
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))


def worker(rank, world, device, port, out_dir, names):
    """The body of each process started by test_distributed.py: writes rank<R>.json with
    {case: None or the failure} (or {"<setup>": failure})."""
    try:
        setup(device, rank, world, f"tcp://127.0.0.1:{port}")
        results = run_cases(device, names)
    except Exception:
        results = {"<setup>": traceback.format_exc()}
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)
    if dist.is_initialized():
        dist.destroy_process_group()


def main():
    args = sys.argv[1:]
    device = "cpu" if "--cpu" in args else "cuda"
    names = [a for a in args if not a.startswith("--")] or list(CASES)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    setup(device, rank, world)
    results = run_cases(device, names)
    for name, failure in results.items():
        print(f"rank {rank} {name}: {'ok' if failure is None else 'FAILED'}")
        if failure:
            print(failure)
    dist.destroy_process_group()
    sys.exit(any(results.values()))


if __name__ == "__main__":
    main()
