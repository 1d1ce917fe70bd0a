import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([0.5, -1., 2.], requires_grad=True)
y = x ** 2 * w
v = torch.tensor([1., 0.1, 0.01])
gx, gw = torch.autograd.grad(outputs=y, inputs=[x, w], grad_outputs=v)
print(gx, gw)
