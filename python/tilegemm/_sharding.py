"""How tilegemm::mm, tilegemm::addmm and tilegemm::bmm run on DTensors: sharding rules given to
torch.distributed.tensor.experimental.register_sharding, so that DTensor knows, for each way
its operands may be placed, where the product lands and what must move first.

A rule is stated for one dimension of the device mesh (DTensor combines them over the mesh's
dimensions and picks the cheapest given the operands' placements), as a list of
(output placement, operand placements).  For a @ b with a: m x k and b: k x n (bmm: a leading
batch dimension on all three):

    out        a          b          what it is
    R          R          R          replicated operands
    S(0)       S(0)       S(0)       bmm only: the batch split
    Partial    S(-1)      S(-2)      k split (RowwiseParallel): partial sums, reduced later
    S(-2)      S(-2)      R          a's rows split (data or sequence parallel)
    S(-1)      R          S(-1)      b's columns split (ColwiseParallel)
    Partial    Partial    R          the product is linear in a ...
    Partial    R          Partial    ... and in b (for each linear reduction: sum, avg)

addmm's input (the bias) follows the output across broadcasting: sharded where the output is
sharded on a dimension the input has (a [n] bias is S(0) when the output is S(1)), replicated
along a dimension it broadcasts, Partial when the output is (beta*c + alpha*a@b summed over
ranks is right only when c is split among them too; DTensor divides a replicated c for that).
These are the placements PyTorch's own aten.mm, aten.addmm and aten.bmm rules give, so a
module runs with the same placements routed or not.

Registration needs torch.distributed and register_sharding (PyTorch 2.5 and later); where
either is missing nothing is registered and DTensor products fall back to PyTorch's error, as
without tilegemm.  It happens once DTensor has been imported (importing it costs about a
second, which plain users of tilegemm.torch should not pay): at the import of tilegemm.torch,
at enable() and enabled(), and at the first call with a tensor subclass.
"""

import sys

_state = None  # None: not tried yet; True: registered; a string: why not


def status():
    """True once the rules are registered; a sentence saying why not; None before the first
    try (DTensor not imported yet)."""
    return _state


def ensure():
    """Registers the rules if DTensor is loaded and they are not registered yet; never raises
    (a failure is kept as status())."""
    global _state
    if _state is None and "torch.distributed.tensor" in sys.modules:
        try:
            _state = _register()
        except Exception as exc:  # an API that changed shape: DTensor calls fail as before
            _state = f"registration failed: {type(exc).__name__}: {exc}"
    return _state


def _register():
    import torch

    if not torch.distributed.is_available():
        return "torch.distributed is not available in this PyTorch build"
    try:
        from torch.distributed.tensor import Partial, Replicate, Shard
        from torch.distributed.tensor.experimental import register_sharding
    except ImportError as exc:
        return f"this PyTorch has no register_sharding ({exc})"
    kinds = _Placements(Replicate, Shard, Partial)
    ops = torch.ops.tilegemm

    @register_sharding(ops.mm.default)
    def _mm(a, b, math):
        return [([out], [pa, pb, None]) for out, pa, pb in product_rules(kinds, 2)]

    @register_sharding(ops.bmm.default)
    def _bmm(a, b, math):
        return [([out], [pa, pb, None]) for out, pa, pb in product_rules(kinds, 3)]

    @register_sharding(ops.addmm.default)
    def _addmm(c, a, b, beta, alpha, math):
        return [([out], [pc, pa, pb, None, None, None])
                for out, pc, pa, pb in addmm_rules(kinds, tuple(c.shape))]

    return True


class _Placements:
    """The placement types the rules are written in (DTensor's Replicate, Shard, Partial)."""

    def __init__(self, replicate, shard, partial):
        self.replicate, self.shard, self.partial = replicate, shard, partial
        self.reductions = tuple(getattr(partial, "LINEAR_REDUCE_OPS", ("sum",)))


def product_rules(kinds, dims):
    """[out, a, b] placement lists for one mesh dimension of a @ b, for 2-D (mm) or 3-D (bmm)
    operands; see the table above.  The first rule DTensor finds among equally cheap ones wins,
    so they come in PyTorch's order: replicated, batch, k, rows, columns, linearity."""
    R, S, P = kinds.replicate, kinds.shard, kinds.partial
    rows, cols = dims - 2, dims - 1  # the m and n dimensions of the output
    rules = [[R(), R(), R()]]
    if dims == 3:
        rules.append([S(0), S(0), S(0)])
    rules += [[P(), S(cols), S(rows)],
              [S(rows), S(rows), R()],
              [S(cols), R(), S(cols)]]
    for op in kinds.reductions:
        rules += [[P(op), P(op), R()], [P(op), R(), P(op)]]
    return rules


def addmm_rules(kinds, c_shape):
    """[out, c, a, b] placement lists for one mesh dimension of beta * c + alpha * a @ b, c of
    shape c_shape broadcasting to the m x n output."""
    return [[out, bias_placement(kinds, out, c_shape), a, b]
            for out, a, b in product_rules(kinds, 2)]


def bias_placement(kinds, out, c_shape, out_dims=2):
    """The placement of c, broadcast to an output placed at `out`: the output's shard dimension
    in c's numbering where c has it with more than one element, else replicated; Replicate and
    Partial as the output's."""
    if not isinstance(out, kinds.shard):
        return out
    dim = out.dim - (out_dims - len(c_shape))
    if dim < 0 or c_shape[dim] == 1:
        return kinds.replicate()
    return kinds.shard(dim)
