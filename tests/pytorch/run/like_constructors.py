import torch
x = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], requires_grad=True)
z = torch.zeros_like(x)
z
torch.ones_like(x, dtype=torch.float64)
f = torch.full_like(x, 0.5)
print(f, torch.full_like(x, fill_value=-2.0))
print(torch.empty_like(x).shape, torch.empty_like(x, dtype=torch.double).dtype)
noise = torch.randn_like(x)
u = x * torch.rand_like(x) + noise
u
w = torch.ones_like(x, requires_grad=True)
loss = (w * x + torch.zeros_like(w)).sum()
loss.backward()
print(w.grad, x.grad)
y = x[0]
torch.zeros_like(y) + y
