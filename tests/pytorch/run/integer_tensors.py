import torch

i = torch.tensor([0, 2])
i
i.dtype
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x[i] * 2
y
j = torch.tensor([1, 0], dtype=torch.int32)
j
j * 2
i / 2
i // 2
i + 1
i + x[:2]
i.sum()
a = torch.arange(3)
a
f = torch.full((2,), 7)
f
b = torch.tensor([1, 0, 1], dtype=torch.bool)
x[b]
x[x > 1]
x[[2, 2, 0]]
m = torch.zeros(2, 3)
m[:, [0, 2]]
s = (y.sum() + x[x > 1].sum() + x[[2, 2]].sum())
s.backward()
x.grad
k = torch.tensor([1, 2], requires_grad=True)
