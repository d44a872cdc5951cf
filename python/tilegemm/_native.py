"""Loading libtilegemm and declaring the C functions the binding uses (ctypes).

The library is looked for, in order:
  1. the file named by the TILEGEMM_LIBRARY environment variable;
  2. the copy bundled inside this package by `pip install .`;
  3. ctypes.util.find_library("tilegemm"), i.e. the system's library path.
"""

import ctypes
import ctypes.util
import glob
import os
import threading

TG_SUCCESS = 0
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


def _load():
    errors = []
    for path, origin in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as exc:
            errors.append(f"{path} ({origin}): {exc}")
    detail = "; ".join(errors) if errors else "no candidate found"
    raise ImportError(
        "tilegemm: cannot load libtilegemm. Install the package with `pip install .` from the "
        "repository, or set TILEGEMM_LIBRARY to the path of libtilegemm.so (" + detail + ")")


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
tg_synchronize = _declare("tg_synchronize", ctypes.c_int, _h)
tg_backend_available = _declare("tg_backend_available", ctypes.c_int, ctypes.c_int)
tg_set_backend = _declare("tg_set_backend", ctypes.c_int, _h, ctypes.c_int)
tg_status_string = _declare("tg_status_string", ctypes.c_char_p, ctypes.c_int)
tg_last_error = _declare("tg_last_error", ctypes.c_char_p, _h)
tg_last_error_arg = _declare("tg_last_error_arg", ctypes.c_int, _h)
tg_sgemm = _declare("tg_sgemm", ctypes.c_int, _h, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    _i64, _i64, _i64, ctypes.c_float, ctypes.c_void_p, _i64, ctypes.c_void_p,
                    _i64, ctypes.c_float, ctypes.c_void_p, _i64)


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


class _Handle:
    """One tg_handle, owned by one thread; destroyed with the thread's local storage."""

    def __init__(self):
        ptr = ctypes.c_void_p()
        status = tg_create(ctypes.byref(ptr))
        if status != TG_SUCCESS:
            raise TilegemmError(status, tg_last_error(None).decode(), tg_last_error_arg(None))
        self.ptr = ptr
        self.stream = None  # the stream last given to tg_set_stream (None: the handle's own)

    def set_stream(self, stream):
        if stream == self.stream:
            return
        status = tg_set_stream(self.ptr, ctypes.c_void_p(stream))
        self.check(status)
        self.stream = stream

    def check(self, status):
        if status != TG_SUCCESS:
            raise TilegemmError(status, tg_last_error(self.ptr).decode(),
                                tg_last_error_arg(self.ptr))

    def __del__(self):
        ptr, self.ptr = getattr(self, "ptr", None), None
        if ptr and tg_destroy is not None:
            tg_destroy(ptr)


_local = threading.local()


def handle():
    """This thread's handle, created on first use."""
    h = getattr(_local, "handle", None)
    if h is None:
        h = _local.handle = _Handle()
    return h
