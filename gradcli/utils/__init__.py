"""``torch.utils`` over gradcli's engine, named as torch names it: ``data`` (datasets,
samplers and the ``DataLoader``)."""

from . import data

__all__ = ["data"]
