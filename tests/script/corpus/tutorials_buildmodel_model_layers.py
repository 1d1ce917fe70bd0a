# Source: https://github.com/pytorch/tutorials/blob/c53e7d4efc0e39e455c531d21ec7db28ba220214/beginner_source/basics/buildmodel_tutorial.py, "Build the Neural Network" (Learn the Basics), section "Model Layers" (nn.Flatten, nn.Linear, nn.ReLU, nn.Sequential, nn.Softmax)
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring, the full-line comments between statements)
#   - of its imports, `import torch` and `from torch import nn` kept (os, DataLoader and torchvision are not used in this section)
#   - the sections before "Model Layers" (the device, the NeuralNetwork class) and after "nn.Softmax" left out
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
from torch import nn
torch.manual_seed(0)

input_image = torch.rand(3,28,28)
print(input_image.size())

flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())

layer1 = nn.Linear(in_features=28*28, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())

print(f"Before ReLU: {hidden1}\n\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")

seq_modules = nn.Sequential(
    flatten,
    layer1,
    nn.ReLU(),
    nn.Linear(20, 10)
)
input_image = torch.rand(3,28,28)
logits = seq_modules(input_image)

softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
