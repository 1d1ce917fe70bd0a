import torch
a = torch.tensor([0.1, 0.2, 0.3])
print(a)
s = a.sum()
print(s.item())
print(a.tolist())
b = torch.tensor([[1e-5, 1.0], [250.0, -3.5]])
b
c = torch.tensor([1e9, 2.0, -0.0])
print(c, c.dtype, c.shape)
d = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
print(d, d.sum().item())
f = torch.ones(2, 3, dtype=torch.double)
g = f / 3
g
z = torch.zeros(2, 3)
print(z.shape, (a * 3).numel(), a.dim())
print("done", 1, 2.5, None, sep=" | ")
