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
mixed devices, a read-only or overlapping out; these never reach the library.  A failure inside
the library raises TilegemmError(status, message, arg) with its message.
"""

import contextlib
import ctypes

from ._native import (TG_NO_TRANS, TG_ROW_MAJOR, TG_TRANS, TilegemmError, current_device,
                      handle, library_path, tg_backend_available, tg_sgemm, tg_version)

__all__ = ["matmul", "sgemm", "TilegemmError", "version", "backend_available", "library_path"]
__version__ = "0.1.0"

_LEGACY_DEFAULT_STREAM = 0  # cudaStreamLegacy as tg_set_stream takes it: NULL
_PER_THREAD_STREAM = 2      # cudaStreamPerThread


class _UnknownDevice:
    """The device of a GPU operand that could not be determined (see _pointer_device)."""

    def __repr__(self):
        return "?"


_UNKNOWN = _UnknownDevice()
_importable = {}


def _framework(name):
    """The module `name` ("cupy" or "torch") if it can be imported and sees a GPU, else None."""
    if name not in _importable:
        mod = None
        try:
            if name == "cupy":
                import cupy as mod
                if mod.cuda.runtime.getDeviceCount() == 0:
                    mod = None
            else:
                import torch as mod
                if not mod.cuda.is_available():
                    mod = None
        except Exception:  # noqa: BLE001 - not installed, or no driver / GPU
            mod = None
        _importable[name] = mod
    return _importable[name]


def version():
    """The version of the loaded libtilegemm, e.g. "0.1.0"."""
    return tg_version().decode()


def backend_available(name):
    """True if the backend ("cpu" or "cuda") can run in this process."""
    codes = {"auto": 0, "cpu": 1, "cuda": 2}
    if name not in codes:
        raise ValueError(f"backend must be one of {sorted(codes)}, got {name!r}")
    return bool(tg_backend_available(codes[name]))


class _Operand:
    """What the binding needs from one matrix, whatever library it comes from."""

    __slots__ = ("obj", "name", "kind", "ptr", "shape", "strides", "readonly", "device",
                 "stream", "keepalive")

    def __init__(self, obj, name, kind, ptr, shape, strides, readonly, device, stream=None,
                 keepalive=None):
        self.obj, self.name, self.kind = obj, name, kind
        self.ptr, self.shape, self.strides = int(ptr or 0), tuple(shape), tuple(strides)
        self.readonly, self.device, self.stream = readonly, device, stream
        self.keepalive = keepalive

    def where(self):
        return "host" if self.device is None else f"cuda:{self.device!r}"

    def span(self):
        """[first, last) bytes the matrix touches."""
        r, c = self.shape
        if r == 0 or c == 0:
            return (self.ptr, self.ptr)
        return (self.ptr, self.ptr + 4 * ((r - 1) * self.strides[0] + (c - 1) * self.strides[1] + 1))


def _check_2d(shape, name):
    if len(shape) != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got {len(shape)}-D with shape "
                         f"{tuple(shape)}")


def _element_strides(byte_strides, name):
    if any(s % 4 for s in byte_strides):
        raise ValueError(f"{name} has strides {tuple(byte_strides)} bytes, not a multiple of "
                         f"the float32 size: pass a contiguous copy")
    return tuple(s // 4 for s in byte_strides)


def _c_strides(shape):
    return (shape[1], 1)


def _from_numpy(x, name):
    import numpy as np
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array; tilegemm would ignore its mask: pass "
                        f"{name}.filled(value) or {name}.data explicitly")
    if x.dtype != np.float32:
        raise TypeError(f"{name} has dtype {x.dtype}; tilegemm computes in float32 only "
                        f"(convert explicitly, e.g. {name}.astype(numpy.float32))")
    _check_2d(x.shape, name)
    return _Operand(x, name, "numpy", x.__array_interface__["data"][0], x.shape,
                    _element_strides(x.strides, name), not x.flags.writeable, None)


def _from_torch(x, name):
    import torch
    if x.dtype != torch.float32:
        raise TypeError(f"{name} has dtype {x.dtype}; tilegemm computes in float32 only "
                        f"(convert explicitly, e.g. {name}.float())")
    if x.layout != torch.strided:
        raise TypeError(f"{name} has layout {x.layout}; only strided (dense) tensors are supported")
    _check_2d(x.shape, name)
    if x.is_cuda:
        device = x.device.index if x.device.index is not None else torch.cuda.current_device()
        stream = torch.cuda.current_stream(x.device).cuda_stream
        return _Operand(x, name, "torch", x.data_ptr(), x.shape, x.stride(), False, device,
                        stream)
    if x.device.type != "cpu":
        raise ValueError(f"{name} is on device {x.device}; tilegemm takes CPU or CUDA tensors")
    return _Operand(x, name, "torch", x.data_ptr(), x.shape, x.stride(), False, None)


def _from_cai(x, name):
    cai = x.__cuda_array_interface__
    typestr = cai.get("typestr")
    if typestr not in ("<f4", "=f4", "|f4"):
        raise TypeError(f"{name} has dtype {cai.get('descr', typestr)} ({typestr}); tilegemm "
                        f"computes in float32 only")
    shape = tuple(cai["shape"])
    _check_2d(shape, name)
    ptr, readonly = cai["data"]
    strides = cai.get("strides")
    strides = _c_strides(shape) if strides is None else _element_strides(strides, name)
    module = type(x).__module__.split(".")[0]
    if module == "cupy":
        import cupy
        with x.device:  # CuPy keeps a current stream per device
            stream = cupy.cuda.get_current_stream().ptr
        return _Operand(x, name, "cupy", ptr, shape, strides, bool(readonly), x.device.id,
                        stream)
    # The interface's stream: None = no ordering needed (left out of the ordering below),
    # 1 = legacy default, 2 = per-thread default, anything else a cudaStream_t.
    stream = cai.get("stream")
    if stream == 1:
        stream = _LEGACY_DEFAULT_STREAM
    return _Operand(x, name, "cai", ptr, shape, strides, bool(readonly), _pointer_device(ptr),
                    stream)


def _pointer_device(ptr):
    """The GPU that device pointer `ptr` belongs to.  The interface does not say and pure Python
    cannot ask the runtime, so CuPy is asked when it can be imported; otherwise the device is
    unknown and taken to be the current one (see _resolve_devices)."""
    cupy = _framework("cupy") if ptr else None
    if cupy is not None:
        try:
            attr = cupy.cuda.runtime.pointerGetAttributes(ptr)
            if attr.type in (2, 3):  # cudaMemoryTypeDevice, cudaMemoryTypeManaged
                return int(attr.device)
        except Exception:  # noqa: BLE001 - not a pointer CUDA knows: fall through
            pass
    return _UNKNOWN


# --- DLPack, for GPU arrays that speak neither of the above ------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_kDLCPU, _kDLCUDA, _kDLCUDAManaged = 1, 2, 13
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _from_dlpack(x, name):
    device_type, device_id = x.__dlpack_device__()
    if device_type == _kDLCPU:
        import numpy as np
        return _from_numpy(np.from_dlpack(x), name)
    if device_type not in (_kDLCUDA, _kDLCUDAManaged):
        raise ValueError(f"{name} lives on DLPack device type {device_type}; tilegemm takes "
                         f"host or CUDA memory")
    # The producer makes the data ready on the legacy default stream, which the call then uses.
    capsule = x.__dlpack__(stream=1)
    # The capsule keeps its producer-side destructor: the tensor is only borrowed.
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (2, 32, 1):
        raise TypeError(f"{name} has DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, "
                        f"{t.dtype.lanes} lanes); tilegemm computes in float32 only")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    _check_2d(shape, name)
    strides = _c_strides(shape) if not t.strides else (t.strides[0], t.strides[1])
    return _Operand(x, name, "dlpack", (t.data or 0) + t.byte_offset, shape, strides, False,
                    t.device.device_id, _LEGACY_DEFAULT_STREAM, keepalive=capsule)


def _describe(x, name):
    module = type(x).__module__.split(".")[0]
    if module == "numpy":
        import numpy as np
        if isinstance(x, np.ndarray):
            return _from_numpy(x, name)
    if module == "torch":
        return _from_torch(x, name)
    if hasattr(x, "__cuda_array_interface__"):
        return _from_cai(x, name)
    if hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        return _from_dlpack(x, name)
    raise TypeError(f"{name} must be a NumPy array, a CuPy array, a PyTorch tensor or an object "
                    f"with __cuda_array_interface__ / __dlpack__; got {type(x).__name__}")


def _storage(op):
    """(transposed, ld): op's matrix is a row-major matrix with leading dimension ld, or the
    transpose of one.  Raises ValueError for anything else."""
    r, c = op.shape
    s0, s1 = op.strides
    if r == 0 or c == 0:
        return False, max(c, 1)
    if (s1 == 1 or c == 1) and (r == 1 or s0 >= max(c, 1)):
        return False, (s0 if r > 1 else max(c, 1))
    if (s0 == 1 or r == 1) and (c == 1 or s1 >= max(r, 1)):
        return True, (s1 if c > 1 else max(r, 1))
    raise ValueError(
        f"{op.name} (shape {op.shape}, element strides {op.strides}) is neither row- nor "
        f"column-major with a positive leading dimension (negative strides, a step along the "
        f"inner axis, or broadcasting): pass a contiguous copy, e.g. numpy.ascontiguousarray "
        f"({op.name})")


def _overlap(x, y):
    (a0, a1), (b0, b1) = x.span(), y.span()
    return a0 < b1 and b0 < a1


def _empty(like, shape):
    """A C-ordered float32 matrix from the library, and on the device, of `like`."""
    if like.kind == "numpy":
        import numpy as np
        return np.empty(shape, dtype=np.float32)
    if like.kind == "torch":
        import torch
        return torch.empty(shape, dtype=torch.float32, device=like.obj.device)
    if like.kind == "cupy":
        import cupy
        with cupy.cuda.Device(like.device):
            return cupy.empty(shape, dtype=cupy.float32)
    raise ValueError(f"{like.name} is a {type(like.obj).__name__}; for arrays that only offer "
                     f"__cuda_array_interface__ or DLPack, pass out= (a float32 matrix of "
                     f"shape {shape})")


def _copy_into(out, src):
    """out[...] = src, done by out's library (on its current stream)."""
    if out.kind == "numpy":
        import numpy as np
        np.copyto(out.obj, np.asarray(src.obj))
    elif out.kind == "torch":
        import torch
        out.obj.copy_(torch.as_tensor(src.obj, device=out.obj.device))
    elif out.kind == "cupy":
        import cupy
        out.obj[...] = cupy.asarray(src.obj)
    else:
        raise ValueError(f"cannot copy c into out of type {type(out.obj).__name__}: pass the same "
                         f"array as c and out to update it in place")


def _resolve_devices(operands):
    """The one GPU all operands live on (None: all on the host).  ValueError, before any
    library call, for host and GPU operands together, two GPUs, or a GPU operand whose device
    cannot be told next to one whose device is known."""
    if len({x.device is None for x in operands}) > 1:
        _mixed(operands, "put them all on the host or all on the same GPU")
    if operands[0].device is None:
        return None
    unknown = [x for x in operands if x.device is _UNKNOWN]
    if unknown:
        # __cuda_array_interface__ without CuPy: such arrays must be on the current device.
        cur = current_device(frameworks=True)
        if cur is not None:
            for x in unknown:
                x.device = cur
    devices = {x.device for x in operands}
    if len(devices) > 1:
        if any(x.device is _UNKNOWN for x in operands):
            _mixed(operands, "the GPU of an array that only offers __cuda_array_interface__ "
                             "cannot be told without CuPy and is taken to be the current one, "
                             "which is unknown here: install CuPy, or pass CuPy / PyTorch "
                             "arrays")
        _mixed(operands, "put them all on the same GPU")
    return devices.pop()


def _mixed(operands, advice):
    raise ValueError("operands live in different places (" +
                     ", ".join(f"{x.name} on {x.where()}" for x in operands) + "): " + advice)


def _kinds(operands):
    return {x.kind for x in operands}


@contextlib.contextmanager
def _on_device(device, kinds):
    """Makes `device` current for the call (and restores the previous one after) through the
    libraries that own the operands, or any of CuPy / PyTorch that can be imported.  Without
    either, the device cannot be switched: it must already be current."""
    if device is _UNKNOWN:
        yield
        return
    with contextlib.ExitStack() as stack:
        entered = False
        if "torch" in kinds:
            import torch
            stack.enter_context(torch.cuda.device(device))
            entered = True
        if "cupy" in kinds:
            import cupy
            stack.enter_context(cupy.cuda.Device(device))
            entered = True
        if not entered:
            for name in ("cupy", "torch"):
                mod = _framework(name)
                if mod is not None:
                    stack.enter_context(mod.cuda.Device(device) if name == "cupy"
                                        else mod.cuda.device(device))
                    entered = True
                    break
        if not entered:
            cur = current_device()
            if cur is not None and cur != device:
                raise ValueError(f"the operands are on cuda:{device} but the current device is "
                                 f"cuda:{cur}, and without CuPy or PyTorch tilegemm cannot "
                                 f"switch devices: make cuda:{device} current first")
        yield


class _Ordering:
    """wait(waiter, waitee): work queued later on stream `waiter` waits for the work queued so
    far on stream `waitee` (raw cudaStream_t values; 0 = legacy default, 2 = per-thread), through
    an event recorded by PyTorch or CuPy.  Without either the host waits for `waitee` through
    the library (tg_synchronize), which orders everything after it too."""

    def __init__(self, device, kinds, h):
        self.device, self.h = device, h  # device: an int, or None for the current one
        self.synced = set()
        self.mod = None
        for name in [x for x in ("torch", "cupy") if x in kinds] + ["cupy", "torch"]:
            self.mod = _framework(name)
            if self.mod is not None:
                break

    def _stream(self, ptr):
        mod = self.mod
        if mod.__name__ == "torch":
            if ptr == _LEGACY_DEFAULT_STREAM:
                return mod.cuda.default_stream(self.device)
            return mod.cuda.ExternalStream(ptr, device=self.device)
        if ptr == _LEGACY_DEFAULT_STREAM:
            return mod.cuda.Stream.null
        if ptr == _PER_THREAD_STREAM and hasattr(mod.cuda.Stream, "ptds"):
            return mod.cuda.Stream.ptds
        try:
            return mod.cuda.ExternalStream(ptr, -1 if self.device is None else self.device)
        except TypeError:  # CuPy < 10: no device_id argument
            return mod.cuda.ExternalStream(ptr)

    def wait(self, waiter, waitee):
        if waiter == waitee:
            return
        if self.mod is None:
            if waitee not in self.synced:  # once per stream and call is enough
                self.h.set_stream(waitee)
                self.h.synchronize()
                self.synced.add(waitee)
            return
        w, e = self._stream(waiter), self._stream(waitee)
        if self.mod.__name__ == "torch":
            w.wait_stream(e)
        else:
            ev = self.mod.cuda.Event(disable_timing=True)
            ev.record(e)
            w.wait_event(ev)


def _real(value, name):
    """alpha and beta are real numbers: int, float, or a real NumPy scalar.  Strings, complex
    numbers and bools (True is almost always a mistake for a scale factor) are refused."""
    import numbers
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} "
                        f"({type(value).__name__})")
    return float(value)


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

    alpha, beta: real numbers (int, float, real NumPy scalars); str, complex and bool are refused.
    math: None keeps the handle's mode (TILEGEMM_MATH, default "fp32"); "fp32" (FP32 accuracy,
         the library picks FFMA or 3xTF32), "strict" (FP32 FMA only) or "tf32" (faster, TF32
         accuracy) sets it for this thread's handle from this call on.
    """
    if math is not None and math not in ("fp32", "strict", "tf32"):
        raise ValueError(f"math = {math!r} is not one of 'fp32', 'strict', 'tf32'")
    alpha, beta = _real(alpha, "alpha"), _real(beta, "beta")
    A = _describe(a, "a")
    B = _describe(b, "b")
    C = _describe(c, "c") if c is not None else None
    O = _describe(out, "out") if out is not None else None
    operands = [x for x in (A, B, C, O) if x is not None]
    device = _resolve_devices(operands)

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
    for x in (A, B, C, O):
        if x is not None:
            _storage(x)  # stride errors before anything is allocated or copied
    if beta == 0.0:
        C = None  # never read: not copied into out, and out's old contents are never read
    copy_c = C is not None and not (O is not None and C.ptr == O.ptr and C.strides == O.strides)
    if copy_c and O is not None and O.kind not in ("numpy", "torch", "cupy"):
        raise ValueError(f"cannot copy c into out of type {type(O.obj).__name__}: pass the same "
                         f"array as c and out to update it in place")

    if device is None:
        return _run(A, B, C, O, out, copy_c, m, n, k, alpha, beta, trans_a, trans_b, None,
                    handle(), math)
    kinds = _kinds(operands)
    with _on_device(device, kinds):
        h = handle(device if device is not _UNKNOWN else -1)
        return _run(A, B, C, O, out, copy_c, m, n, k, alpha, beta, trans_a, trans_b, kinds, h,
                    math)


def _run(A, B, C, O, out, copy_c, m, n, k, alpha, beta, trans_a, trans_b, kinds, h, math):
    """The rest of sgemm, with the operands' device current (GPU) and `h` its handle."""
    if math is not None:
        h.set_math(math)
    if O is None:
        out = _empty(A, (m, n))
        O = _describe(out, "out")
    for x in (A, B):
        if _overlap(O, x):
            raise ValueError(f"out overlaps {x.name}: the library would read {x.name} while it "
                             f"writes out")
    if copy_c and _overlap(C, O):
        raise ValueError("c and out overlap without being the same matrix")

    ta, lda = _storage(A)
    tb, ldb = _storage(B)
    tc, ldc = _storage(O)
    op_a, op_b = ta != bool(trans_a), tb != bool(trans_b)
    T = (TG_NO_TRANS, TG_TRANS)

    if kinds is None:  # host memory: the library's own stream, the call returns when done
        if copy_c:
            _copy_into(O, C)
        status = _call(h, op_a, op_b, tc, m, n, k, alpha, A, lda, B, ldb, beta, O, ldc, T)
        h.check(status)
        return out

    # The call's stream: out's producer's (out was made by a's library when not given).
    inputs = [x for x in (A, B, C) if x is not None]
    stream = O.stream
    if stream is None:  # out's interface names no stream: the first input that does
        stream = next((x.stream for x in inputs if x.stream is not None),
                      _LEGACY_DEFAULT_STREAM)
    others = []
    for x in inputs + [O]:
        if x.stream is not None and x.stream != stream and x.stream not in others:
            others.append(x.stream)
    order = _Ordering(O.device if isinstance(O.device, int) else None, kinds | {O.kind}, h) \
        if others else None
    try:
        for s in others:
            order.wait(stream, s)
        if copy_c:
            _copy_into(O, C)  # on out's library's current stream, i.e. `stream`
        h.set_stream(stream)
        status = _call(h, op_a, op_b, tc, m, n, k, alpha, A, lda, B, ldb, beta, O, ldc, T)
        h.check(status)
        for s in others:  # their later work (reusing freed inputs, writing out) follows the call
            order.wait(s, stream)
    finally:
        # Never leave a caller's stream on the handle: it may be destroyed before the next call.
        h.park()
    return out


def _call(h, op_a, op_b, tc, m, n, k, alpha, A, lda, B, ldb, beta, O, ldc, T):
    if not tc:
        return tg_sgemm(h.ptr, TG_ROW_MAJOR, T[op_a], T[op_b], m, n, k, alpha, A.ptr, lda,
                        B.ptr, ldb, beta, O.ptr, ldc)
    # out is stored column-major: write out^T = op(b)^T @ op(a)^T as a row-major matrix.
    return tg_sgemm(h.ptr, TG_ROW_MAJOR, T[not op_b], T[not op_a], n, m, k, alpha, B.ptr, ldb,
                    A.ptr, lda, beta, O.ptr, ldc)


def matmul(a, b):
    """a @ b in float32 (2-D only): sgemm(a, b)."""
    return sgemm(a, b)
