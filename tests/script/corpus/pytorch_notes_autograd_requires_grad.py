# Source: https://github.com/pytorch/pytorch/blob/01bcc2a219f01ea508749bce7d29bd47da3ef0d0/docs/source/notes/autograd.rst, "Autograd mechanics", section requires_grad
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
x = torch.randn(5, 5)  # requires_grad=False by default
y = torch.randn(5, 5)  # requires_grad=False by default
z = torch.randn((5, 5), requires_grad=True)
a = x + y
a.requires_grad
b = a + z
b.requires_grad
