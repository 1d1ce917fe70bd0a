# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.linearize
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
from torch.func import linearize
def fn(x):
    return x.sin()

output, jvp_fn = linearize(fn, torch.zeros(3, 3))
jvp_fn(torch.ones(3, 3))
