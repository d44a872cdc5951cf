"""Operands: what the binding needs from one matrix (the Operand record), read from NumPy arrays
and PyTorch CPU tensors (host memory), and from CuPy arrays, PyTorch CUDA tensors, any
__cuda_array_interface__ and CUDA DLPack (device memory); the library of an operand allocating
or copying into a matrix like it."""

import ctypes
import functools
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional, Tuple

from ._devices import LEGACY_DEFAULT_STREAM, pointer_device


class Layout(NamedTuple):
    """How the library takes a matrix: a row-major matrix with leading dimension ld, or the
    transpose of one (column-major storage) when transposed."""
    transposed: bool
    ld: int


@dataclass
class Operand:
    """One matrix of a call, whatever library it comes from.

    kind:    the library that made it: "numpy", "torch", "cupy", "cai" (other
             __cuda_array_interface__ arrays) or "dlpack"
    ptr:     the address of element [0, 0]; shape (rows, cols); strides in elements
    device:  None for host memory, else the GPU (an int, or devices.UNKNOWN)
    stream:  the producer's stream (a cudaStream_t as an int), None when it names none
    keepalive: what must outlive the call (a DLPack capsule)"""
    obj: Any
    name: str
    kind: str
    ptr: int
    shape: Tuple[int, int]
    strides: Tuple[int, int]
    readonly: bool
    device: Any
    stream: Optional[int] = None
    keepalive: Any = None

    def __post_init__(self):
        self.ptr = int(self.ptr or 0)
        self.shape, self.strides = tuple(self.shape), tuple(self.strides)

    def where(self):
        return "host" if self.device is None else f"cuda:{self.device!r}"

    def span(self):
        """[first, last) bytes the matrix touches."""
        r, c = self.shape
        if r == 0 or c == 0:
            return (self.ptr, self.ptr)
        s0, s1 = self.strides
        return (self.ptr, self.ptr + 4 * ((r - 1) * s0 + (c - 1) * s1 + 1))

    @functools.cached_property
    def layout(self):
        """Its Layout.  Raises ValueError for a matrix that is neither row- nor column-major
        with a positive leading dimension."""
        r, c = self.shape
        s0, s1 = self.strides
        if r == 0 or c == 0:
            return Layout(False, max(c, 1))
        if (s1 == 1 or c == 1) and (r == 1 or s0 >= max(c, 1)):
            return Layout(False, s0 if r > 1 else max(c, 1))
        if (s0 == 1 or r == 1) and (c == 1 or s1 >= max(r, 1)):
            return Layout(True, s1 if c > 1 else max(r, 1))
        raise ValueError(
            f"{self.name} (shape {self.shape}, element strides {self.strides}) is neither row- "
            f"nor column-major with a positive leading dimension (negative strides, a step "
            f"along the inner axis, or broadcasting): pass a contiguous copy, e.g. "
            f"numpy.ascontiguousarray ({self.name})")


def overlap(x, y):
    """True when matrices x and y share an element.  Matrices whose byte ranges meet are looked
    at line by line: x's stored lines (rows, or columns when column-major) against y's, so that
    blocks interleaved in one array (x[:3, :3] and x[:3, 3:]) are told apart exactly."""
    (a0, a1), (b0, b1) = x.span(), y.span()
    if not (a0 < b1 and b0 < a1):
        return False
    import numpy as np
    lx, nx, ldx = _lines(x)
    ly, ny, ldy = _lines(y)
    d = (y.ptr - x.ptr) // 4  # both are float32-aligned (describe): a whole number of elements
    # Line i of x holds elements [i ldx, i ldx + nx); line s of y [d + s ldy, d + s ldy + ny).
    # As ldy >= ny, y's lines are disjoint and increasing: the first one ending after line i
    # starts, s = floor((i ldx - d - ny) / ldy) + 1, is the only one that can meet it.
    start = np.arange(lx, dtype=np.int64) * ldx
    s = np.maximum((start - d - ny) // ldy + 1, 0)
    return bool(np.any((s < ly) & (d + s * ldy < start + nx)))


def _lines(x):
    """(lines, elements per line, ld) of a non-empty matrix as the library stores it."""
    r, c = x.shape
    return (c, r, x.layout.ld) if x.layout.transposed else (r, c, x.layout.ld)


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
    return Operand(x, name, "numpy", x.__array_interface__["data"][0], x.shape,
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
        return Operand(x, name, "torch", x.data_ptr(), x.shape, x.stride(), False, device,
                       stream)
    if x.device.type != "cpu":
        raise ValueError(f"{name} is on device {x.device}; tilegemm takes CPU or CUDA tensors")
    return Operand(x, name, "torch", x.data_ptr(), x.shape, x.stride(), False, None)


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
        return Operand(x, name, "cupy", ptr, shape, strides, bool(readonly), x.device.id,
                       stream)
    # The interface's stream: None = no ordering needed (left out of the ordering),
    # 1 = legacy default, 2 = per-thread default, anything else a cudaStream_t.
    stream = cai.get("stream")
    if stream == 1:
        stream = LEGACY_DEFAULT_STREAM
    return Operand(x, name, "cai", ptr, shape, strides, bool(readonly), pointer_device(ptr),
                   stream)


# --- DLPack, for GPU arrays that speak neither of the above ------------------------------------
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_kDLCPU, _kDLCUDA, _kDLCUDAManaged = 1, 2, 13
capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


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
    t = DLTensor.from_address(capsule_pointer(capsule, b"dltensor"))
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (2, 32, 1):
        raise TypeError(f"{name} has DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, "
                        f"{t.dtype.lanes} lanes); tilegemm computes in float32 only")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    _check_2d(shape, name)
    strides = _c_strides(shape) if not t.strides else (t.strides[0], t.strides[1])
    return Operand(x, name, "dlpack", (t.data or 0) + t.byte_offset, shape, strides, False,
                   t.device.device_id, LEGACY_DEFAULT_STREAM, keepalive=capsule)


def describe(x, name):
    """The Operand of matrix `x`, called `name` in error messages.  TypeError for a wrong type
    or dtype, ValueError for a wrong number of dimensions or strides, or a data pointer that
    is not float32-aligned."""
    op = _describe(x, name)
    if op.ptr % 4 and op.shape[0] and op.shape[1]:
        raise ValueError(f"{name} starts at address {op.ptr:#x}, not a multiple of 4 bytes (a "
                         f"misaligned float32 view): pass an aligned copy, e.g. "
                         f"numpy.array({name})")
    return op


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


# The kinds copy_into can copy c into; for the others, c must be out itself.
COPYABLE_KINDS = ("numpy", "torch", "cupy")


def empty(like, shape):
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


def copy_into(out, src):
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
        raise cannot_copy(out)


def cannot_copy(out):
    return ValueError(f"cannot copy c into out of type {type(out.obj).__name__}: pass the same "
                      f"array as c and out to update it in place")
