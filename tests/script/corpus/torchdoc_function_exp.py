# Source: pytorch/pytorch, torch/autograd/function.py as shipped in torch 2.13.0, the docstring of torch.autograd.Function
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `from torch.autograd import Function` at the top
from torch.autograd import Function
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

# Use it by calling the apply method:
# xdoctest: +SKIP
output = Exp.apply(input)
