"""``torch.nn.functional``'s operations, each an entry of the op table: the composites built
from primitives (``composites.py``), the losses (``losses.py``) and the element-wise ones
they reduce (``elementwise_losses.py``), the layers' functional forms
(``layers.py``), convolutions (``convolution.py``), pooling (``pooling.py``) and dropout
(``dropout.py``)."""
