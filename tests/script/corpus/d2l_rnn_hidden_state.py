# Source: d2l-ai/d2l-en chapter_recurrent-neural-networks/rnn.md (https://d2l.ai/chapter_recurrent-neural-networks/rnn.html), the page's PyTorch cells from its start to its end (section "Recurrent Neural Networks with Hidden States")
# Licence: the d2l book's sample code: modified MIT licence (LICENSE-SAMPLECODE; text CC BY-SA 4.0)
# Edits:
#   - the PyTorch cells of the page's tabs, joined in page order (the other frameworks' cells left out)
#   - `from d2l import torch as d2l` left out (the d2l package), and its aliases written as what they are: `d2l.randn`, `d2l.matmul`, `d2l.concat` as `torch.randn`, `torch.matmul`, `torch.cat`
#   - added `torch.manual_seed(0)` after the import, before the random draws
import torch

torch.manual_seed(0)

X, W_xh = torch.randn(3, 1), torch.randn(1, 4)
H, W_hh = torch.randn(3, 4), torch.randn(4, 4)
torch.matmul(X, W_xh) + torch.matmul(H, W_hh)

torch.matmul(torch.cat((X, H), 1), torch.cat((W_xh, W_hh), 0))
