import torch
x = torch.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
first, rest = x.split(2)
rest
a, b = x.split(1)
print("not reached")
