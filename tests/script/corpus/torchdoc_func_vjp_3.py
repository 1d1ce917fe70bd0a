# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.vjp, example 3 of 7
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
x = torch.randn([5])
f = lambda x: {"first": x.sin(), "second": x.cos()}
(_, vjpfunc) = torch.func.vjp(f, x)
cotangents = {"first": torch.ones([5]), "second": torch.ones([5])}
vjps = vjpfunc(cotangents)
assert torch.allclose(vjps[0], x.cos() + -x.sin())
