import torch

z = torch.tensor([1 + 2j, 0.5 - 1j], requires_grad=True)
s = (z * z).sum()
print(s)
s.backward()
