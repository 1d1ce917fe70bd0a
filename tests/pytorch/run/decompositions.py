import torch
A = torch.tensor([[2.0, 0.5, -0.25], [0.5, 3.0, 1.0], [-0.25, 1.0, 5.0]], dtype=torch.float64, requires_grad=True)
torch.linalg.eigh(A)
L, V = torch.linalg.eigh(A)
y = L[0] * L[2] + (V * V)[0, 1]
y.backward()
A.grad
torch.linalg.slogdet(A)
sgn, logabsdet = torch.slogdet(-A)
sgn
torch.linalg.qr(A)
Q, R = torch.linalg.qr(A[:, 0:2])
z = (R * R).sum() + (Q * Q)[2, 0]
z
torch.linalg.svd(A[:, 0:2])
U, S, Vh = torch.linalg.svd(A, full_matrices=False)
S
t = S.sum()
t.backward()
A.grad
