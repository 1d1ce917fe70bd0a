"""The Mersenne Twister (mt19937) as torch's CPU generator runs it, drawn a block at a time.

torch seeds it with the low 32 bits of the seed (Knuth's initialisation, multiplier
1812433253), twists the 624 words of state when they are used up, and tempers each word as
it hands it out. This module keeps torch's own bookkeeping (``left`` and ``next``, the
fields of torch's saved state) so that a state read here or there means the same; the
words themselves are twisted and tempered with numpy, a block of 624 at a time, so that a
million draws cost a few thousand array operations rather than a million Python steps.
"""

from __future__ import annotations

import numpy as np

STATE_WORDS = 624  # mt19937's n
_SHIFT = 397  # mt19937's m
_MATRIX_A = np.uint32(0x9908B0DF)
_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7FFFFFFF)
_MASK32 = 0xFFFFFFFF


def _initial_words(seed: int) -> np.ndarray:
    """The 624 words of state a seed starts (its low 32 bits, as torch takes them)."""
    words = [seed & _MASK32]
    for index in range(1, STATE_WORDS):
        previous = words[-1]
        words.append((1812433253 * (previous ^ (previous >> 30)) + index) & _MASK32)
    return np.array(words, dtype=np.uint32)


def _twisted(words: np.ndarray, blocks: int) -> np.ndarray:
    """``words`` followed by the next ``blocks`` blocks of state, as one flat sequence.

    Read as a sequence, the twist makes word k from words k-624, k-623 and k-227, so 227
    words at a time can be made from words already made: a block of 624 takes three array
    steps, and a million draws a few thousand.
    """
    sequence = np.empty(STATE_WORDS * (blocks + 1), dtype=np.uint32)
    sequence[:STATE_WORDS] = words
    step = STATE_WORDS - _SHIFT  # 227
    for start in range(STATE_WORDS, sequence.size, step):
        stop = min(start + step, sequence.size)
        old = start - STATE_WORDS
        mixed = (sequence[old : stop - STATE_WORDS] & _UPPER) | (
            sequence[old + 1 : stop - STATE_WORDS + 1] & _LOWER
        )
        odd = (mixed & np.uint32(1)).astype(bool)
        sequence[start:stop] = (
            sequence[start - step : stop - step]
            ^ (mixed >> np.uint32(1))
            ^ np.where(odd, _MATRIX_A, np.uint32(0))
        )
    return sequence


def _temper(words: np.ndarray) -> np.ndarray:
    """mt19937's tempering of the words it hands out."""
    y = words ^ (words >> np.uint32(11))
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    return np.asarray(y ^ (y >> np.uint32(18)))


class MT19937:
    """torch's ``at::mt19937``: its state words and its ``left``/``next`` counters.

    ``left`` is one more than the words still unused in the current block (1: the next draw
    twists first), ``next`` the index of the next word to hand out, as in torch.
    """

    def __init__(self, seed: int = 5489):
        self.seed = seed
        self.words = _initial_words(seed)
        self.left = 1
        self.next = 0

    def draw32(self, count: int) -> np.ndarray:
        """The next ``count`` 32-bit draws (torch's ``random()``), as uint32."""
        available = self.left - 1  # words of the current block not yet handed out
        taken = min(count, available)
        first = self.words[self.next : self.next + taken]
        self.next += taken
        self.left -= taken
        wanted = count - taken
        if wanted == 0:
            return _temper(first)
        blocks = -(-wanted // STATE_WORDS)
        sequence = _twisted(self.words, blocks)
        self.words = sequence[-STATE_WORDS:].copy()
        self.next = wanted - STATE_WORDS * (blocks - 1)
        self.left = STATE_WORDS + 1 - self.next
        return _temper(np.concatenate([first, sequence[STATE_WORDS : STATE_WORDS + wanted]]))

    def draw64(self, count: int) -> np.ndarray:
        """The next ``count`` 64-bit draws (torch's ``random64()``): two 32-bit draws each,
        the first the high half."""
        pairs = self.draw32(2 * count).astype(np.uint64).reshape(count, 2)
        return np.asarray((pairs[:, 0] << np.uint64(32)) | pairs[:, 1])

    def copy(self) -> MT19937:
        """An independent generator in the same state."""
        twin = MT19937.__new__(MT19937)
        twin.seed, twin.words = self.seed, self.words.copy()
        twin.left, twin.next = self.left, self.next
        return twin
