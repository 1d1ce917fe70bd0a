import torch

# complex leaves: the gradient of a real function is dL/dx + i dL/dy (|z|^2 gives 2z)
z = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
y = (z.abs() ** 2).sum()
y.backward()
print(z)
print(z.grad)
print(z * 2, z.real, z.imag)
print(torch.tensor([1.5 + 2j, -3e-5j]))

# real leaves through complex numbers: their gradient is the real part
x = torch.tensor([1.0, 2.0], requires_grad=True)
c = torch.complex(x, x * 2) * (1 - 1j)
print(c, c.dtype)
w = torch.polar(x, x).conj()
print(w)
print(c.sum().item())
loss = torch.angle(c + 1j).sum() + torch.sigmoid(c).abs().mean()
loss.backward()
print(x.grad)

# complex128, a vector-Jacobian product with a complex v, autograd.grad
d = torch.tensor([1 + 1j, 0.5 - 2j], dtype=torch.complex128, requires_grad=True)
u = torch.log(d) * torch.sqrt(d)
v = torch.tensor([1, 1j], dtype=torch.complex128)
u.backward(v)
print(d.grad)
g, = torch.autograd.grad(torch.view_as_real(d * d).sum(), d)
print(g)
