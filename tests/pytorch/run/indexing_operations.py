import torch
x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
i = torch.tensor([[0, 0], [1, 0]])
g = torch.gather(x, 1, i)
g
s = torch.scatter_add(x, 0, i, x * 2)
s
r = torch.tensor([1, 1])
t = x.index_select(0, r)
t
m = torch.masked_select(x, x > 2)
m
c = torch.tensor([0, 2])
o = torch.nn.functional.one_hot(c, 3)
o
n = torch.nonzero(x > 2)
n
q = torch.tensor([0, 0])
a = torch.index_add(x, 0, q, x)
a
z = x.long()
z
d = x.double()
d
