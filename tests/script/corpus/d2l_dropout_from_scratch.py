# Source: d2l-ai/d2l-en chapter_multilayer-perceptrons/dropout.md (https://d2l.ai/chapter_multilayer-perceptrons/dropout.html), the page's PyTorch cells from its start to the end of section "Implementation from Scratch" before "Defining the Model" (the model cells need d2l's trainer and the FashionMNIST download)
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
#   - `from d2l import torch as d2l` left out (the d2l package)
#   - in the cell shared by all frameworks, only the PyTorch branch of `if tab.selected(...)` kept, dedented
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
from torch import nn

torch.manual_seed(0)

def dropout_layer(X, dropout):
    assert 0 <= dropout <= 1
    if dropout == 1: return torch.zeros_like(X)
    mask = (torch.rand(X.shape) > dropout).float()
    return mask * X / (1.0 - dropout)

X = torch.arange(16, dtype = torch.float32).reshape((2, 8))
print('dropout_p = 0:', dropout_layer(X, 0))
print('dropout_p = 0.5:', dropout_layer(X, 0.5))
print('dropout_p = 1:', dropout_layer(X, 1))
