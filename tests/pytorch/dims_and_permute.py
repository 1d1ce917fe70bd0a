import torch
a = torch.tensor([[[1.0, -2.0], [0.5, 3.0], [2.0, 1.0]]], requires_grad=True)
b = a.permute(2, 0, 1)
c = torch.permute(a, (1, 2, 0)).reshape((3, 2))
s = b.sum(dim=(0, 2)) + torch.mean(a * a, dim=[-1, 0]).exp()
out = s.sum() + c.var((0, 1)) + torch.logsumexp(a, (1, 2)).sum() + a.amax(dim=(0, 1)).sum()
out.backward()
