# Source: https://github.com/rasbt/LLMs-from-scratch/blob/28c65cdfbc3338e2e040016eea4b7fdf556e4d57/appendix-A/01_main-chapter-code/code-part1.ipynb, sections A.3 "Seeing models as computation graphs" and A.4 "Automatic differentiation made easy" (Build a Large Language Model From Scratch, appendix A)
# Licence: Apache-2.0 (Copyright 2023-2026 Sebastian Raschka, LLMs-from-scratch)
# Edits:
#   - the code cells of sections A.3 and A.4 joined in order, after the notebook's `import torch` (cell 3 without its version print)
import torch

import torch.nn.functional as F

y = torch.tensor([1.0])  # true label
x1 = torch.tensor([1.1]) # input feature
w1 = torch.tensor([2.2]) # weight parameter
b = torch.tensor([0.0])  # bias unit

z = x1 * w1 + b          # net input
a = torch.sigmoid(z)     # activation & output

loss = F.binary_cross_entropy(a, y)
print(loss)

import torch.nn.functional as F
from torch.autograd import grad

y = torch.tensor([1.0])
x1 = torch.tensor([1.1])
w1 = torch.tensor([2.2], requires_grad=True)
b = torch.tensor([0.0], requires_grad=True)

z = x1 * w1 + b 
a = torch.sigmoid(z)

loss = F.binary_cross_entropy(a, y)

grad_L_w1 = grad(loss, w1, retain_graph=True)
grad_L_b = grad(loss, b, retain_graph=True)

print(grad_L_w1)
print(grad_L_b)

loss.backward()

print(w1.grad)
print(b.grad)
