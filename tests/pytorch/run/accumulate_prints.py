import torch
x = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
print(x.grad)
loss = (x ** 2).mean()
loss
loss.backward(retain_graph=True)
print(x.grad)
loss.backward()
print("after two calls:", x.grad)
w = torch.ones(2, requires_grad=True)
out = (w * 3).sum()
out.backward()
print(w.grad)
out2 = (w * w).sum()
out2.backward()
w.grad
w.grad.zero_()
print(w.grad)
