# Source: pytorch/pytorch, torch/autograd/grad_mode.py as shipped in torch 2.13.0, the docstring of torch.enable_grad
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
# xdoctest: +SKIP
x = torch.tensor([1.], requires_grad=True)
with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
y.requires_grad
y.backward()
x.grad
@torch.enable_grad()
def doubler(x):
    return x * 2
with torch.no_grad():
    z = doubler(x)
z.requires_grad
@torch.enable_grad()
def tripler(x):
    return x * 3
with torch.no_grad():
    z = tripler(x)
z.requires_grad
