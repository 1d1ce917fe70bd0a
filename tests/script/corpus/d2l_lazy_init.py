# Source: d2l-ai/d2l-en chapter_builders-guide/lazy-init.md (https://d2l.ai/chapter_builders-guide/lazy-init.html), the page's PyTorch cells but the first and the last
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
#   - the first cell's `from d2l import torch as d2l` left out (the d2l package), and the last cell (a method added to d2l.Module) left out
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))

net[0].weight

X = torch.rand(2, 20)
net(X)

net[0].weight.shape
