# Source: pytorch/pytorch, torch/_functorch/apis.py as shipped in torch 2.13.0, the docstring of torch.func.vmap, example 7 of 9
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
f = lambda dict: torch.dot(dict["x"], dict["y"])
x, y = torch.randn(2, 5), torch.randn(5)
input = {"x": x, "y": y}
batched_dot = torch.vmap(f, in_dims=({"x": 0, "y": None},))
batched_dot(input)
