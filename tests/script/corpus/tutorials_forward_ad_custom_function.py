# Source: https://github.com/pytorch/tutorials/blob/2d52ead6fdcf053698694bfe1c11cd88758f6f11/intermediate_source/forward_ad_usage.py, section "Custom autograd Function"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - the tutorial's prose left out (its docstring, the full-line comments between statements)
#   - preceded by the page's first two imports (`import torch`, `import torch.autograd.forward_ad as fwAD`)
#   - added `torch.manual_seed(0)` after the imports, before the random draws
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO

fn = Fn.apply

primal = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
tangent = torch.randn(10, 10)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent

torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True,
                         check_backward_ad=False, check_undefined_grad=False,
                         check_batched_grad=False)
