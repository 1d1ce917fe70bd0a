# Source: https://github.com/pytorch/pytorch/blob/41dc8ae42309c2969f6ead58e64c5b2b992afae0/docs/source/notes/modules.md, "Modules", sections "A Simple Custom Module" and "Modules as Building Blocks"
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the code blocks of the two sections joined in order, their documented outputs (`: ...` lines) dropped
#   - added `torch.manual_seed(0)` after the imports, before the random draws
#   - the block that moves the net to a CUDA device (`dynamic_net.to(device='cuda')`, `dynamic_net.to(dtype=torch.float64)` and a call on a CUDA tensor) left out
import torch
from torch import nn

torch.manual_seed(0)

class MyLinear(nn.Module):
  def __init__(self, in_features, out_features):
    super().__init__()
    self.weight = nn.Parameter(torch.randn(in_features, out_features))
    self.bias = nn.Parameter(torch.randn(out_features))

  def forward(self, input):
    return (input @ self.weight) + self.bias

m = MyLinear(4, 3)
sample_input = torch.randn(4)
m(sample_input)

for parameter in m.named_parameters():
  print(parameter)

net = nn.Sequential(
  MyLinear(4, 3),
  nn.ReLU(),
  MyLinear(3, 1)
)

sample_input = torch.randn(4)
net(sample_input)

import torch.nn.functional as F

class Net(nn.Module):
  def __init__(self):
    super().__init__()
    self.l0 = MyLinear(4, 3)
    self.l1 = MyLinear(3, 1)
  def forward(self, x):
    x = self.l0(x)
    x = F.relu(x)
    x = self.l1(x)
    return x

net = Net()
for child in net.named_children():
  print(child)

class BigNet(nn.Module):
  def __init__(self):
    super().__init__()
    self.l1 = MyLinear(5, 4)
    self.net = Net()
  def forward(self, x):
    return self.net(self.l1(x))

big_net = BigNet()
for module in big_net.named_modules():
  print(module)

class DynamicNet(nn.Module):
  def __init__(self, num_layers):
    super().__init__()
    self.linears = nn.ModuleList(
      [MyLinear(4, 4) for _ in range(num_layers)])
    self.activations = nn.ModuleDict({
      'relu': nn.ReLU(),
      'lrelu': nn.LeakyReLU()
    })
    self.final = MyLinear(4, 1)
  def forward(self, x, act):
    for linear in self.linears:
      x = linear(x)
      x = self.activations[act](x)
    x = self.final(x)
    return x

dynamic_net = DynamicNet(3)
sample_input = torch.randn(4)
output = dynamic_net(sample_input, 'relu')

for parameter in dynamic_net.named_parameters():
  print(parameter)

# Define a function to initialize Linear weights.
# Note that no_grad() is used here to avoid tracking this computation in the autograd graph.
@torch.no_grad()
def init_weights(m):
  if isinstance(m, nn.Linear):
    nn.init.xavier_normal_(m.weight)
    m.bias.fill_(0.0)

# Apply the function recursively on the module and its submodules.
dynamic_net.apply(init_weights)
