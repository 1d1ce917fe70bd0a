# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.allow_mutation_on_saved_tensors
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    # forward
    a = torch.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b**2).sum()
    b.sin_()
    # backward
    out.sum().backward()
