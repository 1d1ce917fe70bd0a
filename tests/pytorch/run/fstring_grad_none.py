import torch
x = torch.tensor(2.0, requires_grad=True)
print(f"x: {x.item():>6.2f}")
print(f"grad: {x.grad:>5}")
print("never printed")
