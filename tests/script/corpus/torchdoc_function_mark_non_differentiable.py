# Source: pytorch/pytorch, torch/autograd/function.py as shipped in torch 2.13.0, the docstring of torch.autograd.function.FunctionCtx.mark_non_differentiable
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `from torch.autograd import Function` at the top
#   - added `from torch.autograd.function import once_differentiable` at the top
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable
class Func(Function):
    @staticmethod
    def forward(ctx, x):
        sorted, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted, idx

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):  # still need to accept g2
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g1)
        return grad_input
