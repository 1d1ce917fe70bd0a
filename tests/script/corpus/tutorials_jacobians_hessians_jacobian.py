# Source: https://github.com/pytorch/tutorials/blob/14f19bbffcff42ee752897e57b4b96e4972d302f/intermediate_source/jacobians_hessians.py, section "Computing the Jacobian"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - the benchmarking cells (get_perf, torch.utils.benchmark.Timer) left out
import torch
import torch.nn.functional as F
from functools import partial
_ = torch.manual_seed(0)

def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()

D = 16
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)  # feature vector

def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)

xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)

jacobian = compute_jac(xp)

print(jacobian.shape)
print(jacobian[0])  # show first row

from torch.func import vmap, vjp

_, vjp_fn = vjp(partial(predict, weight, bias), x)

ft_jacobian, = vmap(vjp_fn)(unit_vectors)

# let's confirm both methods compute the same result
assert torch.allclose(ft_jacobian, jacobian)

from torch.func import jacrev

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)

# confirm
assert torch.allclose(ft_jacobian, jacobian)

# note the change in input via argnums params of 0,1 to map to weight and bias
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
