"""The op table (``table.py``) and the rules its entries share: how a step acts with a
leading batch dimension (``batching.py``), on arrays of sympy formulas (``symbolic.py``),
and what explain shows as its local derivative (``explaining.py``).

The entries themselves are declared with the engine's functions they describe, in the
modules of ``gradcli/engine`` (``primitives.py``, ``reductions.py``, ``composites.py``, ...);
importing ``gradcli`` fills the table.
"""
