import torch
def f(x):
    return (x ** 2).sum()
def loss(x, w):
    """The loss."""
    h = x * w
    s = torch.sin(h) + w
    return (s * s).mean()
sq = lambda t: t * t
x = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([0.5, -1., 2.], requires_grad=True)
y = f(x)
y
l = loss(x, w=w) + f(sq(x))
l
l.backward()
print(x.grad, w.grad)
print(sq(w))
