# Source: pytorch/pytorch, torch/nn/init.py as shipped in torch 2.13.0, the docstring of torch.nn.init.normal_
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
torch.manual_seed(0)
w = torch.empty(3, 5)
nn.init.normal_(w)
