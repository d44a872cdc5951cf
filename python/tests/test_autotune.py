"""tilegemm.autotune(): turned on for the process or a block, on GPU arrays (CuPy) in place;
results match float64 with beta != 0 (C written once), and the choices land in the cache a
second process reads.  Skipped where the library, CuPy or a GPU is missing; the state's
handling is checked everywhere."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tilegemm
from tilegemm import _autotune


def test_state_is_scoped_and_restored():
    before = _autotune.enabled()
    with tilegemm.autotune():
        assert _autotune.enabled()
        with tilegemm.autotune(False):
            assert not _autotune.enabled()
        assert _autotune.enabled()
    assert _autotune.enabled() == before
    try:
        with tilegemm.autotune():
            raise KeyError("inside")
    except KeyError:
        pass
    assert _autotune.enabled() == before
    tilegemm.autotune()
    assert _autotune.enabled()
    tilegemm.autotune(False)
    assert not _autotune.enabled()
    tilegemm.autotune(before)
    assert "autotune cache" in tilegemm.autotune_status()


def test_host_calls_run_with_autotune_on():
    """Host operands are not autotuned (documented): the call runs as planned."""
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (40, 30)).astype(np.float32)
    b = rng.uniform(-1, 1, (30, 20)).astype(np.float32)
    with tilegemm.autotune():
        got = tilegemm.matmul(a, b)
    assert np.allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.fixture
def cp(cp, tmp_path, monkeypatch):
    """conftest.py's CuPy, with a fresh cache folder.  The library reads the folder when it
    first looks a GPU's cache up: a fresh one for this process, unless an earlier test of the
    process already looked."""
    monkeypatch.setenv("TILEGEMM_CACHE_DIR", str(tmp_path))
    return cp


# Each put by the cost model at 10 us or more: shorter calls are left to the planner, untimed.
SHAPES = [(300, 200, 500, False, False), (8192, 384, 40, True, False), (64, 700, 3000, False, True)]


@pytest.mark.parametrize("m,n,k,trans_a,trans_b", SHAPES)
def test_cupy_autotuned_matches_float64(cp, m, n, k, trans_a, trans_b):
    rng = np.random.default_rng(m + n + k)
    a = rng.uniform(-1, 1, (k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    a64 = a.astype(np.float64).T if trans_a else a.astype(np.float64)
    b64 = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    want = 1.5 * (a64 @ b64) + 0.5 * c
    scale = 1.5 * (np.abs(a64) @ np.abs(b64)) + 0.5 * np.abs(c) + 1e-30
    tol = 2 * (k + 2) * np.finfo(np.float32).eps
    for attempt in range(2):  # the first call times the candidates, the second is cached
        out = cp.asarray(c)
        with tilegemm.autotune():
            tilegemm.sgemm(cp.asarray(a), cp.asarray(b), out, alpha=1.5, beta=0.5,
                           trans_a=trans_a, trans_b=trans_b, out=out)
        got = cp.asnumpy(out).astype(np.float64)
        assert (np.abs(got - want) / scale).max() <= tol, f"call {attempt}"
    assert "keys timed" in tilegemm.autotune_status()


def test_second_process_reads_the_cache(cp):
    m, n, k = 768, 512, 640  # the model puts it at 20 us: timed (under 10 us it would not be)
    a = cp.ones((m, k), dtype=cp.float32)
    b = cp.ones((k, n), dtype=cp.float32)
    with tilegemm.autotune():
        tilegemm.matmul(a, b)
    cp.cuda.Device().synchronize()
    # The file this process uses (fixed by its first lookup, maybe an earlier test's folder).
    status = tilegemm.autotune_status()
    path = status.split("autotune cache ", 1)[1].split(": ", 1)[0]
    assert os.path.isfile(path), status
    folder = os.path.dirname(path)
    code = (
        "import cupy as cp, tilegemm\n"
        "tilegemm.autotune()\n"
        f"a = cp.ones(({m}, {k}), dtype=cp.float32); b = cp.ones(({k}, {n}), dtype=cp.float32)\n"
        "c = tilegemm.matmul(a, b); cp.cuda.Device().synchronize()\n"
        f"assert float(c[0, 0]) == {k}.0\n"
        "print(tilegemm.autotune_status())\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, TILEGEMM_CACHE_DIR=folder), timeout=300)
    assert run.returncode == 0, run.stderr
    assert "0 keys timed" in run.stdout and "1 plans followed a cached choice" in run.stdout, run.stdout
