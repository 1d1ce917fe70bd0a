# Source: https://github.com/pytorch/tutorials/blob/2d52ead6fdcf053698694bfe1c11cd88758f6f11/intermediate_source/forward_ad_usage.py, section "Functional API (beta)"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring, the full-line comments between statements)
#   - preceded by the page's `import torch`
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch

import functorch as ft

torch.manual_seed(0)
primal0 = torch.randn(10, 10)
tangent0 = torch.randn(10, 10)
primal1 = torch.randn(10, 10)
tangent1 = torch.randn(10, 10)

def fn(x, y):
    return x ** 2 + y ** 2

primal_out, tangent_out = ft.jvp(fn, (primal0, primal1), (tangent0, tangent1))

primal = torch.randn(10, 10)
tangent = torch.randn(10, 10)
y = torch.randn(10, 10)

import functools
new_fn = functools.partial(fn, y=y)
primal_out, tangent_out = ft.jvp(new_fn, (primal,), (tangent,))
