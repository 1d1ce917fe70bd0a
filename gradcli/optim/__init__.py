"""``torch.optim`` over gradcli's engine: ``SGD``, ``Adam``, ``AdamW``, ``RMSprop``,
``Adagrad`` (torch's CPU algorithms, bit for bit in the parameters' dtype) and
``lr_scheduler``'s ``StepLR`` and ``ExponentialLR``."""

from . import lr_scheduler
from .optimizer import Optimizer
from .optimizers import SGD, Adagrad, Adam, AdamW, RMSprop

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
