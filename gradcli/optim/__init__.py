"""``torch.optim`` over gradcli's engine: ``SGD``, ``Adam``, ``AdamW``, ``Adamax``,
``RMSprop``, ``Adagrad``, ``Adadelta`` (torch's CPU algorithms in the parameters' dtype, bit
for bit but for torch's square root) and ``lr_scheduler``'s schedulers."""

from . import lr_scheduler
from .optimizer import Optimizer
from .optimizers import SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, RMSprop

__all__ = [
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Optimizer",
    "RMSprop",
    "lr_scheduler",
]
