"""Names in ``gradcli run``'s interpreter live where Python puts them (module, function,
closure, comprehension), compared with Python's interactive interpreter."""

from __future__ import annotations

import pytest
from python_oracle import gradcli_run, python_run

PROGRAMS = {
    "a local shadows a global": "x = 1\ndef f():\n    x = 2\n    return x\nprint(f(), x)",
    "read before assignment": "x = 1\ndef f():\n    print(x)\n    x = 2\nf()",
    "closure": "def outer(n):\n    def inner(m):\n        return n * m\n    return inner\n"
    "triple = outer(3)\nprint(triple(5), outer(2)(2))",
    "late binding": "fs = []\nfor i in range(3):\n    fs.append(lambda: i)\n"
    "print([f() for f in fs])",
    "nonlocal": "def counter():\n    c = 0\n    def step():\n        nonlocal c\n        c += 1\n"
    "        return c\n    return step\ns = counter()\ns()\nprint(s(), s())",
    "global statement": "total = 0\ndef add(v):\n    global total\n    total = total + v\n"
    "add(3)\nadd(4)\nprint(total)",
    "comprehension scope": "i = 'outer'\nsquares = [i * i for i in range(3)]\nprint(i, squares)",
    "comprehension reads the enclosing function": "def f(k):\n    return [k * j for j in "
    "range(3)]\nprint(f(10))",
    "recursion sees itself": "def even(n):\n    return True if n == 0 else odd(n - 1)\n"
    "def odd(n):\n    return False if n == 0 else even(n - 1)\nprint(even(10), odd(7))",
    "defaults are evaluated once": "def f(v, seen=[]):\n    seen.append(v)\n    return seen\n"
    "f(1)\nprint(f(2))",
    "a builtin shadowed": "def sum(*a):\n    return 'mine'\nprint(sum(1, 2))\nlen = 3\nprint(len)",
    "a name like an operation": "bce = 2\nlinear = 3\ntanh = bce * linear\nprint(tanh)",
    "free variable not yet bound": "def f():\n    def g():\n        return v\n    g()\n"
    "    v = 1\nf()",
    "loop variable after the loop": "for i in range(3):\n    pass\nprint(i)",
    "except name is removed": "try:\n    1 / 0\nexcept Exception as e:\n    pass\nprint(e)",
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_name_is_where_python_puts_it(name):
    program = PROGRAMS[name]
    assert gradcli_run(program) == python_run(program)
