"""Loading libtilegemm and declaring the C functions the binding uses (ctypes).

The library is looked for, in order:
  1. the file named by the TILEGEMM_LIBRARY environment variable;
  2. the copy bundled inside this package by `pip install .`;
  3. ctypes.util.find_library("tilegemm"), i.e. the system's library path.
"""

import ctypes
import ctypes.util
import glob
import math
import os
import re
import threading

TG_SUCCESS = 0
TG_ERROR_INVALID_ARGUMENT = 1
TG_ROW_MAJOR = 101
TG_COL_MAJOR = 102
TG_NO_TRANS = 111
TG_TRANS = 112
TG_BACKEND_AUTO = 0
TG_BACKEND_CPU = 1
TG_BACKEND_CUDA = 2

# Positions of tg_sgemm's arguments (CBLAS numbering), for the error's `arg`.
ARG_NAMES = {1: "layout", 2: "transa", 3: "transb", 4: "m", 5: "n", 6: "k", 7: "alpha",
             8: "A", 9: "lda", 10: "B", 11: "ldb", 12: "beta", 13: "C", 14: "ldc"}


def _candidates():
    env = os.environ.get("TILEGEMM_LIBRARY")
    if env:
        yield env, "TILEGEMM_LIBRARY"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "libtilegemm.so*"))) + sorted(
            glob.glob(os.path.join(here, "libtilegemm*.dylib"))):
        yield path, "bundled"
    found = ctypes.util.find_library("tilegemm")
    if found:
        yield found, "find_library"


def _advice(path, exc):
    """What to do about a libtilegemm at `path` that ctypes could not load with `exc`."""
    text = str(exc)
    if not os.path.exists(path):
        return f"{path} does not exist"
    missing = re.search(r"([\w.+-]+\.so[.\d]*): cannot open shared object file", text)
    if missing and missing.group(1) != os.path.basename(path):
        name = missing.group(1)
        advice = (f"it needs {name}, which this machine's loader cannot find: install it or add "
                  f"its folder to LD_LIBRARY_PATH")
        if name.startswith(("libcudart", "libcublas")):
            advice += (", or use a libtilegemm built by this repository's CMake build, which "
                       "links the CUDA runtime in statically and runs on the CPU backend with no "
                       "CUDA library present (-DTG_WITH_CUDA=OFF builds the CPU library alone)")
        return advice
    return f"it could not be loaded ({text}): rebuild it for this machine"


def _load():
    errors = []
    for path, origin in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as exc:
            errors.append(f"{path} ({origin}): {_advice(path, exc)} [{exc}]")
    if not errors:
        raise ImportError(
            "tilegemm: no libtilegemm found (none bundled in the package, none on the system's "
            "library path): install the package with `pip install .` from the repository, "
            "which builds and bundles it, or set TILEGEMM_LIBRARY to a built libtilegemm.so "
            "(e.g. build/libtilegemm.so after scripts/build.sh)")
    raise ImportError("tilegemm: cannot load libtilegemm: " + "; ".join(errors))


lib, library_path = _load()

_h = ctypes.c_void_p
_i64 = ctypes.c_int64


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


tg_version = _declare("tg_version", ctypes.c_char_p)
tg_create = _declare("tg_create", ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
tg_destroy = _declare("tg_destroy", ctypes.c_int, _h)
tg_set_stream = _declare("tg_set_stream", ctypes.c_int, _h, ctypes.c_void_p)
tg_get_stream = _declare("tg_get_stream", ctypes.c_void_p, _h)
tg_synchronize = _declare("tg_synchronize", ctypes.c_int, _h)
tg_backend_available = _declare("tg_backend_available", ctypes.c_int, ctypes.c_int)
tg_set_backend = _declare("tg_set_backend", ctypes.c_int, _h, ctypes.c_int)
tg_status_string = _declare("tg_status_string", ctypes.c_char_p, ctypes.c_int)
tg_last_error = _declare("tg_last_error", ctypes.c_char_p, _h)
tg_last_error_arg = _declare("tg_last_error_arg", ctypes.c_int, _h)
tg_set_math = _declare("tg_set_math", ctypes.c_int, _h, ctypes.c_int)
tg_get_math = _declare("tg_get_math", ctypes.c_int, _h)
tg_math_from_name = _declare("tg_math_from_name", ctypes.c_int, ctypes.c_char_p)
tg_set_autotune = _declare("tg_set_autotune", ctypes.c_int, _h, ctypes.c_int)
tg_get_autotune = _declare("tg_get_autotune", ctypes.c_int, _h)
tg_autotune_status = _declare("tg_autotune_status", ctypes.c_char_p)
tg_sgemm = _declare("tg_sgemm", ctypes.c_int, _h, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    _i64, _i64, _i64, ctypes.c_float, ctypes.c_void_p, _i64, ctypes.c_void_p,
                    _i64, ctypes.c_float, ctypes.c_void_p, _i64)
tg_sgemm_strided_batched = _declare(
    "tg_sgemm_strided_batched", ctypes.c_int, _h, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    _i64, _i64, _i64, ctypes.c_float, ctypes.c_void_p, _i64, _i64, ctypes.c_void_p, _i64, _i64,
    ctypes.c_float, ctypes.c_void_p, _i64, _i64, _i64)


# float32 rounds a real number to inf from 2**128 * (1 - 2**-25) on (a tie there goes to the
# even 2**128), and a nonzero one to 0 up to 2**-150 (a tie there goes to the even 0).
_FLOAT32_TO_INF = 3.4028235677973366e38
_FLOAT32_TO_ZERO = 2.0 ** -150


def float32_scalar(value, name):
    """alpha or beta (a Python float), checked for the float32 the library is given: ValueError
    where that narrowing would change what the call means, a finite value beyond float32's
    range (it would become inf) or a nonzero value below half its smallest subnormal (it would
    become 0, and beta = 0 never reads C).  inf and NaN pass as they are (BLAS semantics).
    Plain comparisons, so that torch.compile traces it."""
    if abs(value) >= _FLOAT32_TO_INF and math.isfinite(value):
        raise ValueError(f"{name} = {value!r} is beyond float32's range (largest finite value "
                         f"3.4028235e+38): the library takes float32 and would get inf")
    if value != 0.0 and abs(value) <= _FLOAT32_TO_ZERO:
        raise ValueError(f"{name} = {value!r} is nonzero but rounds to 0 in float32 (smallest "
                         f"nonzero value 1.4e-45): the library takes float32 and would get 0")
    return value


class TilegemmError(RuntimeError):
    """A call into libtilegemm failed.

    status:  the tg_status value (int); status_name its name from tg_status_string
    message: the library's sentence, e.g. "lda = 3 is less than k = 5 (...)"
    arg:     the offending argument's CBLAS position (0 when not about one argument);
             arg_name its name ("lda", ...)
    """

    def __init__(self, status, message, arg=0):
        self.status = int(status)
        self.status_name = tg_status_string(self.status).decode()
        self.message = message
        self.arg = int(arg)
        self.arg_name = ARG_NAMES.get(self.arg)
        text = f"{self.status_name}: {message}" if message else self.status_name
        super().__init__(text)


def _cudart(name, restype, *argtypes):
    """A CUDA runtime function as libtilegemm itself sees it (the cudart it links, found through
    its dependencies), or None for a CPU-only build or a statically linked runtime."""
    try:
        fn = getattr(lib, name)
    except AttributeError:
        return None
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_cudaGetDevice = _cudart("cudaGetDevice", ctypes.c_int, ctypes.POINTER(ctypes.c_int))
_cudaGetLastError = _cudart("cudaGetLastError", ctypes.c_int)
_cuda_available = None


def cuda_available():
    global _cuda_available
    if _cuda_available is None:
        _cuda_available = bool(tg_backend_available(TG_BACKEND_CUDA))
    return _cuda_available


def current_device(frameworks=False):
    """The CUDA device current on this thread, or None when it cannot be told (no GPU, or no
    runtime reachable).  Asks the runtime libtilegemm uses; failing that, CuPy or PyTorch: those
    already imported, or with frameworks=True any that can be imported."""
    if not cuda_available():
        return None
    if _cudaGetDevice is not None:
        dev = ctypes.c_int(-1)
        if _cudaGetDevice(ctypes.byref(dev)) == 0:
            return dev.value
        if _cudaGetLastError is not None:
            _cudaGetLastError()
    import sys
    if frameworks or "cupy" in sys.modules:
        try:
            import cupy
            return int(cupy.cuda.runtime.getDevice())
        except Exception:  # noqa: BLE001 - not importable or no usable GPU: try the next
            pass
    if frameworks or "torch" in sys.modules:
        try:
            import torch
            if torch.cuda.is_available():
                return int(torch.cuda.current_device())
        except Exception:  # noqa: BLE001
            pass
    return None


class _Handle:
    """One tg_handle, owned by one thread and bound to one GPU (the device current when it was
    created; None: no GPU); destroyed with the thread's local storage.

    Between calls the handle rests on its own stream (what tg_get_stream returns at creation,
    valid until tg_destroy), never on a caller's stream, so a stream the caller destroys after
    a call is never named to the library again."""

    def __init__(self, device=None):
        ptr = ctypes.c_void_p()
        status = tg_create(ctypes.byref(ptr))
        if status != TG_SUCCESS:
            raise TilegemmError(status, tg_last_error(None).decode(), tg_last_error_arg(None))
        self.ptr = ptr
        self.device = device
        self.stream = None  # the stream last given to tg_set_stream (None: the handle's own)
        self.park_ptr = tg_get_stream(ptr) or 0
        self.math = tg_get_math(ptr)  # the tg_math value last set (TILEGEMM_MATH at creation)
        self.autotune = bool(tg_get_autotune(ptr))  # TILEGEMM_AUTOTUNE at creation

    def set_stream(self, stream):
        """Makes the handle run on `stream` (a cudaStream_t as an int; 0: legacy default).
        Always calls the library: nothing is cached across calls."""
        status = tg_set_stream(self.ptr, ctypes.c_void_p(stream or None))
        self.check(status)
        self.stream = stream

    def park(self):
        """Back to the binding's own resting stream (see the class comment)."""
        if self.stream is not None and self.stream != self.park_ptr:
            self.set_stream(self.park_ptr)

    def use_math(self, code):
        """Makes the next calls run in math mode `code` (a tg_math value, see _math)."""
        if code != self.math:
            self.check(tg_set_math(self.ptr, code))
            self.math = code

    def use_autotune(self, on):
        """Makes the next calls autotune or not (see _autotune)."""
        if bool(on) != self.autotune:
            self.check(tg_set_autotune(self.ptr, 1 if on else 0))
            self.autotune = bool(on)

    def synchronize(self):
        self.check(tg_synchronize(self.ptr))

    def check(self, status):
        if status != TG_SUCCESS:
            raise TilegemmError(status, tg_last_error(self.ptr).decode(),
                                tg_last_error_arg(self.ptr))

    def __del__(self):
        ptr, self.ptr = getattr(self, "ptr", None), None
        if ptr and tg_destroy is not None:
            tg_destroy(ptr)


_local = threading.local()


def handle(device=-1):
    """This thread's handle for `device`, created on first use; the caller makes that device
    current first (tg_create binds the handle to the current device).  device=-1: the device
    current now (None where there is no GPU), as host calls use."""
    if device == -1:
        device = current_device()
    handles = getattr(_local, "handles", None)
    if handles is None:
        handles = _local.handles = {}
    h = handles.get(device)
    if h is None:
        h = handles[device] = _Handle(device)
    return h
