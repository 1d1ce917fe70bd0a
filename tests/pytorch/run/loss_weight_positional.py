import torch
import torch.nn.functional as F

x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
t = torch.tensor([2, 0])
w = torch.tensor([0.5, 2.0, 1.5])
F.cross_entropy(x, t, w)
F.nll_loss(F.log_softmax(x, 1), t, w, reduction='sum')
p = torch.sigmoid(x)
F.binary_cross_entropy(p, torch.ones(2, 3) * 0.25, torch.tensor([1.0, 2.0, 3.0]))
F.binary_cross_entropy_with_logits(x, torch.ones(2, 3) * 0.25, torch.tensor([1.0, 2.0, 3.0]), pos_weight=torch.tensor([2.0, 1.0, 0.5]))
loss = F.cross_entropy(x, t, w, label_smoothing=0.1)
loss.backward()
x.grad
F.nll_loss(x, t, reduction="sum")
F.nll_loss(x, t, w, reduction="none")
