"""Column-major (Fortran-ordered) operands from Python, every transpose, every mix of orders,
against a float64 NumPy product; `out` in Fortran order is written in place, padding and all
else untouched.  Host memory only (NumPy)."""
import itertools

import numpy as np
import pytest

import tilegemm

rng = np.random.default_rng(2024)


def rand(shape, order):
    return np.asarray(rng.uniform(-1, 1, size=shape), dtype=np.float32, order=order)


def want(a, b, c, alpha, beta, trans_a, trans_b):
    a64 = a.astype(np.float64).T if trans_a else a.astype(np.float64)
    b64 = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    r = alpha * (a64 @ b64)
    if beta != 0.0:
        r = r + beta * c.astype(np.float64)
    scale = abs(alpha) * (np.abs(a64) @ np.abs(b64)) + abs(beta) * np.abs(c.astype(np.float64))
    return r, scale


@pytest.mark.parametrize("orders", list(itertools.product("CF", repeat=3)))
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 33, 5), (65, 17, 130)])
def test_orders(orders, trans_a, trans_b, m, n, k):
    oa, ob, oc = orders
    a = rand((k, m) if trans_a else (m, k), oa)
    b = rand((n, k) if trans_b else (k, n), ob)
    c = rand((m, n), oc)
    r, scale = want(a, b, c, 1.5, -0.5, trans_a, trans_b)
    got = tilegemm.sgemm(a, b, c, alpha=1.5, beta=-0.5, trans_a=trans_a, trans_b=trans_b)
    err = np.abs(got.astype(np.float64) - r) / ((k + 2) * np.finfo(np.float32).eps * (scale + 1e-30))
    assert err.max(initial=0.0) <= 1.0


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_fortran_out_in_place(trans_a, trans_b):
    m, n, k = 33, 21, 40
    a = rand((k, m) if trans_a else (m, k), "F")
    b = rand((n, k) if trans_b else (k, n), "F")
    # A column-major view with a leading dimension larger than m: rows 2..34 of a 40 x n block.
    block = np.full((40, n + 2), np.nan, dtype=np.float32, order="F")
    out = block[2:2 + m, 1:1 + n]
    assert not out.flags.c_contiguous
    tilegemm.sgemm(a, b, None, trans_a=trans_a, trans_b=trans_b, beta=0.0, out=out)
    r, scale = want(a, b, np.zeros((m, n), np.float32), 1.0, 0.0, trans_a, trans_b)
    assert np.all(np.abs(out - r) <= (k + 2) * np.finfo(np.float32).eps * (scale + 1e-30))
    # Everything around the view is still NaN: nothing outside C was written.
    mask = np.ones(block.shape, bool)
    mask[2:2 + m, 1:1 + n] = False
    assert np.all(np.isnan(block[mask]))
