"""tilegemm for PyTorch: float32 CUDA matrix products as torch ops, with autograd, torch.compile
and CUDA graphs.

    import tilegemm.torch as tgt
    y = tgt.mm(a, b)                    # also addmm, bmm, linear, matmul
    with tgt.enabled():                 # or tgt.enable() for the whole process
        loss = model(x).sum()           # float32 CUDA matmul / mm / addmm / bmm / linear routed
    loss.backward()

Ops.  mm, addmm and bmm are registered with torch.library as tilegemm::mm, tilegemm::addmm and
tilegemm::bmm: a fake implementation (torch.compile(fullgraph=True) traces them) and an autograd
formula whose backward runs through the same ops in the same math mode, dA = dC B^T and
dB = A^T dC, the transposes being views (the library reads row- and column-major operands
alike).  linear and matmul are built from them.  Results are new contiguous tensors, as
torch.mm's are; an operand is copied only when the library cannot read its strides (a
broadcast or a step along both axes), as torch itself does.

The fast path.  Outside torch.compile, with no gradient to record and plain tensors, a call goes
straight to the C function (ctypes): one handle per thread and GPU, kept on the GPU's current
stream and math mode, and changed only when those change; pointers and strides are read off
the tensors and the library checks the rest.  Every other call goes through the registered op,
which runs the same code, so both give the same bits.

Math.  math= for one call; `with tilegemm.math("tf32"):` for a block; TILEGEMM_MATH for the
process; "fp32" otherwise (see docs/torch.md for how the modes compare with
torch.backends.cuda.matmul.allow_tf32).  Backward runs in the forward's mode.  Under
torch.compile a call without math= takes the mode in force when the compiled code runs.

DTensor.  The three ops have DTensor sharding rules (_sharding.py, registered once DTensor is
loaded): DTensor operands, placed as tensor parallelism places them, give the placements
PyTorch's own products give, and FSDP2's gathered parameters are plain tensors.

Errors.  TypeError for a non-float32 tensor, ValueError for a CPU tensor, tensors on two GPUs,
or shapes that do not match; the routing (enabled / enable) passes such calls to PyTorch instead.
"""

import contextlib
import threading

import torch

from . import _autotune, _math, _native, _sharding
from ._native import TG_NO_TRANS, TG_ROW_MAJOR, TG_TRANS

__all__ = ["mm", "addmm", "bmm", "linear", "matmul", "enabled", "enable", "disable"]

_F32 = torch.float32
_OP = (TG_NO_TRANS, TG_TRANS)
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_RUNTIME = -1  # the math argument of an op traced without math=: resolved when it runs

_get_device = getattr(torch._C, "_cuda_getDevice", lambda: -1)  # absent from CPU-only builds
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda device: torch.cuda.current_stream(device).cuda_stream)
_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)


# --- Checks, shared by the real and the fake implementations ------------------------------------
def _check(op, dims, cuda=True, **tensors):
    """TypeError / ValueError unless every tensor is a float32 tensor of `dims` dimensions, all
    on one device, a GPU unless `cuda` is false (the fake implementations: DTensor works out an
    output's shape on fake CPU tensors, so where the data lives is checked when the op runs)."""
    device = None
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"tilegemm.torch.{op}: {name} must be a tensor, got "
                            f"{type(t).__name__}")
        if t.dtype != _F32:
            raise TypeError(f"tilegemm.torch.{op}: {name} has dtype {t.dtype}; tilegemm computes "
                            f"in float32 only (convert explicitly, or call torch.{op})")
        if cuda and not t.is_cuda:
            raise ValueError(f"tilegemm.torch.{op}: {name} is on {t.device}; tilegemm.torch "
                             f"takes CUDA tensors (call torch.{op} for others)")
        if dims and t.dim() != dims:
            raise ValueError(f"tilegemm.torch.{op}: {name} must be {dims}-D, got shape "
                             f"{tuple(t.shape)}")
        if device is None:
            device = t.device
        elif t.device != device:
            raise ValueError(f"tilegemm.torch.{op}: the tensors are on {device} and {t.device}")


def _usual(a, b, dims):
    """_check's verdict on plain tensors in the usual case, in a few attribute reads: both
    float32 CUDA tensors of `dims` dimensions on one GPU.  False sends the call to _check."""
    return (type(a) in _PLAIN and type(b) in _PLAIN and a.dtype is _F32 and b.dtype is _F32 and
            a.is_cuda and b.is_cuda and a.dim() == dims and b.dim() == dims and
            a.get_device() == b.get_device())


def _product_shape(op, a, b):
    """(m, n, k) of a @ b over the last two dimensions; ValueError when they do not match."""
    m, k = a.shape[-2:]
    kb, n = b.shape[-2:]
    if k != kb:
        raise ValueError(f"tilegemm.torch.{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} "
                         f"cannot be multiplied ({k} != {kb})")
    return m, n, k


def _rows(shape):
    """The product of the sizes in `shape` (1 for none), in plain Python that torch.compile
    traces."""
    rows = 1
    for size in shape:
        rows *= size
    return rows


def _mm_shape(a, b, cuda=True):
    if not _usual(a, b, 2):
        _check("mm", 2, cuda, a=a, b=b)
    m, n, _ = _product_shape("mm", a, b)
    return m, n


def _bmm_shape(a, b, cuda=True):
    if not _usual(a, b, 3):
        _check("bmm", 3, cuda, a=a, b=b)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"tilegemm.torch.bmm: batch sizes {a.shape[0]} and {b.shape[0]} differ")
    m, n, _ = _product_shape("bmm", a, b)
    return a.shape[0], m, n


# --- The library call ----------------------------------------------------------------------------
def _layout(rows, cols, s0, s1):
    """(op, ld) of a rows x cols matrix with element strides (s0, s1) as the row-major library
    takes it (column-major storage is the transpose of a row-major matrix), or None when it is
    neither."""
    if rows == 0 or cols == 0:
        return TG_NO_TRANS, max(cols, 1)
    if (s1 == 1 or cols == 1) and (rows == 1 or s0 >= cols):
        return TG_NO_TRANS, (s0 if rows > 1 else cols)
    if (s0 == 1 or rows == 1) and (cols == 1 or s1 >= rows):
        return TG_TRANS, (s1 if cols > 1 else rows)
    return None


def _operand(t):
    """(tensor, op, ld, batch stride) for the last two dimensions of t; t is replaced by a
    contiguous copy only when its strides are neither row- nor column-major."""
    stride = t.stride()
    found = _layout(t.shape[-2], t.shape[-1], stride[-2], stride[-1])
    if found is None:
        t = t.contiguous()
        stride = t.stride()
        found = _layout(t.shape[-2], t.shape[-1], stride[-2], stride[-1])
    return t, found[0], found[1], (stride[0] if t.dim() == 3 else 0)


class _Local(threading.local):
    def __init__(self):
        self.handles = {}


_local = _Local()


def _handle(device, math):
    """This thread's handle for `device` (current), on its current stream and in tg_math mode
    `math`; the library is told only what changed since the last call."""
    h = _local.handles.get(device)
    if h is None:
        h = _local.handles[device] = _native._Handle(device)
    stream = _raw_stream(device)
    if stream != h.stream:
        h.set_stream(stream)
    if math == _RUNTIME:
        math = _math.resolve()
    if math != h.math:
        h.use_math(math)
    h.use_autotune(_autotune.enabled())
    return h


def _gemm(out, a, b, alpha, beta, math):
    """out = alpha a @ b + beta out (out: a new contiguous matrix, or a batch of them with a and
    b batched alike), on out's GPU and its current stream."""
    device = out.get_device()
    if _get_device() != device:
        with torch.cuda.device(device):
            return _gemm(out, a, b, alpha, beta, math)
    a, op_a, lda, stride_a = _operand(a)
    b, op_b, ldb, stride_b = _operand(b)
    m, n = out.shape[-2:]
    k = a.shape[-1]
    h = _handle(device, math)
    if out.dim() == 2:
        status = _native.tg_sgemm(h.ptr, TG_ROW_MAJOR, op_a, op_b, m, n, k, alpha,
                                  a.data_ptr(), lda, b.data_ptr(), ldb, beta, out.data_ptr(),
                                  max(n, 1))
    else:
        status = _native.tg_sgemm_strided_batched(
            h.ptr, TG_ROW_MAJOR, op_a, op_b, m, n, k, alpha, a.data_ptr(), lda, stride_a,
            b.data_ptr(), ldb, stride_b, beta, out.data_ptr(), max(n, 1), m * n, out.shape[0])
    if status:
        h.check(status)
    return out


def _mm_impl(a, b, math):
    m, n = _mm_shape(a, b)
    return _gemm(a.new_empty((m, n)), a, b, 1.0, 0.0, math)


def _addmm_impl(c, a, b, beta, alpha, math):
    m, n = _mm_shape(a, b)
    _check("addmm", 0, input=c, a=a)
    out = a.new_empty((m, n))
    if beta != 0.0:  # beta = 0 never reads c, as in torch.addmm and BLAS
        out.copy_(c.expand(m, n))
    return _gemm(out, a, b, alpha, beta, math)


def _bmm_impl(a, b, math):
    batch, m, n = _bmm_shape(a, b)
    return _gemm(a.new_empty((batch, m, n)), a, b, 1.0, 0.0, math)


# --- The registered ops: fake implementations and autograd --------------------------------------
@torch.library.custom_op("tilegemm::mm", mutates_args=())
def _mm_op(a: torch.Tensor, b: torch.Tensor, math: int) -> torch.Tensor:
    return _mm_impl(a, b, math)


@torch.library.custom_op("tilegemm::addmm", mutates_args=())
def _addmm_op(c: torch.Tensor, a: torch.Tensor, b: torch.Tensor, beta: float, alpha: float,
              math: int) -> torch.Tensor:
    return _addmm_impl(c, a, b, beta, alpha, math)


@torch.library.custom_op("tilegemm::bmm", mutates_args=())
def _bmm_op(a: torch.Tensor, b: torch.Tensor, math: int) -> torch.Tensor:
    return _bmm_impl(a, b, math)


@_mm_op.register_fake
def _(a, b, math):
    return a.new_empty(_mm_shape(a, b, cuda=False))


@_addmm_op.register_fake
def _(c, a, b, beta, alpha, math):
    _check("addmm", 0, False, input=c, a=a)
    return a.new_empty(_mm_shape(a, b, cuda=False))


@_bmm_op.register_fake
def _(a, b, math):
    return a.new_empty(_bmm_shape(a, b, cuda=False))


def _save(ctx, inputs, output):
    """Keeps the operands and the math mode; backward needs a for dB and b for dA.  Inputs:
    (a, b, math) for mm and bmm, (c, a, b, beta, alpha, math) for addmm."""
    if len(inputs) == 6:
        c, a, b, ctx.beta, ctx.alpha, ctx.math = inputs
        ctx.c_shape, ctx.ab = c.shape, (1, 2)
    else:
        a, b, ctx.math = inputs
        ctx.ab = (0, 1)
    ctx.save_for_backward(a, b)


def _grads(ctx, grad, product):
    """dA = dC B^T and dB = A^T dC by `product` (mm or bmm) on transposed views."""
    a, b = ctx.saved_tensors
    need_a, need_b = (ctx.needs_input_grad[i] for i in ctx.ab)
    da = _product_like(a, product, grad, b.transpose(-1, -2), ctx.math) if need_a else None
    db = _product_like(b, product, a.transpose(-1, -2), grad, ctx.math) if need_b else None
    return da, db


def _product_like(x, product, left, right, math):
    """left @ right stored like x: for a column-major x (a transposed weight, as in linear),
    (right^T @ left^T)^T, so that the gradient needs no copy to match its tensor (as PyTorch's
    own mm backward does)."""
    if x.stride(-2) == 1 and x.stride(-1) != 1:
        return _product(product, right.transpose(-1, -2), left.transpose(-1, -2),
                        math).transpose(-1, -2)
    return _product(product, left, right, math)


def _mm_backward(ctx, grad):
    return *_grads(ctx, grad, "mm"), None


def _bmm_backward(ctx, grad):
    return *_grads(ctx, grad, "bmm"), None


def _addmm_backward(ctx, grad):
    da, db = _grads(ctx, grad, "mm")
    if ctx.alpha != 1.0:
        da = None if da is None else da * ctx.alpha
        db = None if db is None else db * ctx.alpha
    dc = None
    if ctx.needs_input_grad[0]:
        dc = (grad if ctx.beta == 1.0 else grad * ctx.beta).sum_to_size(ctx.c_shape)
    return dc, da, db, None, None, None


_mm_op.register_autograd(_mm_backward, setup_context=_save)
_addmm_op.register_autograd(_addmm_backward, setup_context=_save)
_bmm_op.register_autograd(_bmm_backward, setup_context=_save)

_IMPLS = {"mm": (_mm_impl, torch.ops.tilegemm.mm), "bmm": (_bmm_impl, torch.ops.tilegemm.bmm),
          "addmm": (_addmm_impl, torch.ops.tilegemm.addmm)}


def _product(name, *args):
    """Runs op `name` on args (tensors first, the math mode last): straight to the library when
    nothing needs the dispatcher, else through the registered op (whose DTensor rules are
    registered first, once DTensor is loaded)."""
    impl, op = _IMPLS[name]
    if torch.compiler.is_compiling():
        return op(*args)
    if not _direct(args):
        if _sharding._state is None:
            _sharding.ensure()
        return op(*args)
    return impl(*args)


def _direct(args):
    """True when a call may skip the dispatcher: plain tensors, no gradient to record, no
    dispatch mode (FakeTensorMode, tracing) active."""
    grad = torch.is_grad_enabled()
    for t in args:
        if isinstance(t, torch.Tensor):
            if type(t) not in _PLAIN or (grad and t.requires_grad):
                return False
    return not _dispatch_modes()


def _mode(math):
    """The math argument of an op: the tg_math value of math= or of the block around the call;
    under torch.compile without math=, the mode in force when the compiled code runs."""
    if torch.compiler.is_compiling():
        return _RUNTIME if math is None else _math.code(math)
    return _math.resolve(math)


# --- The public functions ------------------------------------------------------------------------
def mm(a, b, *, math=None):
    """a @ b for float32 CUDA matrices (torch.mm)."""
    return _product("mm", a, b, _mode(math))


def addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, math=None):
    """beta * input + alpha * mat1 @ mat2 (torch.addmm); input broadcasts to the product's
    shape and is never read when beta == 0.  beta and alpha go to the library as float32: a
    finite value beyond float32's range or a nonzero one that rounds to 0 is a ValueError."""
    beta = _native.float32_scalar(float(beta), "beta")
    alpha = _native.float32_scalar(float(alpha), "alpha")
    return _product("addmm", input, mat1, mat2, beta, alpha, _mode(math))


def bmm(a, b, *, math=None):
    """A batch of products, a[i] @ b[i], for 3-D float32 CUDA tensors (torch.bmm), in one call
    of the strided-batched C function."""
    return _product("bmm", a, b, _mode(math))


def linear(input, weight, bias=None, *, math=None):
    """input @ weight.T + bias (torch.nn.functional.linear), over any leading dimensions."""
    x = input.reshape(_rows(input.shape[:-1]), input.shape[-1])
    if bias is None:
        y = mm(x, weight.t(), math=math)
    else:
        y = addmm(bias, x, weight.t(), math=math)
    return y.reshape(*input.shape[:-1], weight.shape[0])


def matmul(a, b, *, math=None):
    """torch.matmul's semantics for float32 CUDA tensors: vectors, matrices, and batches
    broadcast against each other (folded into one mm where b is a matrix, else one bmm)."""
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError("tilegemm.torch.matmul: both arguments need at least 1 dimension")
    vector_a, vector_b = a.dim() == 1, b.dim() == 1
    if vector_a:
        a = a.unsqueeze(0)
    if vector_b:
        b = b.unsqueeze(-1)
    if b.dim() == 2:
        rows = _rows(a.shape[:-1])
        y = mm(a.reshape(rows, a.shape[-1]), b, math=math).reshape(*a.shape[:-1], b.shape[-1])
    else:
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a3 = a.expand(*batch, *a.shape[-2:]).reshape(_rows(batch), *a.shape[-2:])
        b3 = b.expand(*batch, *b.shape[-2:]).reshape(_rows(batch), *b.shape[-2:])
        y = bmm(a3, b3, math=math)
        y = y.reshape(*batch, *y.shape[-2:])
    if vector_a:
        y = y.squeeze(-2)
    return y.squeeze(-1) if vector_b else y


# --- Routing PyTorch's own calls -----------------------------------------------------------------
def _routable(*tensors):
    """float32 CUDA tensors on one GPU (None is skipped: a missing bias)."""
    device = None
    for t in tensors:
        if t is None:
            continue
        if not isinstance(t, torch.Tensor) or t.dtype != _F32 or not t.is_cuda:
            return False
        if device is None:
            device = t.device
        elif t.device != device:
            return False
    return True


def _route_matmul(a, b, *extra, **kwargs):
    if extra or kwargs or not _routable(a, b):
        return NotImplemented
    return matmul(a, b)


def _route_mm(a, b, *extra, **kwargs):
    if extra or kwargs or not _routable(a, b) or a.dim() != 2 or b.dim() != 2:
        return NotImplemented
    return mm(a, b)


def _route_bmm(a, b, *extra, **kwargs):
    if extra or kwargs or not _routable(a, b) or a.dim() != 3 or b.dim() != 3:
        return NotImplemented
    return bmm(a, b)


def _route_addmm(input, mat1, mat2, *extra, beta=1, alpha=1, **kwargs):
    if extra or kwargs or not _routable(input, mat1, mat2) or mat1.dim() != 2 or mat2.dim() != 2:
        return NotImplemented
    try:  # scalars float32 cannot carry: PyTorch's own call decides what they mean
        _native.float32_scalar(float(beta), "beta"), _native.float32_scalar(float(alpha), "alpha")
    except (ValueError, TypeError, OverflowError):
        return NotImplemented
    return addmm(input, mat1, mat2, beta=beta, alpha=alpha)


def _route_linear(input, weight, bias=None, *extra, **kwargs):
    if extra or kwargs or not _routable(input, weight, bias) or weight.dim() != 2 or \
            input.dim() == 0:
        return NotImplemented
    return linear(input, weight, bias)


# Where PyTorch keeps each function, and the route it takes.
_ROUTES = [
    (torch, "matmul", _route_matmul), (torch.Tensor, "matmul", _route_matmul),
    (torch.Tensor, "__matmul__", _route_matmul), (torch, "mm", _route_mm),
    (torch.Tensor, "mm", _route_mm), (torch, "bmm", _route_bmm),
    (torch.Tensor, "bmm", _route_bmm), (torch, "addmm", _route_addmm),
    (torch.Tensor, "addmm", _route_addmm), (torch.nn.functional, "linear", _route_linear),
]
_BY_FUNC = {getattr(owner, name): route for owner, name, route in _ROUTES}


class _Mode(torch.overrides.TorchFunctionMode):
    """Sends the routed functions to tilegemm when their operands are float32 CUDA tensors;
    everything else goes to PyTorch untouched."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        route = _BY_FUNC.get(func)
        if route is not None:
            out = route(*args, **(kwargs or {}))
            if out is not NotImplemented:
                return out
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def enabled():
    """with tilegemm.torch.enabled(): float32 CUDA torch.matmul, mm, addmm, bmm, Tensor.__matmul__
    and F.linear (so nn.Linear) run on tilegemm in this thread; other dtypes, devices, out=
    arguments and other ops go to PyTorch.  DTensor operands run sharded (docs/torch.md)."""
    _sharding.ensure()
    with _Mode():
        yield


_originals = {}  # (owner, name): what enable() replaced, None where it was inherited


def _patched(original, route):
    def call(*args, **kwargs):
        out = route(*args, **kwargs)
        return original(*args, **kwargs) if out is NotImplemented else out

    call.__name__, call.__doc__, call.__wrapped__ = original.__name__, original.__doc__, original
    return call


def enable():
    """Routes the functions enabled() routes, in every thread, until disable(): the functions
    themselves are replaced in torch, torch.Tensor and torch.nn.functional."""
    _sharding.ensure()
    for owner, name, route in _ROUTES:
        if (owner, name) not in _originals:
            _originals[(owner, name)] = vars(owner).get(name)
            setattr(owner, name, _patched(getattr(owner, name), route))


def disable():
    """Puts back what enable() replaced."""
    while _originals:
        (owner, name), original = _originals.popitem()
        if original is None:
            delattr(owner, name)  # inherited (torch.Tensor's methods come from its C base)
        else:
            setattr(owner, name, original)


_sharding.ensure()  # DTensor's rules for the ops, if DTensor is loaded already
