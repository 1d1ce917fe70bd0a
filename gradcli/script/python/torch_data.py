"""``torch.utils.data`` as a script imports it: the library's ``gradcli.utils.data``
(``Dataset``, which a script's class derives from, ``TensorDataset``, the samplers and
``DataLoader``) as ``LibraryClass`` values, ``default_collate`` as a ``Builtin``.

A loader computes in one process: ``num_workers`` other than 0, and the options that only
mean something with workers or devices (``pin_memory``, ``timeout``, ``worker_init_fn``, ...),
are refused (exit 2) with what gradcli lacks, before torch's own checks of the rest. A pass
over a loader (``for``, ``enumerate``, ``list``) is ``operators.iterate``'s, each batch made
through ``library_objects.guarded``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...base.errors import GradcliError
from ...utils import data
from . import library_objects
from .library_objects import LibraryClass
from .runtime import Builtin, Module

if TYPE_CHECKING:
    from .runtime import Run

_CLASSES = (
    data.Dataset,
    data.TensorDataset,
    data.ConcatDataset,
    data.IterableDataset,
    data.Subset,
    data.DataLoader,
    data.Sampler,
    data.SequentialSampler,
    data.RandomSampler,
    data.SubsetRandomSampler,
    data.WeightedRandomSampler,
    data.BatchSampler,
)
# DataLoader's options for workers, pinned memory and devices, with the value that means none
_ONE_PROCESS = {
    "pin_memory": False,
    "timeout": 0,
    "worker_init_fn": None,
    "multiprocessing_context": None,
    "prefetch_factor": None,
    "persistent_workers": False,
    "pin_memory_device": "",
    "in_order": True,
}
_POSITIONAL = (
    "dataset batch_size shuffle sampler batch_sampler num_workers collate_fn pin_memory "
    "drop_last timeout worker_init_fn multiprocessing_context generator"
).split()


class DataLoaderClass(LibraryClass):
    """``torch.utils.data.DataLoader``: the library's, called with the options it takes."""

    def script_call(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) > len(_POSITIONAL):
            raise TypeError(
                f"DataLoader.__init__() takes from 2 to {len(_POSITIONAL) + 1} positional "
                f"arguments but {len(args) + 1} were given"
            )
        given = dict(zip(_POSITIONAL, args, strict=False))
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(f"DataLoader.__init__() got multiple values for argument '{key}'")
            given[key] = value
        for key in given:
            if key not in _POSITIONAL and key not in _ONE_PROCESS:
                raise TypeError(f"DataLoader.__init__() got an unexpected keyword argument '{key}'")
        workers = given.get("num_workers", 0)
        if isinstance(workers, int) and workers > 0:
            raise GradcliError(
                f"gradcli run loads data in one process: DataLoader(num_workers={workers}) is "
                "not taken",
                hint="give num_workers=0 (the batches and their order are the same)",
            )
        for key, none in _ONE_PROCESS.items():
            if key in given and given.pop(key) != none:
                raise GradcliError(
                    f"gradcli run loads data in one process on the CPU: DataLoader's {key}= is "
                    "not taken",
                    hint=f"leave {key} out",
                )
        return super().script_call(**given)


def modules(run: Run, missing: Callable[[str], Callable[[str], Any]]) -> dict[str, Module]:
    """``torch.utils`` and ``torch.utils.data``, by dotted name."""
    found: dict[str, Any] = {}
    for kind in _CLASSES:
        made = run.library_classes.get(kind)
        if made is None:
            maker = DataLoaderClass if kind is data.DataLoader else LibraryClass
            made = run.library_classes[kind] = maker(run, kind, kind.torch_path)
        found[kind.__name__] = made
    collate = Builtin(
        "default_collate",
        lambda batch: library_objects.guarded(run, data.default_collate, batch),
    )
    split = Builtin(
        "random_split",
        lambda *args, **kwargs: library_objects.guarded(run, data.random_split, *args, **kwargs),
    )
    torch_data = Module(
        "torch.utils.data",
        found
        | {
            "default_collate": collate,
            "random_split": split,
            "__missing__": missing("torch.utils.data"),
        },
    )
    utils = Module("torch.utils", {"data": torch_data, "__missing__": missing("torch.utils")})
    return {"torch.utils": utils, "torch.utils.data": torch_data}
