# Source: pytorch/pytorch, torch/_functorch/apis.py as shipped in torch 2.13.0, the docstring of torch.func.grad, example 2 of 5
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` before the random draws
import torch
torch.manual_seed(0)
# xdoctest: +SKIP
from torch.func import grad, vmap
batch_size, feature_size = 3, 5

def model(weights, feature_vec):
# Very simple linear model with activation
    assert feature_vec.dim() == 1
    return feature_vec.dot(weights).relu()

def compute_loss(weights, example, target):
    y = model(weights, example)
    return ((y - target) ** 2).mean()  # MSELoss

weights = torch.randn(feature_size, requires_grad=True)
examples = torch.randn(batch_size, feature_size)
targets = torch.randn(batch_size)
inputs = (weights, examples, targets)
grad_weight_per_example = vmap(grad(compute_loss), in_dims=(None, 0, 0))(
    *inputs
)
