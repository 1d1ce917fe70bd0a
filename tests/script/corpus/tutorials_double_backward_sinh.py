# Source: https://github.com/pytorch/tutorials/blob/0ece40a1f1c8b0adb2c03fe2cb480762b96c09ee/intermediate_source/custom_function_double_backward_tutorial.py, the Sinh example (intermediate results returned as outputs)
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - `import torchviz` and the `torchviz.make_dot(...)` lines left out (they draw the graph as an image)
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        # In order to be able to save the intermediate results, a trick is to
        # include them as our outputs, so that the backward graph is constructed
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        # We cannot skip accumulating these even though we won't use the outputs
        # directly. They will be used later in the second backward.
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input

def sinh(x):
    # Create a wrapper that only returns the first output
    return Sinh.apply(x)[0]

x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
torch.autograd.gradcheck(sinh, x)
torch.autograd.gradgradcheck(sinh, x)

out = sinh(x)
grad_x, = torch.autograd.grad(out.sum(), x, create_graph=True)
