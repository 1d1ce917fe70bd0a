# Source: pytorch/pytorch, torch/_tensor.py as shipped in torch 2.13.0, the docstring of torch.Tensor.register_post_accumulate_grad_hook
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
v = torch.tensor([0., 0., 0.], requires_grad=True)
lr = 0.01
# simulate a simple SGD update
h = v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-lr))
v.backward(torch.tensor([1., 2., 3.]))
v
h.remove()  # removes the hook
