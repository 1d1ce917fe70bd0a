import torch
x = torch.tensor([1., 2.], requires_grad=True)
y = x ** 2
g = torch.autograd.grad(outputs=y, inputs=x, grad_outputs=torch.ones(2), create_graph=True)
g
print(g[0], g[0].shape)
w = torch.ones(2, requires_grad=True)
z = (x * w).sum()
gx, gw = torch.autograd.grad(z, [x, w], retain_graph=True)
print(gx, gw)
torch.autograd.grad(z, (x, w))
s = (x ** 3).sum()
d, = torch.autograd.grad(s, x, create_graph=True)
d
t = d.sum()
t.backward()
x.grad
ex = torch.exp(x).sum()
torch.autograd.grad(ex, x, None, False, True)
q = torch.sin(x).sum()
torch.autograd.grad(q, x, create_graph=True)[0]
u = torch.ones(2, requires_grad=True)
r = (x * x).sum()
torch.autograd.grad(r, [x, u], allow_unused=True, create_graph=True)
