import torch
sq = lambda t: t * t
scaled = lambda t, k: torch.tanh(t * k) + sq(t)
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = torch.tensor([1.5, 0.25, -2.0], requires_grad=True)
y = scaled(x, w).sum() + sq(w).mean()
y.backward()
print(x.grad, w.grad)
