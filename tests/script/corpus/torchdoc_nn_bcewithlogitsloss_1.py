# Source: pytorch/pytorch, torch/nn/modules/loss.py as shipped in torch 2.13.0, the docstring of torch.nn.BCEWithLogitsLoss, example 1 of 2
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
import torch
import torch.nn as nn
target = torch.ones([10, 64], dtype=torch.float32)  # 64 classes, batch size = 10
output = torch.full([10, 64], 1.5)  # A prediction (logit)
pos_weight = torch.ones([64])  # All weights are equal to 1
criterion = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
criterion(output, target)  # -log(sigmoid(1.5))
