"""THE table from ATen ops to hologram: ``TABLE[op] = Lowering(fn, accepts)``.

``fn`` takes exactly the ATen overload's arguments (as in an AOTAutograd FX node) on torch tensors
and returns what the op returns, computed by hologram over the tensors' memory (results
allocated by hologram); ``accepts(node)`` reads the node's FakeTensor metadata at compile time
and says whether hologram computes what ATen does (dtypes, devices, layouts, argument values);
a node it refuses stays torch's. A ``fn`` with a ``specialize(node)`` attribute picks the
variant for a node (layer norm without the statistics nobody reads). One family per file.
"""
from . import activations, attention, data, dropout, losses, matmul, reductions, rows
from .common import Lowering

TABLE = {}
for _family in (matmul, rows, attention, losses, reductions, activations, dropout, data):
    for _op, _lowering in _family.ENTRIES.items():
        assert _op not in TABLE, f"{_op} lowered twice"
        TABLE[_op] = _lowering

__all__ = ["TABLE", "Lowering"]
