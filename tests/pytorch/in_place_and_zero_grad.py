import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y += x ** 2
y *= 3
y.sub_(1)
s = y.sum()
s.backward(retain_graph=True)
x.grad.zero_()
s.backward()
print(x.grad)
