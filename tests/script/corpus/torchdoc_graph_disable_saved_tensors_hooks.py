# Source: pytorch/pytorch, torch/autograd/graph.py as shipped in torch 2.13.0, the docstring of torch.autograd.graph.disable_saved_tensors_hooks
# Licence: BSD-3-Clause (PyTorch)
# Edits:
#   - added `import torch` at the top
#   - the doctest prompts (`>>> `, `... `) removed and the documented outputs dropped
import torch
# xdoctest: +SKIP(failing)
message = "saved tensors default hooks are disabled"
with torch.autograd.graph.disable_saved_tensors_hooks(message):
    # Raises RuntimeError: saved tensors default hooks are disabled
    with torch.autograd.graph.save_on_cpu():
        pass
