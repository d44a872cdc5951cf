"""The math mode of a call, scoped rather than sticky: the call's own `math=`, else the innermost
`with tilegemm.math(...)` block of this thread (or asyncio task), else the process default, the
TILEGEMM_MATH environment variable ("fp32" when unset).  Every call sets the mode it resolves on
its handle, so no mode outlives the call or block that asked for it.

Modes, as tg_math numbers them:
  fp32    FP32 accuracy; the library picks FFMA or 3xTF32 tensor cores (the default)
  strict  FP32 fused multiply-adds only
  tf32    inputs rounded to TF32 on tensor cores: faster, not FP32 accuracy
"""

import contextlib
import contextvars
import os

MODES = ("fp32", "strict", "tf32")  # index = the tg_math value
_block = contextvars.ContextVar("tilegemm_math", default=None)
_default = None


def code(mode, what="math"):
    """The tg_math number of mode name `mode`; ValueError for anything else."""
    if isinstance(mode, str) and mode in MODES:
        return MODES.index(mode)
    raise ValueError(f"{what} = {mode!r} is not one of 'fp32', 'strict', 'tf32'")


def default():
    """The process default: TILEGEMM_MATH, read once (the library reads it too, at tg_create).
    A value that is not a mode is the library's error, TilegemmError, with the library's
    sentence, whichever call meets it first (one with math= meets it at tg_create)."""
    global _default
    if _default is None:
        name = os.environ.get("TILEGEMM_MATH") or "fp32"
        if name not in MODES:
            from ._native import TG_ERROR_INVALID_ARGUMENT, TilegemmError
            raise TilegemmError(TG_ERROR_INVALID_ARGUMENT,
                                f'TILEGEMM_MATH = "{name}" is not one of fp32, strict, tf32')
        _default = MODES.index(name)
    return _default


def resolve(mode=None):
    """The tg_math number a call with math=`mode` runs in (None: the block's, else the
    default)."""
    if mode is not None:
        return code(mode)
    block = _block.get()
    return default() if block is None else block


@contextlib.contextmanager
def math(mode):
    """with tilegemm.math("tf32"): the calls inside run in this mode unless they pass their own
    math=; the mode before the block comes back after it, also on an exception.  Per thread
    and per asyncio task (a contextvars.ContextVar)."""
    token = _block.set(code(mode))
    try:
        yield
    finally:
        _block.reset(token)
