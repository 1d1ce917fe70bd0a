# Source: pytorch/pytorch, torch/autograd/function.py as shipped in torch 2.13.0, the docstring of torch.autograd.function.FunctionCtx.mark_dirty
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `from torch.autograd import Function` at the top
#   - added `from torch.autograd.function import once_differentiable` at the top
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
class Inplace(Function):
    @staticmethod
    def forward(ctx, x):
        x_npy = x.numpy() # x_npy shares storage with x
        x_npy += 1
        ctx.mark_dirty(x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        return grad_output

a = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
b = a * a
Inplace.apply(a)  # This would lead to wrong gradients!
                  # but the engine would not know unless we mark_dirty
# xdoctest: +SKIP
b.backward() # RuntimeError: one of the variables needed for gradient
             # computation has been modified by an inplace operation
