"""``torch.utils.data`` over gradcli's engine: ``Dataset`` (the base class of a map-style
dataset, which a model's code subclasses with ``__len__`` and ``__getitem__``),
``TensorDataset``, ``ConcatDataset``, ``Subset`` and ``random_split``, ``IterableDataset`` (the
base class of a dataset a loader iterates), the samplers that order a dataset
(``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``,
``BatchSampler``) and ``DataLoader``, which batches it in one process with torch's
``default_collate``.

The order is torch's, bit for bit: each pass over a loader first draws a base seed from its
generator (the one in force where none is given), as torch's iterator does even unshuffled,
and a shuffled pass then draws the seed of a fresh generator whose ``randperm`` orders the
dataset (``RandomSampler``), so that a script seeded with ``torch.manual_seed`` sees torch's
batches and every number drawn after them is torch's too.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..base.engine_errors import ShapeError
from ..engine.tensor import Tensor, default_floating
from ..engine.torch_random import Generator, in_force, samplers
from ..ops.library import stack

_INT64_SPAN = 2**63  # torch's random_() on int64 without bounds: a 64-bit draw mod 2**63


def _draw_seed(generator: Any) -> int:
    """``torch.empty((), dtype=torch.int64).random_(generator=generator).item()``."""
    if generator is None:
        generator = in_force()
    if not isinstance(generator, Generator):
        raise TypeError(
            "random_() received an invalid combination of arguments - got (generator="
            f"{type(generator).__name__}, ), but expected one of:\n"
            " * (*, torch.Generator generator = None)\n"
            " * (int from, int to, *, torch.Generator generator = None)\n"
            " * (int to, *, torch.Generator generator = None)\n"
        )
    return int(generator.random64(1)[0]) % _INT64_SPAN


class _Shown:
    """torch's form of its objects, ``<torch.utils.data.dataset.TensorDataset object at
    0x...>``; a script's subclass keeps Python's own, its module and name."""

    torch_path = ""

    def __repr__(self) -> str:
        path = type(self).__dict__.get("torch_path")
        if path is None:
            return object.__repr__(self)
        return f"<{path} object at 0x{id(self):x}>"


class Dataset(_Shown):
    """A map-style dataset: a subclass gives ``__getitem__`` (and, for a loader's
    ``len`` and shuffling, ``__len__``)."""

    torch_path = "torch.utils.data.dataset.Dataset"

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Any) -> ConcatDataset:
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """``TensorDataset(*tensors)``: sample ``i`` is ``(t[i] for t in tensors)``; the tensors
    have one length along their first dimension."""

    torch_path = "torch.utils.data.dataset.TensorDataset"

    def __init__(self, *tensors: Tensor):
        for tensor in tensors:
            if not isinstance(tensor, Tensor):
                raise AttributeError(f"'{type(tensor).__name__}' object has no attribute 'size'")
        if not all(tensors[0].shape[0] == t.shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        count = len(self)
        if type(index) is int and not -count <= index < count:  # what ends Python's iteration
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {count}")
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].shape[0])


class ConcatDataset(Dataset):
    """``ConcatDataset(datasets)``: the samples of each dataset in turn (``a + b`` of two
    datasets); an index finds its dataset by the running lengths (``cumulative_sizes``)."""

    torch_path = "torch.utils.data.dataset.ConcatDataset"

    def __init__(self, datasets: Iterable[Any]):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index = len(self) + index
        which = bisect.bisect_right(self.cumulative_sizes, index)
        before = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - before]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]


class IterableDataset(Dataset):
    """An iterable-style dataset: a subclass gives ``__iter__``; a loader batches what it
    yields in turn, with no sampler (``shuffle`` and ``sampler`` are refused, as torch's)."""

    torch_path = "torch.utils.data.dataset.IterableDataset"

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class Subset(Dataset):
    """``Subset(dataset, indices)``: sample ``i`` is ``dataset[indices[i]]``."""

    torch_path = "torch.utils.data.dataset.Subset"

    def __init__(self, dataset: Any, indices: Sequence[int]):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[float], generator: Any = None) -> list[Subset]:
    """torch's ``random_split``: the dataset's indices permuted by ``randperm`` (from
    ``generator``, else the one in force) and cut into ``lengths`` (or fractions summing to
    1, floored, the remainder given out one by one from the first)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(len(dataset) * fraction))
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        for i, count in enumerate(counts):
            if count == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    UserWarning,
                    stacklevel=2,
                )
        lengths = counts
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    drawn = in_force() if generator is None else generator
    indices = samplers.randperm(drawn, int(sum(lengths))).tolist()
    ends = list(itertools.accumulate(int(n) for n in lengths))
    return [Subset(dataset, indices[end - int(n) : end]) for end, n in zip(ends, lengths)]


class Sampler(_Shown):
    """The base of the samplers: an iterable of indices (or of lists of them)."""

    torch_path = "torch.utils.data.sampler.Sampler"


class SequentialSampler(Sampler):
    """The indices 0, 1, ..., len(data_source) - 1."""

    torch_path = "torch.utils.data.sampler.SequentialSampler"

    def __init__(self, data_source: Any):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices shuffled: one ``randperm`` a pass (or ``num_samples`` drawn with
    ``replacement``), from ``generator`` or, where none is given, from a fresh generator
    seeded by a draw from the one in force, as torch's."""

    torch_path = "torch.utils.data.sampler.RandomSampler"

    def __init__(
        self,
        data_source: Any,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        count = self.num_samples
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={count}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices a pass gives (the dataset's length unless given)."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(_draw_seed(None))
        elif not isinstance(generator, Generator):
            _draw_seed(generator)  # torch's TypeError for what is not a generator
        count = self.num_samples
        if self.replacement:
            for size in [32] * (count // 32) + [count % 32]:
                yield from samplers.randint(generator, 0, n, (size,)).tolist()
            return
        for _ in range(count // n):
            yield from samplers.randperm(generator, n).tolist()
        yield from samplers.randperm(generator, n).tolist()[: count % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """``indices`` in the order of one ``randperm`` of their count a pass, from ``generator``
    (else the one in force, itself: no seed drawn first, as torch's)."""

    torch_path = "torch.utils.data.sampler.SubsetRandomSampler"

    def __init__(self, indices: Sequence[int], generator: Any = None):
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[Any]:
        drawn = in_force() if self.generator is None else self.generator
        for i in samplers.randperm(drawn, len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with the probabilities ``weights`` (float64, one
    dimension), with ``replacement`` unless told: one ``multinomial`` a pass."""

    torch_path = "torch.utils.data.sampler.WeightedRandomSampler"

    def __init__(
        self,
        weights: Any,
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        data = weights.data if isinstance(weights, Tensor) else weights
        self.weights = Tensor(np.asarray(data, dtype=np.float64))
        if self.weights.ndim != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(self.weights.shape)}"
            )
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        drawn = in_force() if self.generator is None else self.generator
        chosen = samplers.multinomial(drawn, self.weights.data, self.num_samples, self.replacement)
        yield from chosen.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """The indices of ``sampler`` in lists of ``batch_size`` (the last shorter, or dropped
    with ``drop_last``)."""

    torch_path = "torch.utils.data.sampler.BatchSampler"

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        if self.drop_last:
            for whole in zip(*[indices] * self.batch_size, strict=False):
                yield [*whole]
            return
        batch = [*itertools.islice(indices, self.batch_size)]
        while batch:
            yield batch
            batch = [*itertools.islice(indices, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size  # type: ignore[arg-type]
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size  # type: ignore[arg-type]


# -- collation ----------------------------------------------------------------------------------
_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _numbers(batch: Sequence[Any], dtype: Any = None) -> Tensor:
    """``torch.tensor(batch)`` of Python numbers (``dtype`` given, or torch's inference:
    the default floating dtype where a float is among them, bool where all are bools, else
    int64)."""
    if dtype is None:
        if any(isinstance(b, float) for b in batch):
            dtype = default_floating()
        elif all(isinstance(b, bool) for b in batch):
            dtype = np.bool_
        else:
            dtype = np.int64
    return Tensor(np.asarray(batch, dtype=dtype))


def _python_name(value: Any) -> str:
    return str(getattr(type(value), "python_name", None) or type(value).__name__)


def default_collate(batch: Sequence[Any]) -> Any:
    """torch's ``default_collate``: the samples of a batch joined field by field: tensors
    stacked, Python floats as a float64 tensor, ints and bools as torch infers them, numpy
    arrays as tensors stacked, strings kept; mappings, tuples (as lists) and lists collated
    per field."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        for entry, tensor in enumerate(batch):
            if isinstance(tensor, Tensor) and tensor.shape != elem.shape:  # torch.stack's words
                raise ShapeError(
                    f"stack expects each tensor to be equal size, but got {list(elem.shape)} at "
                    f"entry 0 and {list(tensor.shape)} at entry {entry}"
                )
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([Tensor(np.array(b)) for b in batch])
    if isinstance(elem, (np.bool_, np.number)):
        return Tensor(np.asarray(batch))
    if isinstance(elem, float):
        return _numbers(batch, np.float64)
    if isinstance(elem, int):
        return _numbers(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, (tuple, list)):
        size = len(elem)
        if not all(len(sample) == size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(samples) for samples in zip(*batch, strict=False)]
    raise TypeError(_COLLATE_ERROR.format(f"<class '{_python_name(elem)}'>"))


def default_convert(data: Any) -> Any:
    """torch's ``default_convert`` (a loader's ``batch_size=None``): numpy arrays as tensors,
    mappings and sequences converted per field, anything else as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return Tensor(np.array(data))
    if isinstance(data, Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


# -- the loader ---------------------------------------------------------------------------------
_FIXED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader(_Shown):
    """``DataLoader(dataset, batch_size=1, shuffle=False, ...)``: the dataset's samples in
    batches, in one process (``num_workers=0``), each pass ordered by its sampler and joined
    by ``collate_fn`` (``default_collate``)."""

    torch_path = "torch.utils.data.dataloader.DataLoader"
    dataset: Any
    num_workers: int
    batch_size: int | None
    drop_last: bool
    sampler: Any
    batch_sampler: Any
    generator: Any
    collate_fn: Any
    persistent_workers: bool

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Any = None,
        drop_last: bool = False,
        generator: Any = None,
    ):
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if isinstance(dataset, IterableDataset):
            for option, unspecified in (("shuffle", shuffle), ("sampler", sampler)):
                if unspecified not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {option} "
                        f"option, but got {option}={unspecified}"
                    )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
            sampler = _InfiniteConstantSampler()
        if sampler is None:
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        fields = {
            "dataset": dataset,
            "num_workers": num_workers,
            "batch_size": batch_size,
            "drop_last": drop_last,
            "sampler": sampler,
            "batch_sampler": batch_sampler,
            "generator": generator,
            "collate_fn": collate_fn
            or (default_collate if batch_sampler is not None else default_convert),
            "persistent_workers": False,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FIXED:
            raise ValueError(
                f"{name} attribute should not be set after {type(self).__name__} is initialized"
            )
        object.__setattr__(self, name, value)

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __iter__(self) -> DataLoaderIterator:
        return DataLoaderIterator(self)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):  # the dataset's length, in batches
            length = len(self.dataset)  # type: ignore[arg-type]  # (a script's class's)
            if self.batch_size is None:
                return length
            if self.drop_last:
                return length // self.batch_size
            return -(-length // self.batch_size)
        return len(self._index_sampler)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset's loader, as torch's: None, without end (and no
    length); the dataset's own iterator gives the samples."""

    torch_path = "torch.utils.data.sampler._InfiniteConstantSampler"

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


class DataLoaderIterator(_Shown):
    """One pass over a ``DataLoader`` (torch's ``_SingleProcessDataLoaderIter``): its base
    seed drawn when the pass begins, its sampler started at the first batch."""

    torch_path = "torch.utils.data.dataloader._SingleProcessDataLoaderIter"

    def __init__(self, loader: DataLoader):
        self.loader = loader
        self.indices = iter(loader._index_sampler)  # a generator: nothing drawn yet
        self.base_seed = _draw_seed(loader.generator)
        # an iterable dataset's iterator, begun as the pass begins (torch's fetcher's)
        iterable = isinstance(loader.dataset, IterableDataset)
        self.samples = iter(loader.dataset) if iterable else None
        self.ended = False

    def __iter__(self) -> DataLoaderIterator:
        return self

    def __next__(self) -> Any:
        loader = self.loader
        index = next(self.indices)
        if self.samples is not None:
            return self._fetched(index)
        if loader.batch_sampler is None:
            return loader.collate_fn(loader.dataset[index])
        if loader.collate_fn is default_collate:
            rows = _rows(loader.dataset, index)
            if rows is not None:
                return rows
        return loader.collate_fn([loader.dataset[i] for i in index])

    def __len__(self) -> int:  # an iterable dataset's: torch's TypeError (its sampler's)
        return len(self.loader._index_sampler)

    def _fetched(self, index: Any) -> Any:
        """The next batch of an iterable dataset (torch's ``_IterableDatasetFetcher``): as
        many samples as ``index`` holds, fewer at the end (none, or fewer with
        ``drop_last``, ends the pass)."""
        loader, samples = self.loader, self.samples
        assert samples is not None
        if self.ended:
            raise StopIteration
        if loader.batch_sampler is None:
            return loader.collate_fn(next(samples))
        batch = []
        for _ in index:
            try:
                batch.append(next(samples))
            except StopIteration:
                self.ended = True
                break
        if not batch or (loader.drop_last and len(batch) < len(index)):
            raise StopIteration
        return loader.collate_fn(batch)


def _rows(dataset: Any, index: list[Any]) -> list[Tensor] | None:
    """``default_collate`` of a ``TensorDataset``'s samples ``index``, each tensor's rows
    taken at once (the numbers torch's stack of them gives); None where they are taken one
    by one: a tensor that requires grad (its rows are nodes of the graph), an index that is
    not a whole number in range (torch's error for it)."""
    if type(dataset) is not TensorDataset or any(t.requires_grad for t in dataset.tensors):
        return None
    count = len(dataset)
    if not all(type(i) is int and -count <= i < count for i in index):
        return None
    rows = np.asarray(index, dtype=np.intp)
    return [Tensor(tensor.data[rows]) for tensor in dataset.tensors]
