"""``gradcli run``'s interpreter runs Python's statements as Python does: each program here is
run by the interpreter and by Python's interactive interpreter (``python_oracle``), and their
stdout, exit status and exception line must be the same."""

from __future__ import annotations

import pytest
from python_oracle import gradcli_run, python_run

PROGRAMS = {
    "assignment": "a = b = 3\nprint(a, b)\nx, y = 1, 2\nx, y = y, x\nprint(x, y)",
    "starred": "a, *b, c = range(6)\nprint(a, b, c)\n*a, b = 'xyz'\nprint(a, b)",
    "nested unpacking": "(a, b), c = (1, 2), 3\nfor i, (j, k) in enumerate([(4, 5)]):\n"
    "    print(i, j, k)\nprint(a, b, c)",
    "unpack too many": "a, b = 1, 2, 3",
    "unpack too few": "a, b, c = [1, 2]",
    "item and attribute targets": "d = {}\nd['k'] = [0, 0]\nd['k'][1] = 5\nprint(d)",
    "augmented": "n = 5\nn += 2\nn *= 3\nn //= 4\nn -= 1\nn **= 2\nn %= 7\nprint(n)\n"
    "s = 'a'\ns += 'b'\nl = [1]\nl += [2]\nl *= 2\nprint(s, l)",
    "if elif else": "for v in (-1, 0, 1):\n    if v < 0:\n        print('neg')\n"
    "    elif v == 0:\n        print('zero')\n    else:\n        print('pos')",
    "while else break continue": "i = 0\nwhile i < 10:\n    i += 1\n    if i % 2:\n"
    "        continue\n    if i > 6:\n        break\n    print(i)\nelse:\n    print('no')\n"
    "while i > 20:\n    pass\nelse:\n    print('else', i)",
    "for over everything": "for k in {'a': 1, 'b': 2}:\n    print(k)\n"
    "for a, b in zip('xy', (1, 2)):\n    print(a, b)\n"
    "for c in 'hi':\n    print(c)\nfor i in range(10, 0, -3):\n    print(i)",
    "echo at top level": "3 + 4\nNone\nfor i in range(2):\n    i * 10\n'text'\n[1, (2,), {3: 4}]",
    "no echo in a function": "def f():\n    5\n    return None\nf()\nprint(f())",
    "def": "def f(a, b=2, *args, c, d=4, **kw):\n    'its docstring'\n"
    "    return a, b, args, c, d, kw\nprint(f(1, c=3))\nprint(f(1, 5, 6, 7, c=3, e=8))",
    "annotations": "def f(x: int, y: 'float' = 1.0) -> float:\n    return x * y\nz: int = 3\n"
    "w: float\nprint(f(z), f(2, y=0.5))",
    "no return is None": "def f(x):\n    x = x + 1\nprint(f(1))",
    "recursion": "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\nprint(fact(20))",
    "missing argument": "def f(a, b):\n    return a\nf(1)",
    "unexpected keyword": "def f(a):\n    return a\nf(1, b=2)",
    "too many arguments": "def f(a, b=1):\n    return a\nf(1, 2, 3)",
    "lambda": "sq = lambda v, p=2: v ** p\nprint(sq(3), sq(2, p=10), (lambda: 'x')())",
    "decorator": "def twice(f):\n    return lambda v: f(f(v))\n@twice\ndef inc(v):\n"
    "    return v + 1\nprint(inc(0))",
    "try except else finally": "def div(a, b):\n    try:\n        r = a / b\n"
    "    except ZeroDivisionError as e:\n        print('error:', e)\n        return None\n"
    "    else:\n        print('fine')\n        return r\n    finally:\n        print('done')\n"
    "print(div(1, 2), div(1, 0))",
    "except tuple and reraise": "try:\n    try:\n        [][1]\n    except (KeyError, IndexError):"
    "\n        print('caught')\n        raise\nexcept Exception as e:\n    print('again', e)",
    "raise": "def check(v):\n    if v < 0:\n        raise ValueError(f'negative: {v}')\n"
    "    return v\nprint(check(1))\ncheck(-2)",
    "raise a class": "raise RuntimeError",
    "assert": "assert 1 < 2, 'fine'\nassert [], 'empty list'",
    "del": "a = 1\nl = [1, 2, 3]\nd = {'k': 1}\ndel l[0], d['k']\ndel a\nprint(l, d)\nprint(a)",
    "pass": "if True:\n    pass\nprint('ok')",
    "with a name error": "print(undefined_name)",
    "imports": "import math\nfrom functools import partial, reduce\nimport operator as op\n"
    "import itertools\nprint(math.sqrt(16), math.pi, partial(pow, 2)(10))\n"
    "print(reduce(op.add, [1, 2, 3]), list(itertools.product('ab', range(2))))",
    "global": "n = 0\ndef bump():\n    global n\n    n += 1\nbump()\nbump()\nprint(n)",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_statement_runs_as_python_runs_it(name):
    program = PROGRAMS[name]
    assert gradcli_run(program) == python_run(program)
