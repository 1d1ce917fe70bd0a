import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
y.retain_grad()
s = (y * 2).sum()
s.backward()
y.grad
print(y.requires_grad, y.is_leaf, x.is_leaf, s.requires_grad)
x.grad.zero_()
(x ** 3).mean().backward()
x.grad
print(f"loss {s.item():.4f}")
print(f"{s:.2f} {s} {s!r}", f"{x.shape} {x.dtype}", sep=" | ")
print(f"{x}")
print(f"{s.item():>10.3e}|{3:>4}|{'left':<6}|{None}|{x.grad!s}")
f"y = {y.sum().item()}"
for i in range(2):
    step = (x * i).sum()
    print(f"step {i}: {step.item():.1f}")
