# Source: pytorch/pytorch, torch/_functorch/eager_transforms.py as shipped in torch 2.13.0, the docstring of torch.func.jvp, example 1 of 2
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
from torch.func import jvp
x = torch.randn([])
f = lambda x: x * torch.tensor([1.0, 2.0, 3])
value, grad = jvp(f, (x,), (torch.tensor(1.0),))
assert torch.allclose(value, f(x))
assert torch.allclose(grad, torch.tensor([1.0, 2, 3]))
