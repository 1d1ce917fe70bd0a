# Source: https://github.com/karpathy/micrograd/blob/HEAD/test/test_engine.py, the torch half of test_more_ops
# Licence: MIT (Copyright (c) 2020 Andrej Karpathy)
# Edits:
#   - added `import torch` at the top
#   - only the torch half of test_more_ops (the lines from `a = torch.Tensor` to `apt, bpt, gpt`), dedented out of the test function; the micrograd half and the asserts comparing the two left out
import torch
a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
