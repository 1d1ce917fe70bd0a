# Source: pytorch/pytorch, torch/nn/modules/loss.py as shipped in torch 2.13.0, the docstring of torch.nn.CrossEntropyLoss, example 2 of 2
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
import torch
import torch.nn as nn
# xdoctest: +SKIP
# Example of target with incorrectly specified class probabilities
loss = nn.CrossEntropyLoss()
torch.manual_seed(283)
input = torch.randn(3, 5, requires_grad=True)
target = torch.randn(3, 5)
# Provided target class probabilities are not in range [0,1]
target
# Provided target class probabilities do not sum to 1
target.sum(axis=1)
# No error message and possible misleading loss value
loss(input, target).item()

# Example of target with correctly specified class probabilities
# Use .softmax() to ensure true probability distribution
target_new = target.softmax(dim=1)
# New target class probabilities all in range [0,1]
target_new
# New target class probabilities sum to 1
target_new.sum(axis=1)
loss(input, target_new).item()
