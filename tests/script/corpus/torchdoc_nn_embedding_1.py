# Source: pytorch/pytorch, torch/nn/modules/sparse.py as shipped in torch 2.13.0, the docstring of torch.nn.Embedding, example 1 of 3
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `import torch.nn as nn` at the top
#   - added `torch.manual_seed(0)` before the random draws
import torch
import torch.nn as nn
torch.manual_seed(0)
# an Embedding module containing 10 tensors of size 3
embedding = nn.Embedding(10, 3)
# a batch of 2 samples of 4 indices each
input = torch.LongTensor([[1, 2, 4, 5], [4, 3, 2, 9]])
embedding(input)
