# Source: pytorch/pytorch, torch/autograd/function.py as shipped in torch 2.13.0, the docstring of torch.autograd.function.FunctionCtx.save_for_backward
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
class Func(Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, z: int):
        w = x * z
        out = x * y + y * z + w * y
        ctx.save_for_backward(x, y, w, out)
        ctx.z = z  # z is not a tensor
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, y, w, out = ctx.saved_tensors
        z = ctx.z
        gx = grad_out * (y + y * z)
        gy = grad_out * (x + z + w)
        gz = None
        return gx, gy, gz

a = torch.tensor(1., requires_grad=True, dtype=torch.double)
b = torch.tensor(2., requires_grad=True, dtype=torch.double)
c = 4
d = Func.apply(a, b, c)
