import torch

x = torch.tensor([[1., 3., 3., 0., 3., 1.], [2., 2., 1., 1., 0., 2.]], requires_grad=True)
torch.mode(x, 1)
values, indices = torch.topk(x, 2)
indices
torch.kthvalue(x, 3, dim=1).indices
torch.sort(torch.tensor([1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1., 0., 1.]), stable=False).indices
m = torch.mode(x).values.sum() + values.sum()
m.backward()
x.grad
a = torch.tensor([[4., 1.], [1., 3.]], requires_grad=True)
torch.linalg.svdvals(a)
p = torch.linalg.pinv(a)
p
p.sum().backward()
a.grad
s = torch.tensor([[2., 1.], [1., 2.]], requires_grad=True)
torch.linalg.eigvalsh(s)
ident = torch.eye(2, requires_grad=True)
vals, vecs = torch.linalg.eigh(ident)
vecs.sum().backward()
ident.grad
