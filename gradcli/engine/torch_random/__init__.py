"""torch's CPU random numbers, bit for bit: its mt19937 generator and the samplers that
draw from it.

Callers ask for the generator in force (``in_force()``: a ``using(generator)`` block's,
else the process's default generator, which ``manual_seed`` seeds) and hand it to a sampler
of ``samplers`` (``uniform``, ``normal``, ``randint``, ``randperm``, ``bernoulli``,
``exponential``, ``multinomial``, ``dropout``, ...), which returns a numpy array of torch's
numbers and advances the generator as torch's kernel does. ``get_rng_state`` and
``set_rng_state`` save and restore the generator in force in torch's byte layout; ``init``
holds ``torch.nn.init``'s random initializers.
"""

from . import samplers
from .generator import (
    Generator,
    default_generator,
    entered,
    get_rng_state,
    in_force,
    manual_seed,
    set_rng_state,
    using,
)

__all__ = [
    "Generator",
    "default_generator",
    "entered",
    "get_rng_state",
    "in_force",
    "manual_seed",
    "samplers",
    "set_rng_state",
    "using",
]
