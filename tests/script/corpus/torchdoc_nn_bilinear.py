# Source: pytorch/pytorch, torch/nn/modules/linear.py as shipped in torch 2.13.0, the docstring of torch.nn.Bilinear
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
torch.manual_seed(0)
m = nn.Bilinear(20, 30, 40)
input1 = torch.randn(128, 20)
input2 = torch.randn(128, 30)
output = m(input1, input2)
print(output.size())
