"""Linear algebra, each operation an entry of the op table: the matrix product
(``matrix_product.py``), products and ``torch.linalg``'s functions (``linalg.py``),
``matrix_power.py``, the decompositions (``decompositions.py``), ``spectra.py`` (svdvals,
eigvalsh, pinv) and ``einsum.py``."""
