# Source: pytorch/pytorch, torch/_functorch/apis.py as shipped in torch 2.13.0, the docstring of torch.func.vmap, example 1 of 9
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
torch.dot  # [D], [D] -> []
batched_dot = torch.func.vmap(torch.dot)  # [N, D], [N, D] -> [N]
x, y = torch.randn(2, 5), torch.randn(2, 5)
batched_dot(x, y)
