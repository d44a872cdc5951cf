"""Where a call runs: the GPU of its operands, made current for the call, and the stream it is
queued on, ordered against the streams of the operands' other producers."""

import contextlib

from ._native import current_device

LEGACY_DEFAULT_STREAM = 0  # cudaStreamLegacy as tg_set_stream takes it: NULL
PER_THREAD_STREAM = 2      # cudaStreamPerThread


class _UnknownDevice:
    """The device of a GPU operand that could not be determined (see pointer_device)."""

    def __repr__(self):
        return "?"


UNKNOWN = _UnknownDevice()
_importable = {}


def framework(name):
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


def pointer_device(ptr):
    """The GPU that device pointer `ptr` belongs to.  The interface does not say and pure Python
    cannot ask the runtime, so CuPy is asked when it can be imported; otherwise the device is
    unknown and taken to be the current one (see resolve_devices)."""
    cupy = framework("cupy") if ptr else None
    if cupy is not None:
        try:
            attr = cupy.cuda.runtime.pointerGetAttributes(ptr)
            if attr.type in (2, 3):  # cudaMemoryTypeDevice, cudaMemoryTypeManaged
                return int(attr.device)
        except Exception:  # noqa: BLE001 - not a pointer CUDA knows: fall through
            pass
    return UNKNOWN


def resolve_devices(operands):
    """The one GPU all operands live on (None: all on the host).  ValueError, before any
    library call, for host and GPU operands together, two GPUs, or a GPU operand whose device
    cannot be told next to one whose device is known."""
    if len({x.device is None for x in operands}) > 1:
        _mixed(operands, "put them all on the host or all on the same GPU")
    if operands[0].device is None:
        return None
    unknown = [x for x in operands if x.device is UNKNOWN]
    if unknown:
        # __cuda_array_interface__ without CuPy: such arrays must be on the current device.
        cur = current_device(frameworks=True)
        if cur is not None:
            for x in unknown:
                x.device = cur
    devices = {x.device for x in operands}
    if len(devices) > 1:
        if any(x.device is UNKNOWN for x in operands):
            _mixed(operands, "the GPU of an array that only offers __cuda_array_interface__ "
                             "cannot be told without CuPy and is taken to be the current one, "
                             "which is unknown here: install CuPy, or pass CuPy / PyTorch "
                             "arrays")
        _mixed(operands, "put them all on the same GPU")
    return devices.pop()


def _mixed(operands, advice):
    raise ValueError("operands live in different places (" +
                     ", ".join(f"{x.name} on {x.where()}" for x in operands) + "): " + advice)


@contextlib.contextmanager
def on_device(device, kinds):
    """Makes `device` current for the call (and restores the previous one after) through the
    libraries that own the operands (`kinds`), or any of CuPy / PyTorch that can be imported.
    Without either, the device cannot be switched: it must already be current."""
    if device is UNKNOWN:
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
                mod = framework(name)
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
            self.mod = framework(name)
            if self.mod is not None:
                break

    def _stream(self, ptr):
        mod = self.mod
        if mod.__name__ == "torch":
            if ptr == LEGACY_DEFAULT_STREAM:
                return mod.cuda.default_stream(self.device)
            return mod.cuda.ExternalStream(ptr, device=self.device)
        if ptr == LEGACY_DEFAULT_STREAM:
            return mod.cuda.Stream.null
        if ptr == PER_THREAD_STREAM and hasattr(mod.cuda.Stream, "ptds"):
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


@contextlib.contextmanager
def call_stream(h, out, inputs, kinds):
    """Yields the stream a GPU call runs on: out's producer's (out was made by a's library when
    not given), else the first input's that names one, else the legacy default.  The operands'
    other streams are ordered with it: it waits for them before the body, and they wait for
    the call after it.  Whatever happens, handle `h` is parked on its own stream at the end."""
    stream = out.stream
    if stream is None:  # out's interface names no stream: the first input that does
        stream = next((x.stream for x in inputs if x.stream is not None),
                      LEGACY_DEFAULT_STREAM)
    others = []
    for x in inputs + [out]:
        if x.stream is not None and x.stream != stream and x.stream not in others:
            others.append(x.stream)
    order = _Ordering(out.device if isinstance(out.device, int) else None, kinds | {out.kind}, h) \
        if others else None
    try:
        for s in others:
            order.wait(stream, s)
        yield stream
        for s in others:  # their later work (reusing freed inputs, writing out) follows the call
            order.wait(s, stream)
    finally:
        # Never leave a caller's stream on the handle: it may be destroyed before the next call.
        h.park()
