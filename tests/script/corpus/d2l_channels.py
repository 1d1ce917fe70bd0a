# Source: d2l-ai/d2l-en chapter_convolutional-neural-networks/channels.md (https://d2l.ai/chapter_convolutional-neural-networks/channels.html), the page's PyTorch cells from its start to its end
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
#   - `from d2l import torch as d2l` left out (the d2l package); `d2l.corr2d` is the function `corr2d` of the page before (chapter_convolutional-neural-networks/conv-layer.md), its cell put after the imports (with `d2l.zeros(...)` as `torch.zeros(...)` and `d2l.reduce_sum(a)` as `a.sum()`)
#   - the other aliases written as what they are: `d2l.tensor`, `d2l.stack`, `d2l.matmul`, `d2l.normal` as `torch.tensor`, `torch.stack`, `torch.matmul`, `torch.normal`; `d2l.reshape(a, s)` as `a.reshape(s)`, `d2l.reduce_sum(d2l.abs(a))` as `torch.abs(a).sum()`
#   - added `torch.manual_seed(0)` after the import, before the random draws
import torch

torch.manual_seed(0)

def corr2d(X, K):  #@save
    """Compute 2D cross-correlation."""
    h, w = K.shape
    Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i: i + h, j: j + w] * K).sum()
    return Y

def corr2d_multi_in(X, K):
    # Iterate through the 0th dimension (channel) of K first, then add them up
    return sum(corr2d(x, k) for x, k in zip(X, K))

X = torch.tensor([[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
               [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]])
K = torch.tensor([[[0.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 4.0]]])

corr2d_multi_in(X, K)

def corr2d_multi_in_out(X, K):
    # Iterate through the 0th dimension of K, and each time, perform
    # cross-correlation operations with input X. All of the results are
    # stacked together
    return torch.stack([corr2d_multi_in(X, k) for k in K], 0)

K = torch.stack((K, K + 1, K + 2), 0)
K.shape

corr2d_multi_in_out(X, K)

def corr2d_multi_in_out_1x1(X, K):
    c_i, h, w = X.shape
    c_o = K.shape[0]
    X = X.reshape((c_i, h * w))
    K = K.reshape((c_o, c_i))
    # Matrix multiplication in the fully connected layer
    Y = torch.matmul(K, X)
    return Y.reshape((c_o, h, w))

X = torch.normal(0, 1, (3, 3, 3))
K = torch.normal(0, 1, (2, 3, 1, 1))
Y1 = corr2d_multi_in_out_1x1(X, K)
Y2 = corr2d_multi_in_out(X, K)
assert float(torch.abs(Y1 - Y2).sum()) < 1e-6
