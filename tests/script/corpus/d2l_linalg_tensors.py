# Source: d2l-ai/d2l-en chapter_preliminaries/linear-algebra.md (https://d2l.ai/chapter_preliminaries/linear-algebra.html), the page's PyTorch cells from its start to the end of section "Tensors"
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
import torch

x = torch.tensor(3.0)
y = torch.tensor(2.0)

x + y, x * y, x / y, x**y

x = torch.arange(3)
x

x[2]

len(x)

x.shape

A = torch.arange(6).reshape(3, 2)
A

A.T

A = torch.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]])
A == A.T

torch.arange(24).reshape(2, 3, 4)
