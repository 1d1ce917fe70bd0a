# Source: pytorch/pytorch, torch/nn/modules/activation.py as shipped in torch 2.13.0, the docstring of torch.nn.SELU
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
torch.manual_seed(0)
m = nn.SELU()
input = torch.randn(2)
output = m(input)
