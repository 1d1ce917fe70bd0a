import torch
x = torch.tensor([[1., 3., 3., 0.], [2., 0., 5., 5.], [4., 4., 1., 2.]], requires_grad=True)
values, indices = torch.max(x, 1)
values
indices
torch.max(x, 1)
print(x.sort(descending=True))
torch.min(x, dim=0, keepdim=True)
a, b = x.split(3, dim=1)
b
x.split([1, 3], 1)
torch.var_mean(x, 1)
x.unbind()
torch.topk(x, 2, dim=0).indices
torch.max(x)
torch.median(x)
torch.chunk(x, 2)
x.cummax(1)
torch.argmax(x, 1)
x.argsort(dim=0)
x.max(dim=1).values + torch.max(x, 1)[0]
m = x.sort(descending=True).values
s = values.sum() + m[0, 0] + torch.median(x, 0).values.sum() + b.sum()
s.backward()
x.grad
