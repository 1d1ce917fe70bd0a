# A PyTorch script with a def, a loop and an nn.Linear: grad, jacobian, explain, graph differentiate its last loss.backward().
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])
target = torch.tensor([[1.0], [-1.0]])


def loss_fn(prediction, target):
    return ((prediction - target) ** 2).mean()


optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(torch.tanh(model(x)), target)
    loss.backward()
    optimizer.step()
print(loss.item())
