# torch.meshgrid: one result per operand (unpacked, printed as a tuple, taken by [k]), both
# indexings, a list or tuple of tensors, 0-d operands, integer operands, and the gradient of
# each operand summed over its copies.
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([-0.5, 4.0], requires_grad=True)
gx, gy = torch.meshgrid(x, y, indexing="ij")
gx
gy
torch.meshgrid(x, y, indexing="xy")
print(torch.meshgrid([x, y], indexing="ij"))
a, b, c = torch.meshgrid((y, x, y * 2), indexing="xy")
print(a.shape, b.shape, c.shape)
c
torch.meshgrid(x, indexing="ij")
torch.meshgrid(x[0], y, indexing="xy")
p, q = torch.meshgrid(torch.tensor(2.0), torch.tensor(3.0), indexing="ij")
print(p, q)
i, j = torch.meshgrid(torch.arange(3), torch.tensor([5, 7]), indexing="ij")
print(i + j)
d = torch.tensor([0.25, 0.5], dtype=torch.float64, requires_grad=True)
torch.meshgrid(d, d, indexing="xy")[1]
s = (gx * gy ** 2).sum() + (a * b * c).sum() + torch.meshgrid(x, indexing="ij")[0].sum()
s.backward()
x.grad
y.grad
