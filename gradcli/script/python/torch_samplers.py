"""torch's samplers beyond ``rand`` and ``randn`` as a script calls them: ``torch.randint``,
``randperm``, ``normal``, ``bernoulli`` and ``multinomial``, each drawing torch's numbers
from the run's generator (``engine/torch_random``), each result charged to the run's memory
before it is drawn."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ...base import bounds
from ...engine import torch_random
from ...engine.torch_random import samplers
from ...ops import library as gc
from .runtime import Builtin, type_name

if TYPE_CHECKING:
    from .runtime import Run
    from .torch_api import Constructors


def generator_of(run: Run, given: Any, name: str) -> torch_random.Generator:
    """The generator a sampler draws from: ``generator=`` (a script's ``torch.Generator()``),
    else the run's (``torch.manual_seed``'s); what is not a generator is torch's TypeError."""
    if given is None:
        return run.generator
    if not isinstance(given, torch_random.Generator):
        raise TypeError(
            f"{name}(): argument 'generator' must be torch.Generator, not {type_name(given)}"
        )
    return given


def _sized(make: Constructors, size: Any, name: str) -> list[int]:
    """A size given as a tuple, a list or one number, checked and charged."""
    shape = make.sizes(tuple(size) if isinstance(size, (list, tuple)) else (size,), name)
    with bounds.charging(make.run.tally):
        bounds.check_elements(math.prod(shape), f"{name}{tuple(shape)}")
    return shape


def _drawn(draw: Callable[[], np.ndarray]) -> np.ndarray:
    try:
        return draw()
    except gc.DomainError as exc:  # torch's RuntimeError for arguments it refuses
        raise RuntimeError(str(exc)) from None


_OPTIONS = ("dtype", "requires_grad", "device", "generator")


def _made(
    make: Constructors, name: str, array: Any, options: dict[str, Any], default: Any = None
) -> gc.Tensor:
    """The sampler's tensor, with the constructors' options (``dtype=``, ``requires_grad=``;
    ``device=`` taken and left: one device; ``generator=`` read by the sampler)."""
    for key in options:
        if key not in _OPTIONS:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    return make.made(array, options.get("dtype"), options.get("requires_grad", False), default)


def samplers_of(make: Constructors) -> dict[str, Builtin]:
    """The samplers of one run (``make``: the run's constructors)."""
    run = make.run

    def drawing(options: dict[str, Any], name: str) -> Any:
        return generator_of(run, options.get("generator"), name)

    def randint(
        *args: Any, size: Any = None, low: Any = None, high: Any = None, **options: Any
    ) -> gc.Tensor:
        # torch's two signatures, (high, size) and (low, high, size), each argument given by
        # position or by name: randint(low=0, high=2, size=(4, 2))
        if size is None and args and isinstance(args[-1], (list, tuple)):
            args, size = args[:-1], args[-1]
        named = [low is not None, high is not None]
        given = list(args)
        if len(given) == 2 and not any(named):
            low, high = given
        elif len(given) == 1 and not named[1]:
            high = given[0]
        elif len(given) == 1 and named[1] and not named[0]:
            low = given[0]
        elif given:
            high = None  # too many: refused below
        if size is None or high is None:
            raise TypeError("randint() takes (high, size) or (low, high, size)")
        low = 0 if low is None else low
        shape = _sized(make, size, "randint")
        kind = make.dtype(options.get("dtype"), np.int64)
        generator = drawing(options, "randint")
        array = _drawn(lambda: samplers.randint(generator, low, high, shape, kind))
        return _made(make, "randint", array, options, np.int64)

    def randperm(n: int, **options: Any) -> gc.Tensor:
        _sized(make, n, "randperm")
        kind = make.dtype(options.get("dtype"), np.int64)
        generator = drawing(options, "randperm")
        array = _drawn(lambda: samplers.randperm(generator, n, kind))
        return _made(make, "randperm", array, options, np.int64)

    def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, **options: Any) -> gc.Tensor:
        generator = drawing(options, "normal")
        if size is not None:
            shape = _sized(make, size, "normal")
            kind = make.dtype(options.get("dtype"))
            array = _drawn(lambda: samplers.normal(generator, shape, kind, mean, std))
            return _made(make, "normal", array, options)
        tensors = [v for v in (mean, std) if isinstance(v, gc.Tensor)]
        if not tensors:
            raise TypeError("normal() takes a tensor mean or std, or a size")
        kind = tensors[0].dtype
        means = mean.data if isinstance(mean, gc.Tensor) else mean
        stds = std.data if isinstance(std, gc.Tensor) else std
        array = _drawn(lambda: samplers.normal_of_tensors(generator, means, stds, kind))
        return _made(make, "normal", array, options, kind)

    def bernoulli(input: gc.Tensor, p: Any = None, generator: Any = None) -> gc.Tensor:
        drawn = generator_of(run, generator, "bernoulli")
        if p is not None:
            array = _drawn(lambda: samplers.bernoulli(drawn, input.shape, p, input.dtype))
        else:
            array = _drawn(lambda: samplers.bernoulli_tensor(drawn, input.data))
        return make.made(array, None, False, input.dtype)

    def multinomial(
        input: gc.Tensor, num_samples: int, replacement: bool = False, generator: Any = None
    ) -> gc.Tensor:
        drawn = generator_of(run, generator, "multinomial")
        array = _drawn(lambda: samplers.multinomial(drawn, input.data, num_samples, replacement))
        return make.made(array, None, False, np.int64)

    found: dict[str, Callable[..., gc.Tensor]] = {
        "randint": randint,
        "randperm": randperm,
        "normal": normal,
        "bernoulli": bernoulli,
        "multinomial": multinomial,
    }
    return {name: Builtin(name, function) for name, function in found.items()}
