# Source: pytorch/pytorch, torch/autograd/grad_mode.py as shipped in torch 2.13.0, the docstring of torch.set_grad_enabled
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
# xdoctest: +SKIP
x = torch.tensor([1.], requires_grad=True)
is_train = False
with torch.set_grad_enabled(is_train):
    y = x * 2
y.requires_grad
_ = torch.set_grad_enabled(True)
y = x * 2
y.requires_grad
_ = torch.set_grad_enabled(False)
y = x * 2
y.requires_grad
