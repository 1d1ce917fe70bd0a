import torch
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
out = (y * y).mean()
out.backward()
print(x.grad)
print(y.grad)
y.grad
print(y.grad, y.grad)
