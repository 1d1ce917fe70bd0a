import torch as T
import torch.nn.functional as nnf
from torch.nn import functional as fn
from torch import nn

# torch's modules under names of the script's own
x = T.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = nnf.relu(x) + fn.gelu(x) + nn.functional.silu(x) + T.sin(x)
print(y)
y.sum().backward()
print(x.grad)
print(T.linalg.vector_norm(x))
T.cbrt(x)
