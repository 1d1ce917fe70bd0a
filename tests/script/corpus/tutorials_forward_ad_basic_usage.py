# Source: https://github.com/pytorch/tutorials/blob/2d52ead6fdcf053698694bfe1c11cd88758f6f11/intermediate_source/forward_ad_usage.py, section "Basic Usage"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring, the full-line comments between statements)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
primal = torch.randn(10, 10)
tangent = torch.randn(10, 10)

def fn(x, y):
    return x ** 2 + y ** 2

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent

    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent

    plain_tensor = torch.randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)

    jvp = fwAD.unpack_dual(dual_output).tangent

assert fwAD.unpack_dual(dual_output).tangent is None
