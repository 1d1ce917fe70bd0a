# Source: https://github.com/yunjey/pytorch-tutorial/blob/HEAD/tutorials/01-basics/pytorch_basics/main.py, section "2. Basic autograd example 2"
# Licence: MIT (Copyright (c) 2017 yunjey)
# Edits:
#   - only the section "2. Basic autograd example 2", after the file's imports without `torchvision` and `torchvision.transforms` (the other sections use datasets, downloads and files)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch 
import torch.nn as nn
import numpy as np


# ================================================================== #
#                    2. Basic autograd example 2                     #
# ================================================================== #

# Create tensors of shape (10, 3) and (10, 2).
torch.manual_seed(0)
x = torch.randn(10, 3)
y = torch.randn(10, 2)

# Build a fully connected layer.
linear = nn.Linear(3, 2)
print ('w: ', linear.weight)
print ('b: ', linear.bias)

# Build loss function and optimizer.
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(linear.parameters(), lr=0.01)

# Forward pass.
pred = linear(x)

# Compute loss.
loss = criterion(pred, y)
print('loss: ', loss.item())

# Backward pass.
loss.backward()

# Print out the gradients.
print ('dL/dw: ', linear.weight.grad) 
print ('dL/db: ', linear.bias.grad)

# 1-step gradient descent.
optimizer.step()

# You can also perform gradient descent at the low level.
# linear.weight.data.sub_(0.01 * linear.weight.grad.data)
# linear.bias.data.sub_(0.01 * linear.bias.grad.data)

# Print out the loss after 1-step gradient descent.
pred = linear(x)
loss = criterion(pred, y)
print('loss after 1 step optimization: ', loss.item())
