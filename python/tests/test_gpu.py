"""tilegemm on GPU arrays (CuPy, PyTorch): used in place through their pointers, on their
current stream.  Skipped where the library or a GPU is missing."""
import numpy as np
import pytest

import tilegemm


def _tol(k):
    return 2 * (k + 2) * np.finfo(np.float32).eps


def _check(got, a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    a = a.astype(np.float64).T if trans_a else a.astype(np.float64)
    b = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    want = alpha * (a @ b) + (beta * c.astype(np.float64) if beta else 0.0)
    scale = abs(alpha) * (np.abs(a) @ np.abs(b)) + np.abs(want) + 1e-30
    assert (np.abs(got - want) / scale).max(initial=0.0) <= _tol(a.shape[1])


# --- CuPy (the fixture cp: conftest.py) ---------------------------------------------------------
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (33, 7, 130), (257, 129, 300)])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
def test_cupy(cp, m, n, k, trans_a, trans_b):
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    da, db, dc = cp.asarray(a), cp.asfortranarray(cp.asarray(b)), cp.asarray(c)
    r = tilegemm.sgemm(da, db, dc, alpha=1.5, beta=-0.5, trans_a=trans_a, trans_b=trans_b)
    assert isinstance(r, cp.ndarray) and r.device.id == da.device.id
    _check(cp.asnumpy(r), a, b, c, 1.5, -0.5, trans_a, trans_b)


def test_cupy_no_copy_in_place_and_stream(cp):
    rng = np.random.default_rng(8)
    a = cp.asarray(rng.uniform(-1, 1, (64, 80)).astype(np.float32))
    b = cp.asarray(rng.uniform(-1, 1, (80, 48)).astype(np.float32))
    big = cp.zeros((100, 100), dtype=cp.float32)
    out = big[10:74, 20:68]  # a view: written in place, ld = 100
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        r = tilegemm.sgemm(a, b, out=out)
        assert r is out
        stream.synchronize()
    _check(cp.asnumpy(out), cp.asnumpy(a), cp.asnumpy(b))
    assert float(cp.abs(big[:10]).sum()) == 0.0 and float(cp.abs(big[:, :20]).sum()) == 0.0


def test_cupy_errors(cp):
    a = cp.ones((4, 4), dtype=cp.float64)
    with pytest.raises(TypeError, match="a has dtype"):
        tilegemm.matmul(a, cp.ones((4, 4), dtype=cp.float32))
    with pytest.raises(ValueError, match="different places"):
        tilegemm.matmul(cp.ones((4, 4), dtype=cp.float32), np.ones((4, 4), np.float32))
    with pytest.raises(ValueError, match="neither row- nor column-major"):
        tilegemm.matmul(cp.ones((4, 8), dtype=cp.float32)[:, ::2], cp.ones((4, 4), cp.float32))


# --- PyTorch -------------------------------------------------------------------------------------
@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    if not tilegemm.backend_available("cuda"):
        pytest.skip("this libtilegemm has no CUDA backend")
    return torch


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (33, 7, 130), (300, 257, 129)])
def test_torch(torch, m, n, k):
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.rand((m, k), device="cuda", generator=g) * 2 - 1
    b = torch.rand((n, k), device="cuda", generator=g) * 2 - 1
    r = tilegemm.sgemm(a, b, trans_b=True)
    assert isinstance(r, torch.Tensor) and r.device == a.device and r.dtype == torch.float32
    _check(r.cpu().numpy(), a.cpu().numpy(), b.cpu().numpy(), trans_b=True)


def test_torch_stream_and_transposed_views(torch):
    a = torch.randn(96, 64, device="cuda")
    b = torch.randn(80, 96, device="cuda")
    out = torch.empty(80, 64, device="cuda").t()  # column-major (64, 80) view
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        r = tilegemm.sgemm(a.t(), b.t(), out=out)  # (64x96) @ (96x80)
        assert r is out
    s.synchronize()
    _check(out.cpu().numpy(), a.t().cpu().numpy(), b.t().cpu().numpy())


def test_torch_requires_grad_and_errors(torch):
    a = torch.randn(8, 8, device="cuda", requires_grad=True)
    r = tilegemm.matmul(a.detach(), a.detach())
    _check(r.cpu().numpy(), a.detach().cpu().numpy(), a.detach().cpu().numpy())
    with pytest.raises(TypeError, match="a has dtype"):
        tilegemm.matmul(torch.ones(4, 4, device="cuda", dtype=torch.float64),
                        torch.ones(4, 4, device="cuda"))
    with pytest.raises(ValueError, match="different places"):
        tilegemm.matmul(torch.ones(4, 4, device="cuda"), torch.ones(4, 4))
    with pytest.raises(ValueError, match="2-D"):
        tilegemm.matmul(torch.ones(2, 4, 4, device="cuda"), torch.ones(4, 4, device="cuda"))


def test_torch_cpu_tensors_are_host_memory():
    torch = pytest.importorskip("torch")
    a, b = torch.randn(17, 9), torch.randn(9, 5)
    r = tilegemm.matmul(a, b)
    assert isinstance(r, torch.Tensor) and r.device.type == "cpu"
    _check(r.numpy(), a.numpy(), b.numpy())


# --- devices, streams, ordering ------------------------------------------------------------------
def _spin(torch, stream=None, cycles=200_000_000):
    """Keeps `stream` (torch's current one by default) busy for a while, so that work not ordered
    after it runs first and reads stale data."""
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("torch.cuda._sleep is missing")
    with torch.cuda.stream(stream or torch.cuda.current_stream()):
        torch.cuda._sleep(cycles)


def test_torch_other_device_runs_there(torch):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    with torch.cuda.device(0):
        a = torch.randn(70, 50, device="cuda:1")
        b = torch.randn(50, 30, device="cuda:1")
        r = tilegemm.matmul(a, b)  # device 0 current, operands on 1
        assert r.device == a.device and torch.cuda.current_device() == 0
        torch.cuda.synchronize(1)
        _check(r.cpu().numpy(), a.cpu().numpy(), b.cpu().numpy())
        out = torch.empty(70, 30, device="cuda:1")
        assert tilegemm.sgemm(a, b, out=out) is out
        torch.cuda.synchronize(1)
        _check(out.cpu().numpy(), a.cpu().numpy(), b.cpu().numpy())


def test_torch_mixed_devices_rejected(torch, monkeypatch):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    monkeypatch.setattr(tilegemm._native, "tg_sgemm", lambda *a: pytest.fail("library called"))
    a0, a1 = torch.ones(4, 4, device="cuda:0"), torch.ones(4, 4, device="cuda:1")
    with pytest.raises(ValueError, match="a on cuda:0, b on cuda:1"):
        tilegemm.matmul(a0, a1)
    with pytest.raises(ValueError, match="out on cuda:1"):
        tilegemm.sgemm(a0, a0, out=a1.clone())


def test_cupy_other_device_and_mixed_devices(cp):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    with cp.cuda.Device(1):
        a = cp.asarray(np.random.default_rng(1).uniform(-1, 1, (40, 20)).astype(np.float32))
    with cp.cuda.Device(0):
        r = tilegemm.matmul(a, a.T)
        assert r.device.id == 1 and cp.cuda.runtime.getDevice() == 0
        with pytest.raises(ValueError, match="a on cuda:1, b on cuda:0"):
            tilegemm.matmul(a, cp.ones((20, 3), cp.float32))
    host = cp.asnumpy(a)
    with cp.cuda.Device(1):
        _check(cp.asnumpy(r), host, host.T)


def test_destroyed_stream_then_another_call(cp):
    rng = np.random.default_rng(5)
    a = cp.asarray(rng.uniform(-1, 1, (300, 200)).astype(np.float32))
    b = cp.asarray(rng.uniform(-1, 1, (200, 100)).astype(np.float32))
    for _ in range(3):
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            r = tilegemm.matmul(a, b)
        s.synchronize()
        del s  # the stream is destroyed here
        import gc
        gc.collect()
        # Later calls, on the default stream and on a fresh stream, must not touch it.
        r2 = tilegemm.matmul(a, b)
        with cp.cuda.Stream(non_blocking=True) as s2:
            r3 = tilegemm.matmul(a, b)
            s2.synchronize()
        cp.cuda.Device().synchronize()
        want = cp.asnumpy(r)
        _check(want, cp.asnumpy(a), cp.asnumpy(b))
        assert np.array_equal(cp.asnumpy(r2), want) and np.array_equal(cp.asnumpy(r3), want)


def test_torch_non_default_stream_ordering(torch):
    """The call runs on torch's current stream, after the work queued there."""
    k = 256
    b = torch.randn(k, 64, device="cuda")
    src = torch.randn(128, k, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a = torch.zeros(128, k, device="cuda")
        _spin(torch)
        a.copy_(src)  # queued on s behind the spin
        r = tilegemm.matmul(a, b)
    s.synchronize()
    _check(r.cpu().numpy(), src.cpu().numpy(), b.cpu().numpy())


class _DLPackOnly:
    """Hides every interface but DLPack (so the binding cannot know the producer's stream)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None, **kwargs):
        return self.t.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_input_ordered_before_torch_stream(torch):
    """a is written on the legacy default stream, out lives on a non-blocking torch stream:
    the call (on out's stream) must wait for a."""
    k = 192
    src = torch.randn(96, k, device="cuda")
    b = torch.randn(k, 48, device="cuda")
    a = torch.zeros(96, k, device="cuda")
    torch.cuda.synchronize()
    default = torch.cuda.default_stream()
    _spin(torch, default)
    with torch.cuda.stream(default):
        a.copy_(src)  # lands after the spin
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        out = torch.full((96, 48), float("nan"), device="cuda")
        tilegemm.sgemm(_DLPackOnly(a), b, out=out)
    s.synchronize()
    _check(out.cpu().numpy(), src.cpu().numpy(), b.cpu().numpy())


def test_cupy_and_torch_mixed_producers_are_ordered(cp, torch):
    """a from CuPy (pending work on CuPy's stream), b and out from PyTorch (another stream):
    the call runs on out's stream after CuPy's work, and CuPy's stream waits for the call."""
    k = 160
    rng = np.random.default_rng(11)
    host_a = rng.uniform(-1, 1, (80, k)).astype(np.float32)
    b = torch.randn(k, 40, device="cuda")
    cs = cp.cuda.Stream(non_blocking=True)
    ts = torch.cuda.Stream()
    torch.cuda.synchronize()
    with cs:
        a = cp.zeros((80, k), cp.float32)
        src = cp.asarray(host_a)
        cs.synchronize()
        _spin(torch, torch.cuda.ExternalStream(cs.ptr))  # CuPy's stream busy
        a[...] = src  # on CuPy's stream, after the spin
        with torch.cuda.stream(ts):
            out = torch.full((80, 40), float("nan"), device="cuda")
            _spin(torch, ts, 50_000_000)
            tilegemm.sgemm(a, b, out=out)
        # CuPy's stream must see the result without any help from the caller.
        seen = cp.asarray(out).copy()
    cs.synchronize()
    _check(cp.asnumpy(seen), host_a, b.cpu().numpy())
    ts.synchronize()
    _check(out.cpu().numpy(), host_a, b.cpu().numpy())
