# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.jvp, example 2 of 2
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
from torch.func import jvp
x = torch.randn(5)
y = torch.randn(5)
f = lambda x, y: (x * y)
_, output = jvp(f, (x, y), (torch.ones(5), torch.ones(5)))
assert torch.allclose(output, x + y)
