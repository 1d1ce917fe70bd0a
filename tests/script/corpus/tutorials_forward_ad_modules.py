# Source: https://github.com/pytorch/tutorials/blob/2d52ead6fdcf053698694bfe1c11cd88758f6f11/intermediate_source/forward_ad_usage.py, sections "Usage with Modules" and "Using the functional Module API"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring, the full-line comments between statements)
#   - preceded by the page's first two imports (`import torch`, `import torch.autograd.forward_ad as fwAD`)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
import torch.autograd.forward_ad as fwAD

import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(5, 5)
input = torch.randn(16, 5)

params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}

with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))

    out = model(input)
    jvp = fwAD.unpack_dual(out).tangent

from torch.func import functional_call

model = nn.Linear(5, 5)

dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, input)
    jvp2 = fwAD.unpack_dual(out).tangent

assert torch.allclose(jvp, jvp2)
