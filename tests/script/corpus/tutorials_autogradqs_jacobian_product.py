# Source: https://github.com/pytorch/tutorials/blob/1532c0de875b79f541371438d8d1d08be18f87de/beginner_source/basics/autogradqs_tutorial.py, section "Optional Reading: Tensor Gradients and Jacobian Products"
# Licence: BSD-3-Clause (PyTorch tutorials)
# Edits:
#   - added `import torch` at the top
#   - the tutorial's prose left out (its docstring and the `####` comment blocks between cells)
import torch
inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
