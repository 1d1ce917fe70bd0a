"""The builtins of ``gradcli run``'s interpreter give what Python's give, compared with
Python's interactive interpreter."""

from __future__ import annotations

import pytest
from python_oracle import gradcli_run, python_run

from gradcli.base.errors import GradcliError

PROGRAMS = {
    "print": "print(1, 'a', None, sep='-', end='!\\n')\nprint()\nprint('x', [1.5, 'y'])",
    "len range zip enumerate": "print(len('abc'), list(range(2, 9, 3)), list(zip('ab', 'cde')))"
    "\nprint(list(enumerate('xy', start=1)))",
    "abs min max sum round": "print(abs(-2.5), min(3, 1, 2), max([4, 9, 2]), min('bca'), "
    "max([], default=0))\nprint(sum([1, 2, 3]), sum([0.5], 10), round(3.14159, 2), round(2.5))"
    "\nprint(max(['aa', 'b'], key=len), min(range(5), key=lambda v: (v - 3) ** 2))",
    "sorted reversed": "print(sorted([3, 1, 2]), sorted('cab', reverse=True), "
    "list(reversed([1, 2, 3])))\nprint(sorted(['bb', 'a', 'ccc'], key=len))",
    "isinstance type": "print(isinstance(1, int), isinstance(1.0, (int, float)), "
    "isinstance('s', list))\nprint(type(1), type('x') == str, type([]) is list, type(None))",
    "conversions": "print(int('12'), int(3.9), float('1.5'), bool(0), bool([0]), str(1.0))\n"
    "print(list('ab'), tuple([1]), dict([('a', 1)], b=2), set([1, 1]), list({'k': 1}))",
    "map filter any all": "print(list(map(lambda v: v * 2, [1, 2])), list(filter(None, [0, 1, "
    "''])))\nprint(any([0, 1]), all([1, 0]), any([]), all([]))\n"
    "print(list(map(pow, [2, 3], [3, 2])))",
    "repr format": "print(repr('a'), repr(1.0), format(3.14159, '.2f'), format(5, '>4'))",
    "bad conversion": "int('x')",
    "divmod pow chr ord": "print(divmod(7, 2), pow(2, 10), pow(2, 10, 1000), chr(65), ord('a'))",
    "next iter": "it = iter([1, 2])\nprint(next(it), next(it), next(it, 'end'))",
    "hasattr getattr": "print(hasattr('s', 'upper'), getattr([1], 'count')(1), "
    "getattr(1, 'nope', 'default'))",
    "random": "import random\nrandom.seed(0)\nprint(random.randint(4, 6), random.random(), "
    "random.uniform(1, 2), random.randrange(10), random.gauss(0, 1))\nxs = list(range(10))\n"
    "random.shuffle(xs)\nprint(xs, random.choice(xs), random.sample(xs, 3))\n"
    "from random import randint, seed\nseed(1)\nprint(randint(1, 100), random.normalvariate())"
    "\nrandom.sample(xs, 20)",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_builtin_gives_what_python_gives(name):
    program = PROGRAMS[name]
    assert gradcli_run(program) == python_run(program)


def test_random_shuffles_lists_not_tensors():
    with pytest.raises(GradcliError, match="random.shuffle takes a list, not a tensor"):
        gradcli_run("import random\nimport torch\nrandom.shuffle(torch.ones(3))")
