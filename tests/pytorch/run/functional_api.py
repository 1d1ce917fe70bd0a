import torch
from torch.autograd.functional import jacobian
def f(x):
    return x ** 2
def s(x):
    return (x ** 3).sum()
def g(x, w):
    return (x * w).sum()
x = torch.tensor([1., 2.], requires_grad=True)
w = torch.tensor([3., 4.])
torch.autograd.functional.jacobian(f, x)
torch.autograd.functional.jacobian(g, (x, w))
torch.autograd.functional.hessian(s, x)
torch.autograd.functional.hessian(g, (x, w))
torch.autograd.functional.vjp(f, x, torch.ones(2))
torch.autograd.functional.vjp(s, x)
out, vs = torch.autograd.functional.vjp(g, (x, w))
print(out, vs)
torch.autograd.functional.jvp(f, x, torch.ones(2))
torch.autograd.functional.jvp(g, (x, w), (torch.ones(2), torch.ones(2)))
torch.func.grad(s)(x)
torch.func.grad(g)(x, w)
torch.func.grad(g, argnums=1)(x, w)
J = torch.autograd.functional.jacobian(lambda t: t.sum() * t, w)
print(J)
dsdx = torch.func.grad(s)(w)
dsdx
