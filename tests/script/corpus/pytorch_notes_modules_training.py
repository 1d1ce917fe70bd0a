# Source: https://github.com/pytorch/pytorch/blob/41dc8ae42309c2969f6ead58e64c5b2b992afae0/docs/source/notes/modules.md, "Modules", section "Neural Network Training with Modules"
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - preceded by the note's imports and its MyLinear and Net classes (section "Modules as Building Blocks"), which the section uses
#   - added `torch.manual_seed(0)` after the imports, before the random draws
#   - the training loop shortened from 10000 to 1000 steps
#   - the `...` placeholder lines around `net.eval()` left out; the documented outputs (`: ...` lines) dropped
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)

class MyLinear(nn.Module):
  def __init__(self, in_features, out_features):
    super().__init__()
    self.weight = nn.Parameter(torch.randn(in_features, out_features))
    self.bias = nn.Parameter(torch.randn(out_features))

  def forward(self, input):
    return (input @ self.weight) + self.bias

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

# Create the network (from previous section) and optimizer
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=1e-4, weight_decay=1e-2, momentum=0.9)

# Run a sample training loop that "teaches" the network
# to output the constant zero function
for _ in range(1000):
  input = torch.randn(4)
  output = net(input)
  loss = torch.abs(output)
  net.zero_grad()
  loss.backward()
  optimizer.step()

# After training, switch the module to eval mode to do inference, compute performance metrics, etc.
# (see discussion below for a description of training and evaluation modes)
net.eval()

print(net.l1.weight)

class ModalModule(nn.Module):
  def __init__(self):
    super().__init__()

  def forward(self, x):
    if self.training:
      # Add a constant only in training mode.
      return x + 1.
    else:
      return x


m = ModalModule()
x = torch.randn(4)

print('training mode output: {}'.format(m(x)))

m.eval()
print('evaluation mode output: {}'.format(m(x)))
