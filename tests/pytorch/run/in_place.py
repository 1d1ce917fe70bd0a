import torch
x = torch.tensor([1., 2.], requires_grad=True)
b = x * 2
b += 1
print(b)
b -= 1
b
b *= 2
b /= 2
print(b)
b.add_(1)
b.mul_(2)
b.sub_(1)
b.div_(2)
b **= 2
b
c = torch.ones(2)
a = c
c += x
print(c, a)
d = torch.ones(2)
d *= x
d
d.pow_(2)
s = (b * d).sum()
s.backward()
x.grad
e2 = x * 1
e2.zero_()
q = torch.ones(3)
q.zero_()
with torch.no_grad():
    x -= 0.1 * x.grad
    x.mul_(2)
x
x.grad.zero_()
x
