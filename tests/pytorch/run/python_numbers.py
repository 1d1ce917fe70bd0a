import torch
lr = 0.1
n = 3
w = torch.tensor([1.0, -2.0], requires_grad=True)
loss = (w * w).sum() * n
loss.backward()
with torch.no_grad():
    w2 = w - lr * w.grad
print(lr, n, w2, loss)
lr
print(w.grad * 2, loss.item())
n.grad
