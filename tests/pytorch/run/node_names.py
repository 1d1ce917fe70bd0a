import torch
import torch.nn.functional as F
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
x[0]
x[:, 1]
x[0:1]
x[..., 0]
x[:]
x[None]
print(x.sum(), x.sum(dim=0), x.mean(dim=1, keepdim=True))
print(x * 2, x / 2, -x, x ** 2, torch.exp(x))
t = torch.tensor([0.5, -1.0, 2.0])
print(F.mse_loss(x[0], t), F.binary_cross_entropy_with_logits(x[1], torch.sigmoid(t)))
print(torch.relu(t - 1), torch.sigmoid(x).sum(), x @ t)
y = torch.zeros(2, 3)
y[1] = x[0] * 2
y
