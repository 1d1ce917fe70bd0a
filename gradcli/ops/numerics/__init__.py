"""torch's floating-point arithmetic on the CPU, on numpy arrays, so that the operations'
forwards end in torch's last bits: its order of adding (``summation.py``) and of a matrix
product's multiply-adds (``product_order.py``), its float32 transcendental functions
(``single_precision.py``, ``vector_math.py``), the special functions numpy lacks
(``special.py``), its row-wise moments (``moments.py``) and which of equal elements its
kernels select (``ties.py``)."""
