"""Element-wise operations, each an entry of the op table: the elementary functions (pow,
exp, log, sqrt, trigonometric, clamp: ``elementary.py``), the other functions of one element
(``pointwise.py``), the activations (``activations.py``), comparisons, logical operations and
masks (``logical.py``), complex numbers (``complexes.py``) and changes of dtype
(``dtypes.py``)."""
