"""torch's CPU random numbers, bit for bit: its mt19937 generator and the samplers that
draw from it.

Callers ask for the generator in force (``in_force()``: a ``using(generator)`` block's,
else the process's default generator, which ``manual_seed`` seeds) and hand it to a sampler
of ``samplers`` (``uniform``, ``normal``, ``randint``, ``randperm``, ``bernoulli``,
``exponential``, ``multinomial``, ``dropout``, ...), which returns a numpy array of torch's
numbers and advances the generator as torch's kernel does.
"""

from . import samplers
from .generator import Generator, default_generator, entered, in_force, manual_seed, using

__all__ = [
    "Generator",
    "default_generator",
    "entered",
    "in_force",
    "manual_seed",
    "samplers",
    "using",
]
