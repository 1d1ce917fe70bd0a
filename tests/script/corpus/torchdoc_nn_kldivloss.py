# Source: pytorch/pytorch, torch/nn/modules/loss.py as shipped in torch 2.13.0, the docstring of torch.nn.KLDivLoss
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `import torch.nn.functional as F` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
kl_loss = nn.KLDivLoss(reduction="batchmean")
# input should be a distribution in the log space
input = F.log_softmax(torch.randn(3, 5, requires_grad=True), dim=1)
# Sample a batch of distributions. Usually this would come from the dataset
target = F.softmax(torch.rand(3, 5), dim=1)
output = kl_loss(input, target)

kl_loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
log_target = F.log_softmax(torch.rand(3, 5), dim=1)
output = kl_loss(input, log_target)
