"""What the entries' rules share: the dims and operands as callers give them (``dims.py``),
and the reverse rules on float64 arrays of the element-wise entries a reverse pass runs most
(``array_rules.py``). The factories that declare an element-wise entry by its derivatives
(``_unary``, ``_binary``) are in ``ops/primitives.py``, with the arithmetic their rules apply."""
