"""The operations: the op table (``table.py``), the families of entries that fill it, and the
rules the entries share.

- ``table.py``: the ``Op`` entry and the table ``OPS``; ``library.py`` imports every family
  (which fills the table) and makes the library's namespace (``import gradcli as gc``).
- the families, by group: ``elementwise/``, ``arrays/``, ``reductions/``, ``linalg/``,
  ``nn/``; ``primitives.py`` the factories (``_unary``, ``_binary``) and the arithmetic
  every rule is written with; ``rules/`` what else the families' rules share;
  ``numerics/`` torch's own order of floating-point arithmetic.
- each entry's other aspects: how a step acts with a leading batch dimension
  (``batching.py``), on arrays of sympy formulas (``symbolic.py``), what explain shows as its
  local derivative (``explaining.py``), what export writes (``exporting.py``), and the
  sparsity patterns of its Jacobian (``patterns.py``); ``methods.py``, ``naming.py`` and
  ``several.py`` attach the entries to ``Tensor`` and name their nodes as torch does.
"""
