# Source: pytorch/pytorch, torch/_tensor.py as shipped in torch 2.13.0, the docstring of torch.Tensor.register_hook
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - its two doctest blocks joined
import torch
v = torch.tensor([0., 0., 0.], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)  # double the gradient
v.backward(torch.tensor([1., 2., 3.]))
v.grad
h.remove()  # removes the hook
