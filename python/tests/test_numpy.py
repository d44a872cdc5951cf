"""tilegemm on NumPy arrays, against a float64 NumPy product.

Run from the repository root, installed (`pip install .`) or not:
    PYTHONPATH=python TILEGEMM_LIBRARY=build/libtilegemm.so python -m pytest python/tests
"""
import itertools
import threading

import numpy as np
import pytest

import tilegemm

rng = np.random.default_rng(1234)


def rand(*shape, order="C"):
    return np.asarray(rng.uniform(-1, 1, size=shape), dtype=np.float32, order=order)


def reference(a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    a64 = a.astype(np.float64).T if trans_a else a.astype(np.float64)
    b64 = b.astype(np.float64).T if trans_b else b.astype(np.float64)
    r = alpha * (a64 @ b64)
    if beta != 0.0:
        r = r + beta * c.astype(np.float64)
    return r


def assert_close(got, a, b, want, trans_a=False, trans_b=False, alpha=1.0):
    """Within float32 rounding: the error bound grows with k and the magnitude of the terms."""
    k = (a.shape[0] if trans_a else a.shape[1])
    a64 = np.abs(a.astype(np.float64).T if trans_a else a.astype(np.float64))
    b64 = np.abs(b.astype(np.float64).T if trans_b else b.astype(np.float64))
    scale = abs(alpha) * (a64 @ b64) + np.abs(want) + 1e-30
    err = np.abs(got.astype(np.float64) - want) / scale
    assert got.dtype == np.float32
    assert err.max(initial=0.0) <= 2 * (k + 2) * np.finfo(np.float32).eps, err.max()


SHAPES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (130, 130, 130), (7, 33, 130), (130, 1, 33),
          (1, 130, 7), (33, 130, 1)]


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matmul_shapes(m, n, k):
    a, b = rand(m, k), rand(k, n)
    c = tilegemm.matmul(a, b)
    assert c.shape == (m, n) and c.flags.c_contiguous
    assert_close(c, a, b, reference(a, b))


@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("order_a,order_b,order_c", list(itertools.product("CF", repeat=3)))
def test_trans_and_orders(trans_a, trans_b, order_a, order_b, order_c):
    m, n, k = 13, 9, 21
    a = rand(*((k, m) if trans_a else (m, k)), order=order_a)
    b = rand(*((n, k) if trans_b else (k, n)), order=order_b)
    c = rand(m, n, order=order_c)
    out = np.empty((m, n), dtype=np.float32, order=order_c)
    r = tilegemm.sgemm(a, b, c, alpha=0.5, beta=-2.0, trans_a=trans_a, trans_b=trans_b, out=out)
    assert r is out
    assert_close(out, a, b, reference(a, b, c, 0.5, -2.0, trans_a, trans_b), trans_a, trans_b, 0.5)


def test_sliced_views_use_leading_dimension():
    big_a, big_b, big_c = rand(40, 50), rand(60, 70), rand(30, 90)
    a, b = big_a[3:20, 5:36], big_b[10:41, 7:19]  # row stride > number of columns
    c_before = big_c.copy()
    out = big_c[4:21, 60:72]  # write into a window of a larger array
    tilegemm.sgemm(a, b, out.copy(), beta=1.0, out=out)
    want = reference(a, b, c_before[4:21, 60:72], 1.0, 1.0)
    assert_close(out, a, b, want)
    untouched = np.ones(big_c.shape, bool)
    untouched[4:21, 60:72] = False
    assert np.array_equal(big_c[untouched], c_before[untouched])
    # Fortran-ordered slices and transposed views work the same way.
    f = np.asfortranarray(rand(50, 40))[5:36, 3:20]
    assert_close(tilegemm.matmul(f.T, a.T), f.T, a.T, reference(f.T, a.T))


def test_in_place_update_and_c_not_modified():
    a, b, c = rand(8, 5), rand(5, 6), rand(8, 6)
    c0 = c.copy()
    r = tilegemm.sgemm(a, b, c, alpha=2.0, beta=0.5)
    assert r is not c and np.array_equal(c, c0)
    assert_close(r, a, b, reference(a, b, c0, 2.0, 0.5), alpha=2.0)
    tilegemm.sgemm(a, b, c, alpha=2.0, beta=0.5, out=c)
    assert_close(c, a, b, reference(a, b, c0, 2.0, 0.5), alpha=2.0)


def test_beta_zero_ignores_nan_in_c():
    a, b = rand(9, 4), rand(4, 7)
    c = np.full((9, 7), np.nan, dtype=np.float32)
    r = tilegemm.sgemm(a, b, c, beta=0.0)
    assert not np.isnan(r).any()
    tilegemm.sgemm(a, b, c, beta=0.0, out=c)
    assert not np.isnan(c).any()
    assert_close(c, a, b, reference(a, b))


def test_alpha_zero_does_not_read_a_or_b():
    a = np.full((5, 3), np.nan, dtype=np.float32)
    b = np.full((3, 4), np.inf, dtype=np.float32)
    c = rand(5, 4)
    r = tilegemm.sgemm(a, b, c, alpha=0.0, beta=3.0)
    assert np.allclose(r, 3.0 * c)
    r = tilegemm.sgemm(a, b, c, alpha=0.0, beta=1.0)
    assert np.array_equal(r, c)


def test_exact_small_integers_bit_for_bit():
    a = rng.integers(-3, 4, size=(65, 129)).astype(np.float32)
    b = rng.integers(-3, 4, size=(129, 33)).astype(np.float32)
    assert a.any() and b.any()
    assert np.array_equal(tilegemm.matmul(a, b), (a.astype(np.int64) @ b.astype(np.int64)))


def test_empty_and_k_zero():
    assert tilegemm.matmul(rand(0, 4), rand(4, 5)).shape == (0, 5)
    r = tilegemm.sgemm(rand(3, 0), rand(0, 2), np.ones((3, 2), np.float32), beta=2.0)
    assert np.array_equal(r, np.full((3, 2), 2.0, np.float32))
    assert np.array_equal(tilegemm.matmul(rand(3, 0), rand(0, 2)), np.zeros((3, 2), np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.complex64])
def test_wrong_dtype_is_type_error(dtype):
    a = np.ones((3, 3), dtype=dtype)
    with pytest.raises(TypeError, match=r"a has dtype"):
        tilegemm.matmul(a, np.ones((3, 3), np.float32))
    with pytest.raises(TypeError, match=r"b has dtype"):
        tilegemm.matmul(np.ones((3, 3), np.float32), a)
    with pytest.raises(TypeError, match=r"out has dtype"):
        tilegemm.sgemm(np.ones((3, 3), np.float32), np.ones((3, 3), np.float32), out=a)


def test_not_an_array_is_type_error():
    with pytest.raises(TypeError, match="must be a NumPy array"):
        tilegemm.matmul([[1.0]], np.ones((1, 1), np.float32))


def test_wrong_dimensions_and_shapes():
    with pytest.raises(ValueError, match="2-D"):
        tilegemm.matmul(np.ones((2, 3, 4), np.float32), np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="2-D"):
        tilegemm.matmul(np.ones(3, np.float32), np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"op\(a\) is 2x3 .* op\(b\) is 4x2"):
        tilegemm.matmul(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"c.shape = \(2, 3\)"):
        tilegemm.sgemm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32),
                       np.ones((2, 3), np.float32), beta=1.0)
    with pytest.raises(ValueError, match="needs c"):
        tilegemm.sgemm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), beta=1.0)


def test_non_contiguous_inner_stride_is_rejected():
    a = rand(8, 8)
    with pytest.raises(ValueError, match="neither row- nor column-major"):
        tilegemm.matmul(a[:, ::2], rand(4, 3))
    with pytest.raises(ValueError, match="neither row- nor column-major"):
        tilegemm.matmul(a[::-1], rand(8, 3))
    with pytest.raises(ValueError, match="neither row- nor column-major"):
        tilegemm.matmul(np.broadcast_to(rand(1, 8), (8, 8)), rand(8, 3))
    # Rows that overlap: a row stride of 2 elements under rows 8 long.
    overlapping = np.lib.stride_tricks.as_strided(rand(1, 20).ravel(), shape=(4, 8),
                                                  strides=(8, 4))
    with pytest.raises(ValueError, match="neither row- nor column-major"):
        tilegemm.matmul(overlapping, rand(8, 3))


def test_out_checks():
    a, b = rand(4, 4), rand(4, 4)
    ro = np.zeros((4, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tilegemm.sgemm(a, b, out=ro)
    with pytest.raises(ValueError, match="out overlaps a"):
        tilegemm.sgemm(a, b, out=a)


def test_library_errors_raise_tilegemm_error():
    # A call the binding cannot make wrong on its own: use the C function directly.
    from tilegemm import _native
    h = _native.handle()
    status = _native.tg_sgemm(h.ptr, 101, 111, 111, 2, 2, 3, 1.0, None, 2, None, 2, 0.0,
                              None, 2)
    with pytest.raises(tilegemm.TilegemmError) as info:
        h.check(status)
    err = info.value
    assert err.status == 1 and err.arg == 9 and err.arg_name == "lda"
    assert "lda = 2 is less than k = 3" in err.message and "lda" in str(err)


def test_threads_have_their_own_handles():
    a, b = rand(64, 48), rand(48, 32)
    want = reference(a, b)
    errors = []

    def work():
        try:
            for _ in range(5):
                assert_close(tilegemm.matmul(a, b), a, b, want)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_version_and_backends():
    assert tilegemm.version() == tilegemm.__version__
    assert tilegemm.backend_available("cpu")
    with pytest.raises(ValueError):
        tilegemm.backend_available("tpu")


# --- beta == 0 never reads c; errors raised before any library call ---------------------------
def test_beta_zero_c_not_copied_into_separate_out():
    a, b = rand(9, 4), rand(4, 7)
    c = np.full((9, 7), np.nan, dtype=np.float32)
    out = np.full((9, 7), np.nan, dtype=np.float32, order="F")
    c0 = c.copy()
    r = tilegemm.sgemm(a, b, c, alpha=2.0, beta=0.0, out=out)
    assert r is out and not np.isnan(out).any()
    assert_close(out, a, b, reference(a, b, alpha=2.0), alpha=2.0)
    assert np.array_equal(c, c0, equal_nan=True)  # c untouched
    # c is not read, so it may even overlap out (it would be an error with beta != 0).
    big = np.full((9, 8), np.nan, dtype=np.float32)
    tilegemm.sgemm(a, b, big[:, 1:], beta=0.0, out=big[:, :7])
    assert_close(big[:, :7], a, b, reference(a, b))
    with pytest.raises(ValueError, match="c and out overlap"):
        tilegemm.sgemm(a, b, big[:, 1:], beta=1.0, out=big[:, :7])


def test_beta_nonzero_copies_c_into_separate_out():
    a, b, c = rand(6, 5), rand(5, 4), rand(6, 4)
    out = np.full((6, 4), np.nan, dtype=np.float32)
    tilegemm.sgemm(a, b, c, beta=0.5, out=out)
    assert_close(out, a, b, reference(a, b, c, 1.0, 0.5))


def test_error_messages():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"beta = 2.0 needs c"):
        tilegemm.sgemm(a, b, beta=2.0)
    with pytest.raises(ValueError, match=r"out.shape = \(4, 2\) but the product .* is 2x4"):
        tilegemm.sgemm(a, b, out=np.empty((4, 2), np.float32))
    with pytest.raises(ValueError, match=r"op\(a\) is 3x2 \(a.shape = \(2, 3\), transposed\)"):
        tilegemm.sgemm(a, b, trans_a=True)
    with pytest.raises(TypeError, match=r"c has dtype float64"):
        tilegemm.sgemm(a, b, np.ones((2, 4)), beta=1.0)


class _FakeCAI:
    """A GPU-looking array that only offers __cuda_array_interface__ (never dereferenced)."""

    def __init__(self, shape, ptr=0x7f0000000000):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (ptr, False),
                                         "strides": None, "version": 3, "stream": 1}


class _FakeDLPack:
    """A GPU-looking DLPack array on CUDA device `dev` (the capsule is a NumPy one, relabelled;
    never dereferenced)."""

    def __init__(self, shape, dev):
        self.x, self.dev = np.zeros(shape, np.float32), dev

    def __dlpack_device__(self):
        return (2, self.dev)

    def __dlpack__(self, stream=None):
        from tilegemm._operands import DLTensor, capsule_pointer
        capsule = self.x.__dlpack__()
        DLTensor.from_address(capsule_pointer(capsule, b"dltensor")).device.device_id = self.dev
        return capsule


@pytest.fixture
def no_library_call(monkeypatch):
    def fail(*args):
        raise AssertionError("the library was called")
    monkeypatch.setattr(tilegemm._native, "tg_sgemm", fail)
    monkeypatch.setattr(tilegemm._native, "tg_set_stream", fail)


def test_mixed_devices_rejected_before_the_library(no_library_call):
    host = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match=r"different places \(a on host, b on cuda:"):
        tilegemm.matmul(host, _FakeCAI((4, 4)))
    with pytest.raises(ValueError, match=r"a on cuda:0, b on cuda:1\): put them all on the same"):
        tilegemm.matmul(_FakeDLPack((4, 4), 0), _FakeDLPack((4, 4), 1))
    with pytest.raises(ValueError, match="different places"):
        tilegemm.sgemm(_FakeDLPack((4, 4), 0), _FakeDLPack((4, 4), 0),
                       out=_FakeDLPack((4, 4), 3))


def test_unknown_device_does_not_escape_the_check(no_library_call):
    # Without CuPy (and, here, without a GPU) the device of an interface-only array cannot be
    # told; next to an operand whose device is known it must be an error, not a guess.
    if tilegemm.current_device(frameworks=True) is not None:
        pytest.skip("the current device is known here: the unknown one is resolved to it")
    with pytest.raises(ValueError, match=r"b on cuda:\?.*cannot be told"):
        tilegemm.matmul(_FakeDLPack((4, 4), 1), _FakeCAI((4, 4)))


def test_handles_per_thread_and_device():
    from tilegemm import _native
    h = _native.handle()
    assert _native.handle() is h
    assert _native.handle(h.device) is h
    seen = []
    t = threading.Thread(target=lambda: seen.append(_native.handle()))
    t.start()
    t.join()
    assert seen[0] is not h


def test_masked_arrays_are_refused():
    a = np.ma.masked_array(np.ones((3, 3), np.float32), mask=np.eye(3, dtype=bool))
    with pytest.raises(TypeError, match="masked array"):
        tilegemm.sgemm(a, np.ones((3, 3), np.float32))


@pytest.mark.parametrize("bad", ["2", 1 + 2j, True, None, [2.0]])
def test_alpha_and_beta_must_be_real(bad):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(TypeError, match="real number"):
        tilegemm.sgemm(a, a, alpha=bad)
    with pytest.raises(TypeError, match="real number"):
        tilegemm.sgemm(a, a, a, beta=bad)


def test_alpha_accepts_numpy_and_int_scalars():
    a = np.ones((2, 2), np.float32)
    assert np.array_equal(tilegemm.sgemm(a, a, alpha=np.float64(2)), np.full((2, 2), 4, np.float32))
    assert np.array_equal(tilegemm.sgemm(a, a, alpha=3), np.full((2, 2), 6, np.float32))


# alpha and beta reach the library as float32: a value that would become inf or 0 there is
# refused, naming the argument, rather than computed with silently (1e40 gave inf; beta = 1e-50
# gave 0, which never reads c, so a NaN in c did not propagate).
@pytest.mark.parametrize("bad", [1e40, -1e39, 3.5e38, 1e-50, -1e-46, 2.0**-150, pytest.param(10**400, id="int-10**400")])
@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_alpha_and_beta_float32_cannot_carry_are_refused(name, bad):
    a = np.ones((2, 2), np.float32)
    c = np.full((2, 2), np.nan, np.float32)
    with pytest.raises(ValueError, match=f"^{name} = .*float32"):
        tilegemm.sgemm(a, a, c, **{name: bad})
    with pytest.raises(ValueError, match=f"^{name} = "):
        tilegemm.sgemm(a, a, c, **{name: np.float64(bad) if bad != 10**400 else bad})


def test_beta_tiny_nonzero_does_not_drop_c():
    a = np.ones((2, 2), np.float32)
    c = np.full((2, 2), np.nan, np.float32)
    with pytest.raises(ValueError, match="beta = 1e-50 is nonzero but rounds to 0"):
        tilegemm.sgemm(a, a, c, beta=1e-50)


@pytest.mark.parametrize("value", [3.4028235e38, -3.4028235e38, 1e-45, 2.0**-149, -1e-40,
                                   float("inf"), float("-inf"), 0.0, -0.0])
def test_alpha_and_beta_float32_can_carry_are_accepted(value):
    a = np.ones((2, 2), np.float32)
    c = np.ones((2, 2), np.float32)
    with np.errstate(all="ignore"):
        want = np.float32(value) * np.float32(2) + np.float32(value) * np.float32(1)
    got = tilegemm.sgemm(a, a, c, alpha=value, beta=value)
    assert np.array_equal(got, np.full((2, 2), want, np.float32), equal_nan=True), (got, want)


def test_nan_alpha_is_passed_on():
    a = np.ones((2, 2), np.float32)
    assert np.isnan(tilegemm.sgemm(a, a, alpha=float("nan"))).all()


@pytest.mark.parametrize("mode", ["fp32", "strict", "tf32"])
def test_math_keyword_sets_the_mode(mode):
    from tilegemm import _native
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)
    np.testing.assert_array_equal(tilegemm.sgemm(a, b, math=mode), a @ b)
    h = _native.handle()
    assert _native.tg_get_math(h.ptr) == ["fp32", "strict", "tf32"].index(mode)
    tilegemm.sgemm(a, b, math="fp32")


def test_math_keyword_rejects_unknown_modes():
    a = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="math"):
        tilegemm.sgemm(a, a, math="fast")


# --- Math modes are scoped to the call or the block, never sticky -------------------------------
def _handle_math():
    from tilegemm import _native
    return ["fp32", "strict", "tf32"][_native.tg_get_math(_native.handle().ptr)]


def _plain_call():
    a = np.ones((2, 2), np.float32)
    tilegemm.sgemm(a, a)
    return _handle_math()


def test_math_keyword_applies_to_that_call_only():
    default = _plain_call()
    a = np.ones((2, 2), np.float32)
    tilegemm.sgemm(a, a, math="tf32")
    assert _handle_math() == "tf32"
    assert _plain_call() == default  # the next call without math= is back to the default


def test_math_block_scopes_the_mode():
    default = _plain_call()
    a = np.ones((2, 2), np.float32)
    with tilegemm.math("strict"):
        assert _plain_call() == "strict"
        tilegemm.sgemm(a, a, math="tf32")  # the call's own mode wins inside the block
        assert _handle_math() == "tf32"
        assert _plain_call() == "strict"
        with tilegemm.math("tf32"):
            assert _plain_call() == "tf32"
        assert _plain_call() == "strict"
    assert _plain_call() == default
    with pytest.raises(ValueError, match="math = 'fast'"):
        with tilegemm.math("fast"):
            pass


def test_math_block_is_per_thread():
    seen = []
    with tilegemm.math("tf32"):
        t = threading.Thread(target=lambda: seen.append(_plain_call()))
        t.start()
        t.join()
    assert seen == [tilegemm._math.MODES[tilegemm._math.default()]]


def test_math_environment_sets_the_process_default():
    import os
    import subprocess
    import sys
    script = ("import numpy as np, tilegemm\n"
              "from tilegemm import _native\n"
              "a = np.ones((2, 2), np.float32)\n"
              "mode = lambda: _native.tg_get_math(_native.handle().ptr)\n"
              "tilegemm.sgemm(a, a); first = mode()\n"
              "tilegemm.sgemm(a, a, math='fp32'); second = mode()\n"
              "tilegemm.sgemm(a, a); print(first, second, mode())\n")
    env = dict(os.environ, TILEGEMM_MATH="tf32")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.split() == ["2", "0", "2"]


# An invalid TILEGEMM_MATH is the library's error (tg_create refuses it), the same exception
# whether or not the call names its own mode: matmul raised ValueError, sgemm(math=...)
# TilegemmError.
def test_invalid_math_environment_is_one_error():
    import os
    import subprocess
    import sys
    script = ("import numpy as np, tilegemm\n"
              "a = np.ones((2, 2), np.float32)\n"
              "for call in (lambda: tilegemm.matmul(a, a), lambda: tilegemm.sgemm(a, a),\n"
              "             lambda: tilegemm.sgemm(a, a, math='fp32')):\n"
              "    try:\n"
              "        call()\n"
              "    except Exception as e:\n"
              "        print(type(e).__name__, getattr(e, 'status', ''),\n"
              "              'TILEGEMM_MATH = \"garbage\"' in str(e))\n"
              "    else:\n"
              "        print('no error')\n")
    env = dict(os.environ, TILEGEMM_MATH="garbage")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.splitlines() == ["TilegemmError 1 True"] * 3, out


# The ImportError says what is wrong with the library it found, not to `pip install .`: a
# libtilegemm that needs a CUDA runtime this machine lacks, or a TILEGEMM_LIBRARY that names
# nothing.
def _import_error(library):
    import os
    import subprocess
    import sys
    env = dict(os.environ, TILEGEMM_LIBRARY=str(library))
    r = subprocess.run([sys.executable, "-c", "import tilegemm"], env=env, capture_output=True,
                       text=True)
    assert r.returncode != 0
    return r.stderr.strip().splitlines()[-1]


def test_import_error_names_a_missing_cuda_runtime(tmp_path):
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to make a library with a missing dependency")
    (tmp_path / "dep.c").write_text("int tg_dep(void) { return 1; }\n")
    (tmp_path / "lib.c").write_text("int tg_dep(void);\nint tg_version(void) { return tg_dep(); }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libcudart.so.99"),
                    "-Wl,-soname,libcudart.so.99", str(tmp_path / "dep.c")], check=True)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libtilegemm.so"),
                    str(tmp_path / "lib.c"), str(tmp_path / "libcudart.so.99")], check=True)
    (tmp_path / "libcudart.so.99").unlink()
    message = _import_error(tmp_path / "libtilegemm.so")
    assert "needs libcudart.so.99" in message and "TG_WITH_CUDA=OFF" in message, message
    assert "pip install" not in message, message


def test_import_error_names_a_missing_file(tmp_path):
    message = _import_error(tmp_path / "nothing" / "libtilegemm.so")
    assert "libtilegemm.so does not exist" in message and "pip install" not in message, message


# --- Bad input: booleans, overlap, alignment ------------------------------------------------------
@pytest.mark.parametrize("bad", ["no", "False", 0, 1, 2, 0.5, None, [True]])
def test_trans_flags_must_be_booleans(bad):
    a = rand(3, 3)
    for name in ("trans_a", "trans_b"):
        with pytest.raises(TypeError, match=f"{name} must be a bool"):
            tilegemm.sgemm(a, a, **{name: bad})


def test_trans_flags_accept_numpy_booleans():
    a, b = rand(4, 3), rand(5, 4)
    got = tilegemm.sgemm(a, b, trans_a=np.True_, trans_b=np.bool_(True))
    assert_close(got, a, b, reference(a, b, trans_a=True, trans_b=True), True, True)


def test_disjoint_blocks_of_one_array_are_not_an_overlap():
    x = rand(6, 6)
    a, b = x[:3, :3].copy(), x[3:, 3:].copy()
    r = tilegemm.sgemm(x[:3, :3], x[3:, 3:], out=x[:3, 3:])
    assert r.base is x.base or r.base is x
    assert_close(x[:3, 3:], a, b, reference(a, b))
    np.testing.assert_array_equal(x[:3, :3], a)
    # Column-major blocks interleaved with row-major ones: x.T's blocks are x's columns.
    y = rand(8, 8)
    a, b = y[4:, :4].T.copy(), y[4:, 4:].copy()
    tilegemm.sgemm(y[4:, :4].T, y[4:, 4:], out=y[:4, 4:].T)
    assert_close(y[:4, 4:].T, a, b, reference(a, b))


@pytest.mark.parametrize("out_view", [lambda x: x[:3, 2:5], lambda x: x[2:5, 1:4],
                                      lambda x: x[:3, :3].T, lambda x: x[2:5, 2:5]])
def test_shared_elements_are_an_overlap(out_view):
    x = rand(6, 6)
    with pytest.raises(ValueError, match="out overlaps a"):
        tilegemm.sgemm(x[:3, :3], rand(3, 3), out=out_view(x))


def test_overlap_check_against_brute_force():
    """Random views of one buffer: refused exactly when some element address is shared."""
    local = np.random.default_rng(5)
    buf = np.zeros(400, np.float32)
    for _ in range(300):
        views = []
        for _ in range(2):
            r, c = local.integers(1, 5, size=2)
            ld = int(local.integers(max(r, c), 12))
            start = int(local.integers(0, 400 - ld * max(r, c)))
            v = np.lib.stride_tricks.as_strided(buf[start:], shape=(r, c), strides=(4 * ld, 4))
            views.append(v.T if local.integers(2) else v)
        a, out = views
        b = np.ones((a.shape[1], out.shape[1]), np.float32)
        if a.shape[0] != out.shape[0]:
            continue

        def cells(v):
            return {v.__array_interface__["data"][0] + i * v.strides[0] + j * v.strides[1]
                    for i in range(v.shape[0]) for j in range(v.shape[1])}
        if cells(a) & cells(out):
            with pytest.raises(ValueError, match="out overlaps a"):
                tilegemm.sgemm(a, b, out=out)
        else:
            tilegemm.sgemm(a, b, out=out)


def _misaligned(rows, cols):
    raw = np.zeros(4 * rows * cols + 4, np.uint8)
    return raw[1:1 + 4 * rows * cols].view(np.float32).reshape(rows, cols)


def test_misaligned_views_are_refused():
    bad, good = _misaligned(3, 3), rand(3, 3)
    assert bad.__array_interface__["data"][0] % 4
    for args, name in (((bad, good), "a"), ((good, bad), "b")):
        with pytest.raises(ValueError, match=f"{name} starts at address .* misaligned"):
            tilegemm.sgemm(*args)
    with pytest.raises(ValueError, match="out starts at address"):
        tilegemm.sgemm(good, good, out=_misaligned(3, 3))
    with pytest.raises(ValueError, match="c starts at address"):
        tilegemm.sgemm(good, good, _misaligned(3, 3), beta=1.0)
