import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * x).sum()
y.backward(retain_graph=True)
y.backward()
x.grad
