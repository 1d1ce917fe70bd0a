"""``gradcli run``'s interpreter computes Python's expressions as Python does, compared with
Python's interactive interpreter (``python_oracle``): numbers, strings, containers,
comprehensions, f-strings, comparisons, calls."""

from __future__ import annotations

import pytest
from python_oracle import gradcli_run, python_run

PROGRAMS = {
    "integers": "print(7 // 2, -7 // 2, 7 % -3, 2 ** 100, 10 / 4, 1 << 70, ~5, 5 ^ 3, 6 & 3)",
    "floats": "print(0.1 + 0.2, 1e300 * 10, 2 ** -1, 7.5 // 2, -7.5 % 2, round(2.675, 2))",
    "mixed and complex": "print(1 + 2.5, True + 1, 3 * 1j, (1 + 2j) * (3 - 1j), abs(-3 + 4j))",
    "division by zero": "print(1 / 0)",
    "chained comparisons": "print(1 < 2 < 3, 1 < 3 < 2, 1 == 1.0 != 2, 'a' < 'b' <= 'b')",
    "and or not": "print(0 or [] or 'x', 1 and 0, not 0, None or 5, 2 and 3)",
    "is and in": "a = [1]\nprint(a is a, a is not [1], 1 in a, 2 not in a, 'b' in 'abc')",
    "conditional": "x = 5\nprint('big' if x > 3 else 'small', 1 if [] else 2)",
    "strings": "s = 'Hello'\nprint(s.upper(), s[1:4], s[::-1], s * 3, len(s), s.split('l'))\n"
    "print('-'.join(['a', 'b']), s.replace('l', 'L'), s.startswith('He'), s.find('z'))\n"
    "print('{} and {:>5}'.format(1, 'x'), 'x'.ljust(4) + '|', '%d%%' % 50)",
    "f-strings": "x = 3.14159\nn = 42\nw = 8\nprint(f'{x:.2f} {n:>5} {n:05d} {x!r} {\"s\"!s:>3}')\n"
    "print(f'{x:{w}.3}|{n:x}|{n:,}|{x:e}|{[1, 2]}|{None}')",
    "containers": "l = [3, 1, 2]\nl.append(4)\nl.extend((5,))\nl.insert(0, 9)\nprint(l, l.pop(), "
    "l.index(1))\nd = {'a': 1}\nd.update(b=2)\nprint(d, d.get('z', 0), list(d.items()))\n"
    "print({1, 2} | {3}, {1, 2} & {2}, (1,) + (2,), [1] * 3, {**d, 'c': 3}, [*l, *'ab'])",
    "subscripts and slices": "l = list(range(10))\nprint(l[2], l[-1], l[2:8:2], l[::-3], "
    "l[:-7])\nm = [[1, 2], [3, 4]]\nprint(m[1][0], 'abc'[1:])",
    "index error": "print([1, 2][5])",
    "key error": "print({'a': 1}['b'])",
    "comprehensions": "print([i * i for i in range(5) if i % 2 == 0])\n"
    "print({k: v for k, v in zip('ab', (1, 2))}, {c for c in 'hello'})\n"
    "print([(i, j) for i in range(3) for j in range(i)], sum(x for x in range(5)))",
    "calls of calls": "def adder(a):\n    return lambda b: a + b\nprint(adder(2)(3))\n"
    "fs = [lambda v, k=k: v * k for k in range(3)]\nprint([f(10) for f in fs])",
    "star arguments": "def f(*a, **k):\n    return a, k\nargs = (1, 2)\nkw = {'z': 3}\n"
    "print(f(*args, 0, *[9], **kw, y=4))",
    "walrus": "if (n := 10) > 5:\n    print(n)",
    "attribute error": "x = 5\nx.nope",
    "type error": "print('a' + 1)",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_an_expression_is_what_python_computes(name):
    program = PROGRAMS[name]
    assert gradcli_run(program) == python_run(program)
