"""What a value is for ``lang.ir.evaluate`` besides numbers: sympy formulas (symbolic, exact)."""
