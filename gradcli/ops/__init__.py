"""The op table (``table.py``) and the rules its entries share: how a step acts with a
leading batch dimension (``batching.py``) and on arrays of sympy formulas (``symbolic.py``).

The entries themselves are declared with the engine's functions they describe, in
``gradcli/engine/primitives.py`` and ``composites.py``; importing ``gradcli`` fills the table.
"""
