"""tilegemm: single-precision GEMM, C = alpha * op(A) @ op(B) + beta * C, over libtilegemm.

    import numpy as np, tilegemm
    c = tilegemm.matmul(a, b)                      # a @ b, float32
    tilegemm.sgemm(a, b, c, alpha=2.0, beta=1.0, trans_a=True, out=c)   # in place

Operands are 2-D float32 matrices:
  * NumPy arrays (host memory): C- or Fortran-ordered, or any view whose elements along one
    axis are adjacent (a slice `x[:, 2:7]` of a C-ordered array has a leading dimension larger
    than its column count, and is used in place).  Views with negative strides, a step along
    the inner axis or broadcast (zero) strides are rejected with ValueError: pass
    np.ascontiguousarray(x).  Nothing is ever copied or converted silently.
  * GPU arrays: CuPy arrays and PyTorch CUDA tensors (read directly: pointer, shape, strides),
    and any other object with __cuda_array_interface__ or a CUDA __dlpack__; used in place, no
    copy, with the same stride rules.  The call runs on the operands' GPU, made current for the
    call (through torch.cuda.device / cupy.cuda.Device; the previous device is restored), with
    a library handle per (thread, GPU).  It is queued on the stream of the library that owns
    `out` (of `a` when out is not given): torch.cuda.current_stream(), cupy's current stream,
    the interface's "stream" entry, or the legacy default stream for DLPack, and returns
    without waiting, as CuPy and PyTorch operations do.  Operands from other libraries or
    streams are ordered with events: that stream first waits for theirs, and theirs wait for
    the call afterwards.  PyTorch CPU tensors are host memory and work like NumPy arrays.
All operands of one call must live on the same side (host, or one GPU); the result is allocated
by the library of `a` (numpy.empty, cupy.empty, torch.empty) unless out= is given.  The GPU of
an array that only offers __cuda_array_interface__ is asked of CuPy; without CuPy it is taken
to be the current device.

Errors: TypeError for a wrong type or dtype, ValueError for wrong dimensions, shapes, strides,
mixed devices, a misaligned (not float32-aligned) pointer, a read-only out or one that shares
elements with a or b, an alpha or beta that float32 cannot carry (it would become inf or 0), or
a math= name that is not a mode; these never reach the library.  A failure inside the library
raises TilegemmError(status, message, arg) with its message; so does an invalid environment
variable (TILEGEMM_MATH, TILEGEMM_BACKEND, ...), which the library refuses at tg_create, on
every call.

Math modes ("fp32", the default; "strict"; "tf32") are scoped: math= for one call,
`with tilegemm.math("tf32"):` for a block, TILEGEMM_MATH for the process.

Autotuning is opt-in: tilegemm.autotune() (or `with tilegemm.autotune():`, or
TILEGEMM_AUTOTUNE=1) times the planner's best candidates at the first call of each shape with
GPU operands and keeps the fastest in a cache on disk; tilegemm.autotune_status() reports on it.
"""

import numbers
from dataclasses import dataclass
from typing import Optional

from . import _autotune, _math, _native
from ._autotune import autotune
from ._autotune import status as autotune_status
from ._devices import UNKNOWN, call_stream, on_device, resolve_devices
from ._math import math
from ._native import (TG_NO_TRANS, TG_ROW_MAJOR, TG_TRANS, TilegemmError, current_device,
                      handle, library_path, tg_backend_available, tg_version)
from ._operands import COPYABLE_KINDS, Operand, cannot_copy, copy_into, describe, empty, overlap

__all__ = ["matmul", "sgemm", "math", "autotune", "autotune_status", "TilegemmError", "version", "backend_available",
           "library_path"]
__version__ = "0.1.0"


def version():
    """The version of the loaded libtilegemm, e.g. "0.1.0"."""
    return tg_version().decode()


def backend_available(name):
    """True if the backend ("cpu" or "cuda") can run in this process."""
    codes = {"auto": 0, "cpu": 1, "cuda": 2}
    if name not in codes:
        raise ValueError(f"backend must be one of {sorted(codes)}, got {name!r}")
    return bool(tg_backend_available(codes[name]))


def _real(value, name):
    """alpha and beta are real numbers: int, float, or a real NumPy scalar.  Strings, complex
    numbers and bools (True is almost always a mistake for a scale factor) are refused
    (TypeError), and so are values float32 cannot carry (ValueError): the library computes
    in float32, and a finite value that would become inf, or a nonzero one that would become
    0, changes the result silently."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} "
                        f"({type(value).__name__})")
    try:
        value = float(value)
    except OverflowError:  # an int beyond float64's range
        raise ValueError(f"{name} = {value!r} is beyond float32's range (largest finite value "
                         f"3.4028235e+38)") from None
    return _native.float32_scalar(value, name)


def _flag(value, name):
    """trans_a and trans_b are booleans: bool or numpy.bool_.  Anything else ("no", 0, 2) is
    refused rather than judged by its truthiness."""
    if value is True or value is False:
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")


@dataclass
class _Product:
    """One checked call: out = alpha * op(a) @ op(b) + beta * c, op(a) being m x k and op(b)
    k x n.  c is None when beta == 0 (never read); out is None until the result is allocated;
    copy_c: c is another matrix than out, copied into it before the call."""
    a: Operand
    b: Operand
    c: Optional[Operand]
    out: Optional[Operand]
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    trans_a: bool
    trans_b: bool
    copy_c: bool


def sgemm(a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, out=None,
          math=None):
    """Returns alpha * op(a) @ op(b) + beta * c, op(x) being x.T when trans_x is true.

    c:   the matrix beta multiplies (m x n); never read when beta == 0, so NaN in it does not
         propagate.  Required when beta != 0.  Not modified unless it is also `out`.
    out: where to write the result (m x n float32, writeable, row- or column-major); when
         beta != 0 and c is a different array, c is copied into it first.  Default: a new
         C-ordered array of the library of a.  `out` may be `c` (in-place update) but must not
         overlap a or b.

    GPU operands: the call runs on their GPU (made current for the call) and is queued on the
    stream of the library that owns `out` (of `a` when out is not given): its current stream
    (PyTorch, CuPy), the interface's "stream" entry, or the legacy default stream (DLPack).
    Operands from other libraries or streams are ordered with events: that stream first waits
    for theirs, and theirs wait for the call afterwards.

    alpha, beta: real numbers (int, float, real NumPy scalars); str, complex and bool are refused
         (TypeError).  The library takes them as float32: a finite value beyond float32's range
         (|x| > 3.4028235e+38) or a nonzero one that rounds to 0 (|x| <= 2**-150, about 7.0e-46) is a ValueError
         naming the argument, never a silent inf or 0.  inf and NaN are passed on.
    trans_a, trans_b: bool (or numpy.bool_); anything else is a TypeError.
    math: "fp32" (FP32 accuracy, the library picks FFMA or 3xTF32), "strict" (FP32 FMA only)
         or "tf32" (faster, TF32 accuracy), for this call only.  None: the mode of the
         enclosing `with tilegemm.math(...)` block, else TILEGEMM_MATH, else "fp32".
    """
    math = _math.resolve(math)
    alpha, beta = _real(alpha, "alpha"), _real(beta, "beta")
    trans_a, trans_b = _flag(trans_a, "trans_a"), _flag(trans_b, "trans_b")
    A = describe(a, "a")
    B = describe(b, "b")
    C = describe(c, "c") if c is not None else None
    O = describe(out, "out") if out is not None else None
    operands = [x for x in (A, B, C, O) if x is not None]
    device = resolve_devices(operands)

    m, k = (A.shape[1], A.shape[0]) if trans_a else A.shape
    kb, n = (B.shape[1], B.shape[0]) if trans_b else B.shape
    if k != kb:
        raise ValueError(f"shapes do not match: op(a) is {m}x{k} (a.shape = {A.shape}"
                         f"{', transposed' if trans_a else ''}) but op(b) is {kb}x{n} (b.shape = "
                         f"{B.shape}{', transposed' if trans_b else ''})")
    for x in (C, O):
        if x is not None and x.shape != (m, n):
            raise ValueError(f"{x.name}.shape = {x.shape} but the product op(a) @ op(b) is "
                             f"{m}x{n}")
    if C is None and beta != 0.0:
        raise ValueError(f"beta = {beta} needs c (the matrix it multiplies)")
    if O is not None and O.readonly:
        raise ValueError("out is read-only")
    for x in operands:
        _ = x.layout  # stride errors before anything is allocated or copied
    if beta == 0.0:
        C = None  # never read: not copied into out, and out's old contents are never read
    copy_c = C is not None and not (O is not None and C.ptr == O.ptr and C.strides == O.strides)
    if copy_c and O is not None and O.kind not in COPYABLE_KINDS:
        raise cannot_copy(O)

    p = _Product(A, B, C, O, m, n, k, alpha, beta, trans_a, trans_b, copy_c)
    if device is None:
        _run(p, handle(), None, math)
    else:
        kinds = {x.kind for x in operands}
        with on_device(device, kinds):
            _run(p, handle(device if device is not UNKNOWN else -1), kinds, math)
    return out if out is not None else p.out.obj


def _run(p, h, kinds, math):
    """The rest of sgemm, with the operands' device current (GPU) and `h` its handle; kinds:
    the libraries of the GPU operands, None for host memory; math: the tg_math value."""
    h.use_math(math)
    h.use_autotune(_autotune.enabled())
    if p.out is None:
        p.out = describe(empty(p.a, (p.m, p.n)), "out")
    for x in (p.a, p.b):
        if overlap(p.out, x):
            raise ValueError(f"out overlaps {x.name}: the library would read {x.name} while it "
                             f"writes out")
    if p.copy_c and overlap(p.c, p.out):
        raise ValueError("c and out overlap without being the same matrix")

    if kinds is None:  # host memory: the library's own stream, the call returns when done
        if p.copy_c:
            copy_into(p.out, p.c)
        h.check(_call(h, p))
        return
    inputs = [x for x in (p.a, p.b, p.c) if x is not None]
    with call_stream(h, p.out, inputs, kinds) as stream:
        if p.copy_c:
            copy_into(p.out, p.c)  # on out's library's current stream, i.e. `stream`
        h.set_stream(stream)
        h.check(_call(h, p))


_OP = (TG_NO_TRANS, TG_TRANS)


def _call(h, p):
    """tg_sgemm for p on handle h; its status.  The library is given row-major matrices: an
    operand stored column-major is the transpose of one."""
    la, lb, lo = p.a.layout, p.b.layout, p.out.layout
    op_a, op_b = la.transposed != p.trans_a, lb.transposed != p.trans_b
    if not lo.transposed:
        return _native.tg_sgemm(h.ptr, TG_ROW_MAJOR, _OP[op_a], _OP[op_b], p.m, p.n, p.k,
                                p.alpha, p.a.ptr, la.ld, p.b.ptr, lb.ld, p.beta, p.out.ptr, lo.ld)
    # out is stored column-major: write out^T = op(b)^T @ op(a)^T as a row-major matrix.
    return _native.tg_sgemm(h.ptr, TG_ROW_MAJOR, _OP[not op_b], _OP[not op_a], p.n, p.m, p.k,
                            p.alpha, p.b.ptr, lb.ld, p.a.ptr, la.ld, p.beta, p.out.ptr, lo.ld)


def matmul(a, b):
    """a @ b in float32 (2-D only): sgemm(a, b)."""
    return sgemm(a, b)
