# Source: pytorch/pytorch, torch/nn/modules/pooling.py as shipped in torch 2.13.0, the docstring of torch.nn.MaxPool2d
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
torch.manual_seed(0)
# pool of square window of size=3, stride=2
m = nn.MaxPool2d(3, stride=2)
# pool of non-square window
m = nn.MaxPool2d((3, 2), stride=(2, 1))
input = torch.randn(20, 16, 50, 32)
output = m(input)
