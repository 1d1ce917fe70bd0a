import torch
a = torch.tensor([0.1, 0.2, 0.3])
torch.set_default_dtype(torch.float64)
b = torch.tensor([0.1, 0.2, 0.3])
print(a, b, a.dtype, b.dtype)
print(a.sum().item(), b.sum().item())
c = torch.ones(2, dtype=torch.float32)
c
c * 2 + 1
d = torch.zeros(2) + 1
d
torch.zeros_like(c)
torch.manual_seed(0)
r = torch.rand(3)
print(r.dtype, r.shape)
torch.set_default_dtype(torch.float32)
print(torch.ones(2), b, torch.rand(2).dtype)
