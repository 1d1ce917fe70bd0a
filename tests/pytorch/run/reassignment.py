import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y = y + 1
print(y)
x = x + 1
print(x)
print(x.is_leaf, x.requires_grad)
z = (x * y).sum()
z.backward()
z
y
