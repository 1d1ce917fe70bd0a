# Source: pytorch/pytorch, torch/nn/modules/linear.py as shipped in torch 2.13.0, the docstring of torch.nn.Identity
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
torch.manual_seed(0)
m = nn.Identity(54, unused_argument1=0.1, unused_argument2=False)
input = torch.randn(128, 20)
output = m(input)
print(output.size())
