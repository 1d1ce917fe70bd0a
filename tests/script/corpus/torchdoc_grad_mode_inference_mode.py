# Source: pytorch/pytorch, torch/autograd/grad_mode.py as shipped in torch 2.13.0, the docstring of torch.inference_mode
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_AUTOGRAD)
import torch
x = torch.ones(1, 2, 3, requires_grad=True)
with torch.inference_mode():
    y = x * x
y.requires_grad
# xdoctest: +SKIP("want string isn't quite right")
y._version
@torch.inference_mode()
def func(x):
    return x * x
out = func(x)
out.requires_grad
@torch.inference_mode()
def doubler(x):
    return x * 2
out = doubler(x)
out.requires_grad
