# Source: d2l-ai/d2l-en chapter_builders-guide/parameters.md (https://d2l.ai/chapter_builders-guide/parameters.html), the page's PyTorch cells from its start to the end of section "[**Parameter Access**]"
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.LazyLinear(8),
                    nn.ReLU(),
                    nn.LazyLinear(1))

X = torch.rand(size=(2, 4))
net(X).shape

net[2].state_dict()

type(net[2].bias), net[2].bias.data

net[2].weight.grad == None

[(name, param.shape) for name, param in net.named_parameters()]
