"""torch's CPU generator (``torch.Generator``): an mt19937, its seed, and the normal it keeps.

Besides the twister, torch's generator remembers the second number of its last scalar
Box-Muller pair (``normal_`` on fewer than 16 elements makes two normals from one pair of
uniforms and hands the second out next time), and a ``manual_seed`` forgets it. Its state
(``get_state``/``set_state``) is the byte layout torch's ``torch.get_rng_state()`` returns:
5,056 bytes, the legacy record (seed, left, seeded, next, the 624 words as 64-bit numbers,
three doubles of which the second is the kept normal, its flag) and then a kept float
normal with its flag, so that a state saved by torch can be restored here and the other way
round.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import numpy as np

from ...base.engine_errors import DomainError
from .mt19937 import MT19937, STATE_WORDS

DEFAULT_SEED = 67280421310721  # what torch.Generator() starts from
STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState)

# the state record's fields: (name, offset, dtype)
_WORDS_AT = 24
_NORMAL_AT = _WORDS_AT + 8 * STATE_WORDS  # normal_x, normal_y, normal_rho
_NORMAL_VALID_AT = _NORMAL_AT + 24
_FLOAT_NORMAL_AT = _NORMAL_VALID_AT + 8


def seed_number(seed: object) -> int:
    """The 64-bit seed torch makes of ``manual_seed``'s argument: a whole number (a bool or
    a float is cut to one) from -2**63 to 2**64 - 1, a negative one taken modulo 2**64."""
    try:
        number = int(seed)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise DomainError(f"manual_seed takes a whole number, got {seed!r}") from None
    if not -(2**63) <= number < 2**64:
        raise DomainError("Overflow when unpacking long long")
    return int(number) % 2**64


class Generator:
    """A torch CPU generator: ``Generator().manual_seed(0)``, then the samplers of
    ``samplers.py`` draw from it."""

    python_name = "torch._C.Generator"  # its class as a script sees it (type(g))

    def __init__(self, seed: int = DEFAULT_SEED):
        self.engine = MT19937(seed)
        self.next_double_normal: float | None = None
        self.next_float_normal: float | None = None

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at 0x{id(self):x}>"

    def manual_seed(self, seed: object) -> Generator:
        """Start again from ``seed`` (its low 32 bits seed the twister); returns self."""
        number = seed_number(seed)
        self.engine = MT19937(number)
        self.next_double_normal = self.next_float_normal = None
        return self

    def seed(self) -> int:
        """Seed from the operating system's randomness, as ``torch.seed()``; returns it."""
        number = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(number)
        return number

    def initial_seed(self) -> int:
        """The seed given last (all 64 bits of it, as torch reports it)."""
        return self.engine.seed

    def random(self, count: int) -> np.ndarray:
        """``count`` 32-bit draws, uint32."""
        return self.engine.draw32(count)

    def random64(self, count: int) -> np.ndarray:
        """``count`` 64-bit draws (each two 32-bit draws, the first the high half), uint64."""
        return self.engine.draw64(count)

    def get_state(self) -> np.ndarray:
        """The state as torch's ``get_rng_state()`` lays it out: 5,056 bytes, uint8."""
        record = bytearray(STATE_BYTES)
        engine = self.engine
        record[0:8] = engine.seed.to_bytes(8, "little")
        record[8:12] = engine.left.to_bytes(4, "little", signed=True)
        record[12:16] = (1).to_bytes(4, "little")  # seeded
        record[16:24] = engine.next.to_bytes(8, "little")
        record[_WORDS_AT:_NORMAL_AT] = engine.words.astype("<u8").tobytes()
        if self.next_double_normal is not None:
            record[_NORMAL_AT + 8 : _NORMAL_AT + 16] = np.float64(self.next_double_normal).tobytes()
            record[_NORMAL_VALID_AT : _NORMAL_VALID_AT + 4] = (1).to_bytes(4, "little")
        if self.next_float_normal is not None:
            at = _FLOAT_NORMAL_AT
            record[at : at + 4] = np.float32(self.next_float_normal).tobytes()
            record[at + 4] = 1
        return np.array(np.frombuffer(bytes(record), dtype=np.uint8))

    def set_state(self, state: object) -> Generator:
        """Restore a state from ``get_state`` (or torch's ``get_rng_state()``); returns self."""
        record = np.asarray(state)
        if record.dtype != np.uint8 or record.ndim != 1:
            raise DomainError("set_rng_state takes the ByteTensor get_rng_state returned")
        if record.size != STATE_BYTES:
            raise DomainError(
                f"Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input "
                f"RNG state size to be {record.size}"
            )
        raw = record.tobytes()
        left = int.from_bytes(raw[8:12], "little", signed=True)
        following = int.from_bytes(raw[16:24], "little") & 0xFFFFFFFF
        words = np.frombuffer(raw[_WORDS_AT:_NORMAL_AT], dtype="<u8").astype(np.uint32)
        if not (0 < left <= STATE_WORDS and following <= STATE_WORDS):
            raise DomainError("Invalid mt19937 state")
        engine = MT19937.__new__(MT19937)
        engine.seed = int.from_bytes(raw[0:8], "little")
        engine.words, engine.left, engine.next = words.copy(), left, following
        self.engine = engine
        valid = int.from_bytes(raw[_NORMAL_VALID_AT : _NORMAL_VALID_AT + 4], "little")
        kept = np.frombuffer(raw[_NORMAL_AT + 8 : _NORMAL_AT + 16], dtype="<f8")[0]
        self.next_double_normal = float(kept) if valid else None
        at = _FLOAT_NORMAL_AT
        kept_float = np.frombuffer(raw[at : at + 4], dtype="<f4")[0]
        self.next_float_normal = float(kept_float) if raw[at + 4] else None
        return self

    def clone(self) -> Generator:
        """An independent generator in the same state."""
        twin = Generator.__new__(Generator)
        twin.engine = self.engine.copy()
        twin.next_double_normal, twin.next_float_normal = (
            self.next_double_normal,
            self.next_float_normal,
        )
        return twin


_default: Generator | None = None
_entered: list[Generator] = []  # the generators of the ``using`` blocks, innermost last


def default_generator() -> Generator:
    """The process's generator (``torch.default_generator``), seeded from the operating
    system's randomness until a ``manual_seed``, as torch's is."""
    global _default
    if _default is None:
        _default = Generator()
        _default.seed()
    return _default


def manual_seed(seed: object) -> Generator:
    """``torch.manual_seed(seed)``: reseed the default generator and return it."""
    return default_generator().manual_seed(seed)


@contextlib.contextmanager
def using(generator: Generator) -> Iterator[Generator]:
    """Within the block, ``generator`` is the one in force (a script run's own generator,
    which its ``torch.manual_seed`` seeds and its samplers draw from)."""
    _entered.append(generator)
    try:
        yield generator
    finally:
        _entered.pop()


def entered() -> Generator | None:
    """The generator of the innermost ``using`` block, or None outside every block."""
    return _entered[-1] if _entered else None


def in_force() -> Generator:
    """The generator torch's samplers draw from here: the innermost ``using`` block's, else
    the process's default generator."""
    return _entered[-1] if _entered else default_generator()


def get_rng_state() -> np.ndarray:
    """``torch.get_rng_state()``: the state of the generator in force (5,056 bytes)."""
    return in_force().get_state()


def set_rng_state(state: object) -> None:
    """``torch.set_rng_state(state)``: restore the generator in force."""
    in_force().set_state(state)
