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


# --- CuPy ----------------------------------------------------------------------------------------
@pytest.fixture
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no GPU")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no GPU")
    if not tilegemm.backend_available("cuda"):
        pytest.skip("this libtilegemm has no CUDA backend")
    return cupy


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
