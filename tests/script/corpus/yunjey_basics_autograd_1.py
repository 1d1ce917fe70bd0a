# Source: https://github.com/yunjey/pytorch-tutorial/blob/HEAD/tutorials/01-basics/pytorch_basics/main.py, section "1. Basic autograd example 1"
# Licence: MIT (Copyright (c) 2017 yunjey)
# Edits:
#   - only the section "1. Basic autograd example 1", after the file's imports without `torchvision` and `torchvision.transforms` (the other sections use datasets, downloads and files)
import torch 
import torch.nn as nn
import numpy as np


# ================================================================== #
#                     1. Basic autograd example 1                    #
# ================================================================== #

# Create tensors.
x = torch.tensor(1., requires_grad=True)
w = torch.tensor(2., requires_grad=True)
b = torch.tensor(3., requires_grad=True)

# Build a computational graph.
y = w * x + b    # y = 2 * x + 3

# Compute gradients.
y.backward()

# Print out the gradients.
print(x.grad)    # x.grad = 2 
print(w.grad)    # w.grad = 1 
print(b.grad)    # b.grad = 1
