import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(f"{x.tolist()}", f"{x[0].tolist():>5}")
print(f"{x.tolist():>5}")
print("never printed")
