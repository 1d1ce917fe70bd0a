import torch
import torch.nn.functional as F
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
x = torch.tensor([1.0, -2.0])
h = F.relu(w @ x) + torch.sigmoid(w.sum(dim=1))
out = h.pow(2).mean() + w.T.exp().sum()
out.backward()
