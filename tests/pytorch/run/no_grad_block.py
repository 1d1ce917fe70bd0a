import torch
w = torch.tensor([1.0, -1.0], requires_grad=True)
loss = (w * w * 2).sum()
loss.backward()
with torch.no_grad():
    u = w - w.grad * 0.1
    print(u.requires_grad)
    u
print(u)
w.grad
