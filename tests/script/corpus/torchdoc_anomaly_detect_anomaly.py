# Source: pytorch/pytorch, torch/autograd/anomaly_mode.py as shipped in torch 2.13.0, the docstring of torch.autograd.detect_anomaly
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
#   - added `torch.manual_seed(0)` after the imports, before the random draws
# xdoctest: +REQUIRES(env:TORCH_DOCTEST_ANOMALY)
import torch
from torch import autograd
torch.manual_seed(0)
class MyFunc(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        # Error during the backward pass
        raise RuntimeError("Some error in backward")
        return gO.clone()
def run_fn(a):
    out = MyFunc.apply(a)
    return out.sum()
inp = torch.rand(10, 10, requires_grad=True)
out = run_fn(inp)
out.backward()
with autograd.detect_anomaly():
    inp = torch.rand(10, 10, requires_grad=True)
    out = run_fn(inp)
    out.backward()
