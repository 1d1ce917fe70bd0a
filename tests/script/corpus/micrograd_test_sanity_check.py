# Source: https://github.com/karpathy/micrograd/blob/HEAD/test/test_engine.py, the torch half of test_sanity_check
# Licence: MIT (Copyright (c) 2020 Andrej Karpathy)
# Edits:
#   - added `import torch` at the top
#   - only the torch half of test_sanity_check (the lines from `x = torch.Tensor` to `xpt, ypt`), dedented out of the test function; the micrograd half and the asserts comparing the two left out
import torch
x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
