# Source: d2l-ai/d2l-en chapter_preliminaries/ndarray.md (https://d2l.ai/chapter_preliminaries/ndarray.html), the page's PyTorch cells from its start to the end of section "Broadcasting"
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch

torch.manual_seed(0)
x = torch.arange(12, dtype=torch.float32)
x

x.numel()

x.shape

X = x.reshape(3, 4)
X

torch.zeros((2, 3, 4))

torch.ones((2, 3, 4))

torch.randn(3, 4)

torch.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])

X[-1], X[1:3]

X[1, 2] = 17
X

X[:2, :] = 12
X

torch.exp(x)

x = torch.tensor([1.0, 2, 4, 8])
y = torch.tensor([2, 2, 2, 2])
x + y, x - y, x * y, x / y, x ** y

X = torch.arange(12, dtype=torch.float32).reshape((3,4))
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
torch.cat((X, Y), dim=0), torch.cat((X, Y), dim=1)

X == Y

X.sum()

a = torch.arange(3).reshape((3, 1))
b = torch.arange(2).reshape((1, 2))
a, b

a + b
