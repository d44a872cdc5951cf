"""tilegemm.torch under torch.distributed: the DTensor sharding rules of tilegemm::mm, addmm and
bmm, and routed products in tensor-parallel and FSDP2 runs, against PyTorch's own.

Three layers, from cheapest:
  * the rules themselves (placement lists) and their registration, wherever PyTorch is;
  * placements of routed products against PyTorch's, swept over operand placements on 1-D and
    2-D meshes of a fake process group with fake tensors: no data, no GPU;
  * the cases of distributed_cases.py in two processes: on the CPU (gloo, the local products
    emulated by aten's: rules, reductions, autograd and routing), and on two GPUs (NCCL, the
    library's products), skipped with fewer than 2 GPUs.
Skipped without PyTorch or torch.distributed, or where PyTorch has no register_sharding."""
import itertools
import json
import os
import socket
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available():
    pytest.skip("this PyTorch has no torch.distributed", allow_module_level=True)
import tilegemm  # noqa: E402
import tilegemm.torch as tgt  # noqa: E402
from tilegemm import _sharding  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)  # the spawned processes import distributed_cases from here
import distributed_cases  # noqa: E402

from torch.distributed.tensor import DTensor, Partial, Replicate, Shard  # noqa: E402

R, S, P = Replicate, Shard, Partial

if _sharding.ensure() is not True:
    pytest.skip(f"no DTensor rules: {_sharding.status()}", allow_module_level=True)


# --- The rules --------------------------------------------------------------------------------
def kinds():
    return _sharding._Placements(Replicate, Shard, Partial)


def test_mm_rules_cover_tensor_parallelism():
    rules = [tuple(r) for r in _sharding.product_rules(kinds(), 2)]
    assert rules[0] == (R(), R(), R())                # replicated
    assert (S(1), R(), S(1)) in rules                 # column-wise: b's columns
    assert (P(), S(1), S(0)) in rules                 # row-wise: k split, partial sums
    assert (S(0), S(0), R()) in rules                 # a's rows
    assert (P(), P(), R()) in rules and (P(), R(), P()) in rules  # linear in each operand
    for out, a, b in rules:  # Partial: from a Partial or a split k only
        k_split = (a, b) == (S(1), S(0))
        assert out.is_partial() == (a.is_partial() or b.is_partial() or k_split)


def test_bmm_rules_split_the_batch():
    rules = [tuple(r) for r in _sharding.product_rules(kinds(), 3)]
    assert (S(0), S(0), S(0)) in rules
    assert (P(), S(2), S(1)) in rules and (S(2), R(), S(2)) in rules and \
        (S(1), S(1), R()) in rules


@pytest.mark.parametrize("c_shape,out,want", [
    ((24,), S(1), S(0)), ((24,), S(0), R()), ((1, 24), S(0), R()), ((1, 24), S(1), S(1)),
    ((16, 24), S(0), S(0)), ((16, 1), S(1), R()), ((16, 1), S(0), S(0)), ((), S(1), R()),
    ((24,), P(), P()), ((24,), R(), R())])
def test_addmm_input_follows_the_output(c_shape, out, want):
    assert _sharding.bias_placement(kinds(), out, c_shape) == want
    rules = _sharding.addmm_rules(kinds(), c_shape)
    assert [r[:1] + r[2:] for r in rules] == _sharding.product_rules(kinds(), 2)


def test_the_ops_have_dtensor_rules():
    funcs = DTensor._op_dispatcher.sharding_propagator.op_strategy_funcs
    for op in (torch.ops.tilegemm.mm.default, torch.ops.tilegemm.addmm.default,
               torch.ops.tilegemm.bmm.default):
        assert op in funcs, f"{op} has no DTensor rule"


def test_import_leaves_dtensor_alone_and_a_missing_api_is_no_error():
    """import tilegemm.torch does not load DTensor (about a second); where register_sharding
    cannot be imported the status says why and nothing raises."""
    code = ("import sys, tilegemm.torch as t; "
            "print('torch.distributed.tensor' in sys.modules, t._sharding.status())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-2:] == ["False", "None"]
    code = ("import sys; sys.modules['torch.distributed.tensor.experimental'] = None; "
            "import torch.distributed.tensor, tilegemm.torch as t; print(t._sharding.status())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "no register_sharding" in out


# --- Placements against PyTorch's, on fake meshes ---------------------------------------------
@pytest.fixture(scope="module")
def fake_meshes():
    """A 1-D mesh of 4 and a 2 x 2 mesh on a fake process group of 4 (rank 0), under fake
    tensors: DTensor propagates placements and shapes, nothing is computed."""
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.distributed.device_mesh import init_device_mesh
        from torch.testing._internal.distributed.fake_pg import FakeStore
    except ImportError as exc:
        pytest.skip(f"no fake process group in this PyTorch ({exc})")
    torch.distributed.init_process_group("fake", store=FakeStore(), rank=0, world_size=4)
    try:
        yield init_device_mesh("cpu", (4,)), init_device_mesh("cpu", (2, 2)), FakeTensorMode
    finally:
        torch.distributed.destroy_process_group()


def placed(mesh, shape, placements):
    """A DTensor of global `shape` placed at `placements` (sizes divisible by the mesh)."""
    local = list(shape)
    for size, p in zip(mesh.shape, placements):
        if isinstance(p, Shard):
            local[p.dim] //= size
    return DTensor.from_local(torch.rand(local), mesh, placements, run_check=False)


def same_placements(meshes, mesh, torch_fn, tg_fn, *operands):
    """torch_fn and tg_fn place their output alike for fake DTensor operands [(shape,
    placements)]; returns the placements."""
    with meshes[2]():
        args = [placed(mesh, shape, p) for shape, p in operands]
        want = torch_fn(*args)
        got = tg_fn(*args)
    assert got.shape == want.shape
    assert got.placements == want.placements, \
        f"{[p for _, p in operands]}: tilegemm {got.placements}, PyTorch {want.placements}"
    return got.placements


ONE = [R(), S(0), S(1), P()]


def test_mm_addmm_bmm_placements_as_pytorch_on_a_1d_mesh(fake_meshes):
    mesh = fake_meshes[0]
    for pa, pb in itertools.product(ONE, repeat=2):
        same_placements(fake_meshes, mesh, torch.mm, tgt.mm,
                        ((8, 12), [pa]), ((12, 16), [pb]))
        for c_shape, pc in [((16,), R()), ((16,), S(0)), ((8, 16), S(1)), ((1, 16), R())]:
            same_placements(fake_meshes, mesh, torch.addmm, tgt.addmm,
                            (c_shape, [pc]), ((8, 12), [pa]), ((12, 16), [pb]))
    for pa, pb in itertools.product(ONE + [S(2)], repeat=2):
        same_placements(fake_meshes, mesh, torch.bmm, tgt.bmm,
                        ((4, 8, 12), [pa]), ((4, 12, 16), [pb]))


def test_mm_placements_as_pytorch_on_a_2d_mesh(fake_meshes):
    """A sample of operand placements on a 2 x 2 mesh (each mesh dimension independently);
    operands both Partial on one mesh dimension are left out: there PyTorch and these rules
    break an exact tie in cost differently (both results are right)."""
    mesh = fake_meshes[1]
    pairs = list(itertools.product(ONE, repeat=2))
    for i, (pa, pb) in enumerate(itertools.product(pairs, repeat=2)):
        if i % 5 or any(x.is_partial() and y.is_partial() for x, y in zip(pa, pb)):
            continue
        same_placements(fake_meshes, mesh, torch.mm, tgt.mm,
                        ((8, 12), list(pa)), ((12, 16), list(pb)))


# --- Two processes ----------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_group(device, tmp_dir, timeout):
    """Runs every case of distributed_cases.py in 2 spawned processes; {case: failure text or
    None} merged over the ranks (the first failure of a case is kept)."""
    import torch.multiprocessing as mp

    names = list(distributed_cases.CASES)
    context = mp.start_processes(distributed_cases.worker,
                                 args=(2, device, free_port(), str(tmp_dir), names),
                                 nprocs=2, join=False, start_method="spawn")
    deadline = time.monotonic() + timeout
    try:
        while not context.join(timeout=2):
            if time.monotonic() > deadline:
                pytest.fail(f"the {device} process group ran past {timeout} s")
    finally:
        for p in context.processes:
            if p.is_alive():
                p.kill()
    merged = {}
    for rank in range(2):
        path = tmp_dir / f"rank{rank}.json"
        assert path.exists(), f"rank {rank} wrote no results (crashed?)"
        for name, failure in json.loads(path.read_text()).items():
            if failure and not merged.get(name):
                merged[name] = f"rank {rank}: {failure}"
            merged.setdefault(name, None)
    assert "<setup>" not in merged, merged.get("<setup>")
    return merged


def check_case(results, name):
    assert name in results, f"{name} did not run"
    if results[name]:
        pytest.fail(results[name], pytrace=False)


@pytest.fixture(scope="module")
def cpu_results(tmp_path_factory):
    return run_group("cpu", tmp_path_factory.mktemp("gloo"), timeout=300)


@pytest.fixture(scope="module")
def gpu_results(tmp_path_factory):
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip(f"needs 2 GPUs, PyTorch sees {torch.cuda.device_count()}")
    # With 2 GPUs there and TILEGEMM_REQUIRE_GPU set (the device scripts), a skip is a failure.
    missing = pytest.fail if os.environ.get("TILEGEMM_REQUIRE_GPU", "0") not in ("", "0") \
        else pytest.skip
    if not tilegemm.backend_available("cuda"):
        missing("this libtilegemm has no CUDA backend")
    if not torch.distributed.is_nccl_available():
        missing("this PyTorch has no NCCL")
    return run_group("cuda", tmp_path_factory.mktemp("nccl"), timeout=400)


@pytest.mark.parametrize("name", list(distributed_cases.CASES))
def test_cpu_emulated(cpu_results, name):
    """gloo, 2 processes, local products by aten: the rules, reductions and autograd."""
    check_case(cpu_results, name)


@pytest.mark.parametrize("name", list(distributed_cases.CASES))
def test_gpu(gpu_results, name):
    """NCCL, 2 GPUs, the library's products against PyTorch's (TF32 off)."""
    check_case(gpu_results, name)
