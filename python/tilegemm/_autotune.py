"""Autotuning (tg_set_autotune), off unless asked for:

    tilegemm.autotune()              on for this process: every call from now on
    tilegemm.autotune(False)         off again
    with tilegemm.autotune():        on while the block runs (for the process), then as before
    TILEGEMM_AUTOTUNE=1              on from the start

With it on, the first call of a key (GPU, shape, orientation, math mode, alignment) with GPU
operands times the planner's best few candidates on scratch buffers and later calls, in this
process or another, run the fastest (the cache under TILEGEMM_CACHE_DIR, else
$XDG_CACHE_HOME/tilegemm, else ~/.cache/tilegemm).  Only candidates the math mode allows are
timed; calls the cost model puts under 10 us are left to the planner, untimed.  Every call sets
the state it resolves on its handle, as the math mode does.
"""

import os

_enabled = None  # the process's state; None until read from TILEGEMM_AUTOTUNE


def enabled():
    """Whether calls autotune now: autotune()'s last word, else TILEGEMM_AUTOTUNE ("1": on)."""
    global _enabled
    if _enabled is None:
        value = os.environ.get("TILEGEMM_AUTOTUNE") or "0"
        if value not in ("0", "1"):
            raise ValueError(f"TILEGEMM_AUTOTUNE = {value!r} is not '0' or '1'")
        _enabled = value == "1"
    return _enabled


class autotune:
    """tilegemm.autotune(on=True): turns autotuning on (or off) for the calls this process makes
    from now on; used as `with tilegemm.autotune():` the state before the block comes back
    after it, also on an exception."""

    def __init__(self, on=True):
        global _enabled
        self._previous = enabled()
        self._on = bool(on)
        _enabled = self._on

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _enabled
        _enabled = self._previous
        return False

    def __repr__(self):
        return f"tilegemm.autotune({self._on})"


def status():
    """One line on this process's autotuning cache: the file, entries, choices taken from it,
    keys timed, and the warning when a cache file was ignored (tg_autotune_status)."""
    from ._native import tg_autotune_status
    return tg_autotune_status().decode()
