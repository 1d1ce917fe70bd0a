import torch
x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
y = torch.zeros_like(x * 2)
y
s = (x * torch.ones_like(x) + torch.full_like(x, 2.0)).sum()
s.backward()
print(s, x.grad)
torch.full_like(x, 7, dtype=torch.int64)
