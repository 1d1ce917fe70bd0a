import torch
w = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], requires_grad=True)
m = torch.zeros(3, 4)
m[0, :3] = w[0].exp()
m[1:, 1:] = w * w
m[:, 0] = w.sum()
m[2, ...] = m[2] * 3
loss = (m * m).sum()
loss.backward()
