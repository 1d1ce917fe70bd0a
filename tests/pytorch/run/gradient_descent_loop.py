import torch
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
target = torch.tensor([1.0, 0.0])
lr = 0.1
steps = 4
for i in range(steps):
    pred = x @ w
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    print(i, loss.item())
    with torch.no_grad():
        w -= lr * w.grad
        w.grad.zero_()
w
total = torch.zeros(2)
for k in range(1, 7, 2):
    total += k * target
    total
print(total, k)
for j in range(3):
    for m in range(2):
        print(j, m, j * target)
