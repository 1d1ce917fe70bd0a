# Source: d2l-ai/d2l-en chapter_preliminaries/autograd.md (https://d2l.ai/chapter_preliminaries/autograd.html), the page's PyTorch cells from its start to the end of section "Backward for Non-Scalar Variables"
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
import torch

x = torch.arange(4.0)
x

# Can also create x = torch.arange(4.0, requires_grad=True)
x.requires_grad_(True)
x.grad  # The gradient is None by default

y = 2 * torch.dot(x, x)
y

y.backward()
x.grad

x.grad == 4 * x

x.grad.zero_()  # Reset the gradient
y = x.sum()
y.backward()
x.grad

x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
x.grad
