import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([0.5, -1., 2.], requires_grad=True)
s = (x ** 2 * w).sum()
g = torch.autograd.grad(s, x, retain_graph=True)[0]
print(g)
torch.autograd.grad(outputs=s, inputs=(w,))
