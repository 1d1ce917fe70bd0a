# Source: https://github.com/pytorch/tutorials/blob/0ece40a1f1c8b0adb2c03fe2cb480762b96c09ee/intermediate_source/custom_function_double_backward_tutorial.py, the Exp example
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
#   - `import torchviz` and the `torchviz.make_dot(...)` lines left out (they draw the graph as an image)
import torch
class Exp(torch.autograd.Function):
    # Simple case where everything goes well
    @staticmethod
    def forward(ctx, x):
        # This time we save the output
        result = torch.exp(x)
        # Note that we should use `save_for_backward` here when
        # the tensor saved is an ouptut (or an input).
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out

x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
# Validate our gradients using gradcheck
torch.autograd.gradcheck(Exp.apply, x)
torch.autograd.gradgradcheck(Exp.apply, x)

out = Exp.apply(x)
grad_x, = torch.autograd.grad(out, x, create_graph=True)
