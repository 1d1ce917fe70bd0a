# Source: https://github.com/yunjey/pytorch-tutorial/blob/HEAD/tutorials/01-basics/pytorch_basics/main.py, section "3. Loading data from numpy"
# Licence: MIT (Copyright (c) 2017 yunjey)
# Edits:
#   - only the section "3. Loading data from numpy", after the file's imports without `torchvision` and `torchvision.transforms` (the other sections use datasets, downloads and files)
import torch 
import torch.nn as nn
import numpy as np


# ================================================================== #
#                     3. Loading data from numpy                     #
# ================================================================== #

# Create a numpy array.
x = np.array([[1, 2], [3, 4]])

# Convert the numpy array to a torch tensor.
y = torch.from_numpy(x)

# Convert the torch tensor to a numpy array.
z = y.numpy()
