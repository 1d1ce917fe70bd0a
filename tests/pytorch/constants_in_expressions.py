import torch
import torch.nn.functional as F
x = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], requires_grad=True)
k = torch.tensor([2.0, -1.0], requires_grad=True)
a = x + torch.eye(2, 3)
a.retain_grad()
b = k[0] * torch.ones(3) + torch.full((3,), 0.5) * k[1]
loss = F.mse_loss(x, torch.zeros(2, 3)) + (a * b).sum() + (torch.zeros(3) / 3 + b).mean()
loss.backward()
print(f"loss {loss.item():.4f}")
print(x.grad, k.grad)
print(f"a.grad: {a.grad}")
