# Source: https://github.com/pytorch/tutorials/blob/14f19bbffcff42ee752897e57b4b96e4972d302f/intermediate_source/jacobians_hessians.py, the page's first cell and section "Computing Hessian-vector products"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
import torch
import torch.nn.functional as F
from functools import partial
_ = torch.manual_seed(0)

from torch.func import jvp, grad, vjp

def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]

def f(x):
  return x.sin().sum()

x = torch.randn(2048)
tangent = torch.randn(2048)

result = hvp(f, (x,), (tangent,))

def hvp_revrev(f, primals, tangents):
  _, vjp_fn = vjp(grad(f), *primals)
  return vjp_fn(*tangents)

result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
assert torch.allclose(result, result_hvp_revrev[0])
