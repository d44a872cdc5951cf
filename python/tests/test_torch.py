"""tilegemm.torch on CUDA tensors: the ops against float64 PyTorch (forward and backward, at the
k-scaled FP32 bound), torch.compile(fullgraph=True), CUDA graph capture and replay, routing on
and off, math scoping, and wrong dtypes or devices.  Skipped without PyTorch, without a GPU, or
with a libtilegemm built without CUDA."""
import threading

import pytest

torch = pytest.importorskip("torch")
import tilegemm  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no GPU visible to PyTorch", allow_module_level=True)
if not tilegemm.backend_available("cuda"):
    pytest.skip("this libtilegemm has no CUDA backend", allow_module_level=True)

import tilegemm.torch as tgt  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

EPS32 = torch.finfo(torch.float32).eps
TF32_UNIT = 2.0 ** -11  # TF32 keeps 10 mantissa bits


@pytest.fixture(autouse=True)
def fp32_matmul():
    """PyTorch's own products in full FP32 (the references are float64 anyway)."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved


def rand(*shape, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.rand(shape, device="cuda", generator=g) * 2 - 1


def check(got, fn, *args, k, unit=0.0):
    """|got - fn(args in float64)| within the k-scaled FP32 bound of fn(|args|) (plus `unit`
    per unit of that scale for TF32)."""
    want = fn(*(x.double() for x in args))
    scale = fn(*(x.double().abs() for x in args)).abs() + want.abs() + 1e-30
    assert got.dtype == torch.float32 and got.shape == want.shape
    err = ((got.double() - want).abs() / scale).max().item() if got.numel() else 0.0
    assert err <= 2 * (k + 2) * EPS32 + unit, f"scaled error {err:.3g} at k = {k}"


class Ops(TorchDispatchMode):
    """Records the operators that reach the dispatcher (e.g. "tilegemm.mm.default")."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))

    def ran(self, prefix):
        return any(s.startswith(prefix) for s in self.seen)


LAYOUTS = {
    "row": lambda x: x,
    "col": lambda x: x.t().contiguous().t(),
    "slice": lambda x: torch.nn.functional.pad(x, (1, 3, 2, 0))[2:, 1:1 + x.shape[1]],
}


# --- Forward ----------------------------------------------------------------------------------
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (33, 7, 130), (300, 257, 129), (509, 64, 1025),
                                   (64, 48, 0)])
@pytest.mark.parametrize("la,lb", [("row", "row"), ("col", "slice"), ("slice", "col")])
def test_mm(m, n, k, la, lb):
    a, b = LAYOUTS[la](rand(m, k, seed=1)), LAYOUTS[lb](rand(k, n, seed=2))
    got = tgt.mm(a, b)
    assert got.is_contiguous() and got.device == a.device
    check(got, torch.mm, a, b, k=k)


def test_addmm_bias_alpha_beta():
    a, b, bias, c = rand(70, 90, seed=3), rand(90, 40, seed=4), rand(40, seed=5), rand(70, 40)
    check(tgt.addmm(bias, a, b), lambda x, y, z: x + y @ z, bias, a, b, k=90)
    check(tgt.addmm(c, a, b, beta=0.5, alpha=2.0),
          lambda x, y, z: 0.5 * x + 2.0 * (y @ z), c, a, b, k=90)
    nan = torch.full((70, 40), float("nan"), device="cuda")  # beta = 0 never reads it
    check(tgt.addmm(nan, a, b, beta=0.0), torch.mm, a, b, k=90)


def test_addmm_refuses_scalars_float32_cannot_carry():
    a, b, c = rand(4, 6, seed=3), rand(6, 5, seed=4), torch.full((4, 5), float("nan"), device="cuda")
    for kwargs in ({"beta": 1e-50}, {"alpha": 1e40}):
        name = next(iter(kwargs))
        with pytest.raises(ValueError, match=f"^{name} = .*float32"):
            tgt.addmm(c, a, b, **kwargs)
    with tgt.enabled():  # routed: PyTorch's own addmm decides, as without tilegemm
        torch.addmm(c, a, b, beta=1e-50)


@pytest.mark.parametrize("layout", ["row", "col"])
def test_bmm(layout):
    a, b = rand(5, 33, 70, seed=6), rand(5, 70, 21, seed=7)
    if layout == "col":
        a, b = (x.transpose(1, 2).contiguous().transpose(1, 2) for x in (a, b))
    check(tgt.bmm(a, b), torch.bmm, a, b, k=70)
    shared = rand(1, 70, 21, seed=8).expand(5, 70, 21)  # batch stride 0, no copy
    check(tgt.bmm(a, shared), torch.bmm, a, shared, k=70)


@pytest.mark.parametrize("sa,sb", [((7,), (7,)), ((7,), (7, 3)), ((4, 7), (7,)),
                                   ((2, 3, 4, 7), (7, 5)), ((2, 1, 4, 7), (3, 7, 5)),
                                   ((6, 4, 7), (6, 7, 5))])
def test_matmul_shapes(sa, sb):
    a, b = rand(*sa, seed=9), rand(*sb, seed=10)
    check(tgt.matmul(a, b), torch.matmul, a, b, k=7)


def test_linear():
    x, w, bias = rand(3, 5, 64, seed=11), rand(24, 64, seed=12), rand(24, seed=13)
    check(tgt.linear(x, w, bias), torch.nn.functional.linear, x, w, bias, k=64)
    check(tgt.linear(x, w), torch.nn.functional.linear, x, w, k=64)


def test_direct_and_dispatcher_paths_agree():
    a, b = rand(200, 300, seed=14), rand(300, 100, seed=15)
    direct = tgt.mm(a, b)
    with Ops() as ops:  # a dispatch mode sends the call through the registered op
        through_op = tgt.mm(a, b)
    assert ops.ran("tilegemm.mm") and torch.equal(direct, through_op)
    assert torch.equal(direct, tgt.mm(a.requires_grad_(), b).detach())


# --- Backward ---------------------------------------------------------------------------------
def grads(fn, *args, weight):
    """d/d args of sum(fn(args) * weight), in each argument's dtype."""
    args = [x.detach().requires_grad_() for x in args]
    (fn(*args) * weight).sum().backward()
    return [x.grad for x in args]


@pytest.mark.parametrize("op,shapes", [
    ("mm", [(65, 130), (130, 33)]),
    ("bmm", [(3, 65, 130), (3, 130, 33)]),
    ("addmm", [(33,), (65, 130), (130, 33)]),
    ("linear", [(4, 65, 130), (33, 130), (33,)]),
])
def test_backward_against_float64(op, shapes, monkeypatch):
    tg_fn = getattr(tgt, op)
    torch_fn = {"mm": torch.mm, "bmm": torch.bmm, "addmm": torch.addmm,
                "linear": torch.nn.functional.linear}[op]
    args = [rand(*s, seed=20 + i) for i, s in enumerate(shapes)]
    out_shape = torch_fn(*args).shape
    weight = rand(*out_shape, seed=30)
    copied, operand = [], tgt._operand

    def spy(t):  # records operands the library could not read in place
        found = operand(t)
        if found[0] is not t:
            copied.append(t.stride())
        return found

    monkeypatch.setattr(tgt, "_operand", spy)
    with Ops() as ops:
        got = grads(tg_fn, *args, weight=weight)
    assert not ops.ran("aten.mm") and not ops.ran("aten.bmm") and not ops.ran("aten.addmm")
    assert ops.ran("tilegemm.") and not copied
    want = grads(torch_fn, *(x.double() for x in args), weight=weight.double())
    absolute = grads(torch_fn, *(x.double().abs() for x in args), weight=weight.double().abs())
    for g, w, s in zip(got, want, absolute):
        k = max(out_shape[-1], out_shape[-2] * (out_shape[0] if len(out_shape) == 3 else 1))
        err = ((g.double() - w).abs() / (s.abs() + w.abs() + 1e-30)).max().item()
        assert g.dtype == torch.float32 and err <= 2 * (k + 2) * EPS32, err


def test_backward_of_a_broadcast_gradient():
    a, b = rand(40, 50, seed=31).requires_grad_(), rand(50, 20, seed=32).requires_grad_()
    tgt.mm(a, b).sum().backward()  # the incoming gradient has strides (0, 0)
    ones = torch.ones(40, 20, device="cuda")
    check(a.grad, lambda o, y: o @ y.t(), ones, b.detach(), k=20)
    check(b.grad, lambda x, o: x.t() @ o, a.detach(), ones, k=40)


def test_backward_runs_in_the_forward_mode():
    a, b = rand(128, 256, seed=33).requires_grad_(), rand(256, 64, seed=34).requires_grad_()
    weight = rand(128, 64, seed=35)
    (tgt.mm(a, b, math="tf32") * weight).sum().backward()
    assert torch.equal(a.grad, tgt.mm(weight, b.detach().t(), math="tf32"))
    assert torch.equal(b.grad, tgt.mm(a.detach().t(), weight, math="tf32"))


# --- Math scoping -----------------------------------------------------------------------------
def test_math_is_scoped_to_the_call_and_the_block():
    a, b = rand(1024, 1024, seed=40), rand(1024, 1024, seed=41)  # large: tensor cores win
    fp32 = tgt.mm(a, b)
    tf32 = tgt.mm(a, b, math="tf32")
    check(tf32, torch.mm, a, b, k=1024, unit=8 * TF32_UNIT)
    assert torch.equal(tgt.mm(a, b), fp32)  # the tf32 call changed nothing after it
    assert not torch.equal(tf32, fp32)  # TF32 rounding shows on random inputs
    with tilegemm.math("tf32"):
        assert torch.equal(tgt.mm(a, b), tf32)
        assert torch.equal(tgt.mm(a, b, math="fp32"), fp32)
    assert torch.equal(tgt.mm(a, b), fp32)
    check(fp32, torch.mm, a, b, k=1024)
    # tilegemm.sgemm follows the same rules.
    tilegemm.sgemm(a, b, math="tf32")
    assert torch.equal(tilegemm.sgemm(a, b), fp32)


# --- torch.compile and CUDA graphs ------------------------------------------------------------
def test_compile_fullgraph_forward_and_backward():
    torch._dynamo.reset()

    def step(x, w, bias, w2):
        h = tgt.linear(x, w, bias).relu()
        return (tgt.matmul(h, w2) ** 2).sum()

    args = [rand(64, 96, seed=50), rand(128, 96, seed=51), rand(128, seed=52),
            rand(128, 32, seed=53)]
    compiled = torch.compile(step, fullgraph=True)
    eager_args = [x.clone().requires_grad_() for x in args]
    step(*eager_args).backward()
    comp_args = [x.clone().requires_grad_() for x in args]
    loss = compiled(*comp_args)
    loss.backward()
    torch.testing.assert_close(loss, step(*args), rtol=1e-5, atol=0)
    for e, c in zip(eager_args, comp_args):
        torch.testing.assert_close(c.grad, e.grad, rtol=1e-5, atol=1e-5)


def test_cuda_graph_capture_and_replay():
    shapes = [(128, 128, 128), (64, 64, 8192), (300, 200, 100)]  # the second splits k
    ins = [(rand(m, k, seed=60 + i), rand(k, n, seed=70 + i))
           for i, (m, n, k) in enumerate(shapes)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: the handle and its workspace exist before capture
        for a, b in ins:
            tgt.mm(a, b)
            tgt.bmm(a.unsqueeze(0), b.unsqueeze(0))
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = [(tgt.mm(a, b), tgt.bmm(a.unsqueeze(0), b.unsqueeze(0))) for a, b in ins]
    for i, (a, b) in enumerate(ins):
        a.copy_(rand(*a.shape, seed=80 + i))
        b.copy_(rand(*b.shape, seed=90 + i))
    graph.replay()
    torch.cuda.synchronize()
    for (a, b), (y, yb) in zip(ins, outs):
        assert torch.equal(y, tgt.mm(a, b))
        check(y, torch.mm, a, b, k=a.shape[1])
        check(yb[0], torch.mm, a, b, k=a.shape[1])


# --- Routing ----------------------------------------------------------------------------------
def _routed_calls(a, b):
    lin = torch.nn.Linear(b.shape[0], 16, device="cuda")
    return [lambda: torch.matmul(a, b), lambda: a @ b, lambda: torch.mm(a, b),
            lambda: a.mm(b), lambda: torch.addmm(b[0], a, b), lambda: lin(a),
            lambda: torch.nn.functional.linear(a, lin.weight),
            lambda: torch.bmm(a.unsqueeze(0), b.unsqueeze(0))]


def _tilegemm_ran(call):
    with Ops() as ops:
        call()
    return any(s.startswith("tilegemm.") for s in ops.seen) and not any(
        s.startswith(("aten.mm", "aten.addmm", "aten.bmm")) for s in ops.seen)


def test_routing_on_and_off():
    a, b = rand(32, 48, seed=100), rand(48, 48, seed=101)
    for call in _routed_calls(a, b):
        assert not _tilegemm_ran(call)
        with tgt.enabled():
            assert _tilegemm_ran(call)
            with torch.no_grad():
                got = call()
        want = call()  # PyTorch's, FP32 (allow_tf32 off)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert not _tilegemm_ran(_routed_calls(a, b)[0])


def test_routing_passes_other_dtypes_devices_and_out_through():
    a = rand(16, 16, seed=102)
    cases = [(a.double(), a.double()), (a.cpu(), a.cpu()), (a.half(), a.half())]
    with tgt.enabled():
        for x, y in cases:
            with Ops() as ops:
                got = x @ y
            assert not ops.ran("tilegemm.") and torch.equal(got, torch.matmul(x, y))
        out = torch.empty(16, 16, device="cuda")
        with Ops() as ops:
            torch.mm(a, a, out=out)
        assert ops.ran("aten.mm")


def test_enable_is_process_wide():
    a, b = rand(32, 48, seed=103), rand(48, 16, seed=104)
    seen = []
    tgt.enable()
    try:
        t = threading.Thread(target=lambda: seen.append(_tilegemm_ran(lambda: a @ b)))
        t.start()
        t.join()
        assert seen == [True] and _tilegemm_ran(lambda: torch.nn.functional.linear(a, b.t()))
    finally:
        tgt.disable()
    assert not _tilegemm_ran(lambda: a @ b)


# --- Errors -----------------------------------------------------------------------------------
def test_wrong_dtype_or_device_is_a_clear_error():
    a = rand(8, 8)
    with pytest.raises(TypeError, match="a has dtype torch.float64"):
        tgt.mm(a.double(), a)
    with pytest.raises(TypeError, match="b has dtype torch.float16"):
        tgt.mm(a, a.half())
    with pytest.raises(ValueError, match="a is on cpu"):
        tgt.mm(a.cpu(), a)
    with pytest.raises(ValueError, match="b is on cpu"):
        tgt.mm(a, a.cpu().requires_grad_())  # through the registered op: the same message
    with pytest.raises(ValueError, match="cannot be multiplied"):
        tgt.mm(a, rand(9, 8))
    with pytest.raises(ValueError, match="must be 2-D"):
        tgt.mm(a.unsqueeze(0), a)
    with pytest.raises(ValueError, match="batch sizes"):
        tgt.bmm(rand(2, 8, 8), rand(3, 8, 8))
