"""``torch.nn`` and ``torch.optim`` as a script imports them: the library's ``gradcli.nn`` and
``gradcli.optim`` (torch's semantics, initial numbers and printed forms), their classes as
``LibraryClass`` values and their functions (``nn.init.xavier_uniform_``,
``nn.utils.clip_grad_norm_``) as ``Builtin`` values, each call of them through
``library_objects.guarded``.

``modules(run, functional, missing)`` gives the modules by their dotted names: ``torch.nn``
(with the ``functional`` module the op table makes), ``torch.nn.init``, ``torch.nn.utils``,
``torch.optim`` and ``torch.optim.lr_scheduler``. A name torch has there but the library
lacks is refused by ``missing`` (exit 2), with what gradcli has instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ... import nn, optim
from ...optim import lr_scheduler
from . import library_objects
from .library_objects import LibraryClass
from .runtime import Builtin, Module

if TYPE_CHECKING:
    from .runtime import Run

# torch's module of each class (what ``type(x)`` and the class itself print)
_TORCH_MODULES = {
    "torch.nn.modules.linear": "LazyLinear Bilinear Identity Linear",
    "torch.nn.parameter": "UninitializedParameter Parameter",
    "torch.nn.modules.transformer": (
        "Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder "
        "TransformerEncoderLayer"
    ),
    "torch.nn.modules.activation": (
        "MultiheadAttention Softmin CELU ELU GELU GLU Hardsigmoid Hardswish Hardtanh LeakyReLU "
        "LogSigmoid LogSoftmax Mish ReLU ReLU6 SELU SiLU Sigmoid Softmax Softplus Softsign Tanh"
    ),
    "torch.nn.modules.rnn": "GRU GRUCell LSTM LSTMCell RNN RNNCell",
    "torch.nn.modules.loss": (
        "CosineEmbeddingLoss GaussianNLLLoss HingeEmbeddingLoss MarginRankingLoss "
        "PoissonNLLLoss SoftMarginLoss TripletMarginLoss BCELoss BCEWithLogitsLoss "
        "CrossEntropyLoss HuberLoss KLDivLoss L1Loss MSELoss NLLLoss SmoothL1Loss"
    ),
    "torch.nn.modules.distance": "CosineSimilarity PairwiseDistance",
    "torch.nn.modules.pooling": "AvgPool1d AvgPool2d AvgPool3d MaxPool1d MaxPool2d MaxPool3d",
    "torch.nn.modules.conv": (
        "ConvTranspose1d ConvTranspose2d ConvTranspose3d Conv1d Conv2d Conv3d LazyConv1d "
        "LazyConv2d LazyConv3d"
    ),
    "torch.nn.modules.normalization": "GroupNorm LayerNorm",
    "torch.nn.modules.batchnorm": "BatchNorm1d BatchNorm2d",
    "torch.nn.modules.dropout": "Dropout",
    "torch.nn.modules.sparse": "Embedding",
    "torch.nn.modules.flatten": "Flatten Unflatten",
    "torch.nn.modules.module": "Module",
    "torch.nn.modules.container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "torch.optim.sgd": "SGD",
    "torch.optim.adadelta": "Adadelta",
    "torch.optim.adagrad": "Adagrad",
    "torch.optim.adam": "Adam",
    "torch.optim.adamw": "AdamW",
    "torch.optim.adamax": "Adamax",
    "torch.optim.optimizer": "Optimizer",
    "torch.optim.rmsprop": "RMSprop",
    "torch.optim.lr_scheduler": (
        "CosineAnnealingLR ExponentialLR LRScheduler LambdaLR MultiStepLR StepLR"
    ),
}
_PATHS = {
    name: f"{module}.{name}" for module, names in _TORCH_MODULES.items() for name in names.split()
}

_INIT = (
    "calculate_gain constant_ eye_ kaiming_normal_ kaiming_uniform_ normal_ ones_ uniform_ "
    "xavier_normal_ xavier_uniform_ zeros_"
).split()
_UTILS = "clip_grad_norm_ clip_grad_value_ clip_grads_with_norm_ get_total_norm".split()
_SCHEDULERS = "LRScheduler StepLR MultiStepLR LambdaLR CosineAnnealingLR ExponentialLR".split()


def _classes(run: Run, source: Any, names: list[str]) -> dict[str, LibraryClass]:
    """The library's classes ``names`` of ``source`` as the script's classes (each once in the
    run: ``type(x) is nn.Linear``)."""
    found = {}
    for name in names:
        kind = getattr(source, name)
        made = run.library_classes.get(kind)
        if made is None:
            made = run.library_classes[kind] = LibraryClass(run, kind, _PATHS[name])
        found[name] = made
    return found


def _functions(run: Run, source: Any, names: list[str]) -> dict[str, Builtin]:
    """The library's functions ``names`` of ``source``, each called through ``guarded``."""

    def bound(function: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *args, **kwargs: library_objects.guarded(run, function, *args, **kwargs)

    return {name: Builtin(name, bound(getattr(source, name))) for name in names}


def modules(
    run: Run, functional: Module, missing: Callable[[str], Callable[[str], Any]]
) -> dict[str, Module]:
    """``torch.nn``, ``torch.optim`` and their submodules, by dotted name."""
    nn_classes = [name for name in nn.__all__ if isinstance(getattr(nn, name), type)]
    init = Module(
        "torch.nn.init", _functions(run, nn.init, _INIT) | {"__missing__": missing("torch.nn.init")}
    )
    utils = Module(
        "torch.nn.utils",
        _functions(run, nn.utils, _UTILS) | {"__missing__": missing("torch.nn.utils")},
    )
    torch_nn = Module(
        "torch.nn",
        _classes(run, nn, nn_classes)
        | {
            "functional": functional,
            "init": init,
            "utils": utils,
            "__missing__": missing("torch.nn"),
        },
    )
    schedulers = Module(
        "torch.optim.lr_scheduler",
        _classes(run, lr_scheduler, _SCHEDULERS)
        | {"__missing__": missing("torch.optim.lr_scheduler")},
    )
    optimizers = [name for name in optim.__all__ if isinstance(getattr(optim, name), type)]
    torch_optim = Module(
        "torch.optim",
        _classes(run, optim, optimizers)
        | {"lr_scheduler": schedulers, "__missing__": missing("torch.optim")},
    )
    return {
        "torch.nn": torch_nn,
        "torch.nn.init": init,
        "torch.nn.utils": utils,
        "torch.optim": torch_optim,
        "torch.optim.lr_scheduler": schedulers,
    }
