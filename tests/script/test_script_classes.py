"""The ``class`` statement in ``gradcli run``: script classes against Python's interactive
interpreter, subclasses of ``torch.autograd.Function`` and ``torch.nn.Module`` against torch
2.13, and the hostile cases (Python's internals through classes, runaway recursion and
instances), each refused or stopped with exit 2 before or without running anything more."""

from __future__ import annotations

import re

import pytest
from python_oracle import gradcli_run, masked, python_run, torch_runs

from gradcli.base.errors import GradcliError
from gradcli.script.python.interpreter import run_script

CLASSES = {
    "methods, class attributes, docstring, repr": 'class Foo:\n    """A foo."""\n    k = 3\n'
    "    def __init__(self, x):\n        self.x = x\n    def twice(self):\n"
    "        return self.x * 2 + self.k\nf = Foo(4)\nprint(f.twice(), Foo.k, Foo)\n"
    "f.k = 10\nprint(f.twice(), Foo.k)\nFoo.k = 5\nprint(Foo(1).twice())",
    "instance printed as Python prints it": "class Foo:\n    pass\nprint(Foo())\nFoo()\n"
    "print([Foo()], str(Foo()).startswith('<__main__.Foo object at 0x'))",
    "instance attributes read, written, deleted": "class A:\n    pass\na = A()\na.v = 1\n"
    "a.v += 2\nprint(a.v, hasattr(a, 'w'), getattr(a, 'w', 'none'))\ndel a.v\n"
    "print(hasattr(a, 'v'))\ndel a.v",
    "missing attribute": "class A:\n    pass\nA().nope",
    "the host's own names are not the script's": "class A:\n    pass\nfor n in ['script_class',"
    " 'script_call', 'python_name']:\n    print(hasattr(A(), n), hasattr(A, n))",
    "single inheritance and super()": "class Base:\n    def __init__(self, n):\n"
    "        self.n = n\n    def who(self):\n        return 'base' + str(self.n)\n"
    "class Child(Base):\n    def __init__(self, n):\n        super().__init__(n * 10)\n"
    "    def who(self):\n        return 'child/' + super().who()\n"
    "print(Child(2).who(), Child(2).n)",
    "diamond MRO, two-argument super": "class A:\n    def who(self):\n        return 'A'\n"
    "class B(A):\n    def who(self):\n        return 'B' + super().who()\n"
    "class C(A):\n    def who(self):\n        return 'C' + super().who()\n"
    "class D(B, C):\n    def who(self):\n        return 'D' + super(D, self).who()\n"
    "print(D().who(), issubclass(D, A), issubclass(A, D), isinstance(D(), C))\n"
    "print(type(D()) is D, type(D()), isinstance(D(), (int, B)))",
    "inconsistent MRO": "class A:\n    pass\nclass B(A):\n    pass\ntry:\n"
    "    class C(A, B):\n        pass\nexcept TypeError as e:\n    print(e)",
    "staticmethod, classmethod, property": "class T:\n    count = 0\n"
    "    def __init__(self, v):\n        self._v = v\n    @property\n    def v(self):\n"
    "        return self._v * 2\n    @v.setter\n    def v(self, new):\n        self._v = new\n"
    "    @staticmethod\n    def add(a, b):\n        return a + b\n    @classmethod\n"
    "    def make(cls, v):\n        cls.count += 1\n        return cls(v)\n"
    "t = T.make(3)\nprint(t.v, T.add(1, 2), t.add(3, 4), T.count)\nt.v = 10\nprint(t.v)",
    "property without setter": "class T:\n    @property\n    def v(self):\n        return 1\n"
    "T().v = 2",
    "special methods": "class V:\n    def __init__(self, *a):\n        self.a = list(a)\n"
    "    def __len__(self):\n        return len(self.a)\n    def __getitem__(self, i):\n"
    "        return self.a[i]\n    def __setitem__(self, i, v):\n        self.a[i] = v\n"
    "    def __add__(self, o):\n        return V(*[x + y for x, y in zip(self.a, o.a)])\n"
    "    def __mul__(self, k):\n        return V(*[x * k for x in self.a])\n"
    "    __rmul__ = __mul__\n    def __eq__(self, o):\n"
    "        return isinstance(o, V) and self.a == o.a\n    def __lt__(self, o):\n"
    "        return sum(self.a) < sum(o.a)\n    def __neg__(self):\n        return self * -1\n"
    "    def __repr__(self):\n        return f'V{tuple(self.a)}'\n    def __call__(self, k):\n"
    "        return self.a[k]\n"
    "v = V(1, 2) + V(3, 4)\nv[0] = 7\nprint(v, len(v), v[1], list(v), 2 * v, -v, v(1))\n"
    "print(v == V(7, 6), v != V(7, 6), V(1) == 3, sorted([V(5), V(1), V(3)]), 6 in v)\n"
    "print(bool(V()), min(V(4), V(2)), sum([V(1), V(2)], V(0)), callable(v))\nv",
    "functions and methods shown by their qualified names": "class Foo:\n"
    "    def m(self):\n        def inner():\n            pass\n        return inner\n"
    "    @classmethod\n    def c(cls):\n        pass\nprint(Foo.m, Foo().m, Foo.c, Foo().m())",
    "str and repr": "class S:\n    def __str__(self):\n        return 'as str'\n"
    "    def __repr__(self):\n        return 'as repr'\ns = S()\nprint(s, str(s), repr(s), [s])\n"
    "s\nprint(f'{s} {s!r}')",
    "__iter__ and __next__": "class Count:\n    def __init__(self, n):\n        self.n = n\n"
    "        self.i = 0\n    def __iter__(self):\n        return self\n    def __next__(self):\n"
    "        if self.i >= self.n:\n            raise StopIteration\n        self.i += 1\n"
    "        return self.i\nprint([k for k in Count(3)], list(Count(2)))",
    "an unhashable class": "class E:\n    def __eq__(self, o):\n        return True\n{E(): 1}",
    "unsupported operand": "class P:\n    pass\nprint(1 + P())",
    "class body scope": "x = 'global'\nclass C:\n    x = 'class'\n    y = x + '!'\n"
    "    def f(self):\n        return x\n    z = [x for _ in range(1)]\n"
    "print(C.y, C().f(), C.z)\ndef outer():\n    v = 'free'\n    class K:\n        w = v\n"
    "    return K\nprint(outer().w, outer())",
    "a method reads its enclosing function's names past the class": "def make(k):\n"
    "    class M:\n        def get(self):\n            return k * 2\n        def nested(self):\n"
    "            return [k + i for i in range(2)]\n    return M()\nm = make(5)\n"
    "print(m.get(), m.nested())",
    "a class attribute updated through an instance": "class A:\n    n = 0\n    items = []\n"
    "    def inc(self):\n        self.n += 1\n        self.items.append(self.n)\n"
    "        return self.n\na = A()\nprint(a.inc(), a.inc(), A.n, A.items)",
    "nested class": "class Outer:\n    class Inner:\n        pass\n"
    "print(Outer.Inner, Outer.Inner())",
    "a method called with the wrong arguments": "class W:\n    def __init__(self, a):\n"
    "        self.a = a\n    def m(self, b):\n        return b\ntry:\n    W()\n"
    "except TypeError as e:\n    print(e)\ntry:\n    W(1).m(1, 2)\nexcept TypeError as e:\n"
    "    print(e)\ndef f():\n    def g(x):\n        pass\n    g()\nf()",
    "exceptions of the script": "class Stop(Exception):\n    pass\n"
    "class Bad(ValueError):\n    def __init__(self, what):\n"
    "        super().__init__('bad ' + what)\n"
    "        self.what = what\ntry:\n    raise Bad('x')\nexcept Stop:\n    print('no')\n"
    "except ValueError as e:\n    print(e, repr(e), e.args, e.what, isinstance(e, Bad))\n"
    "try:\n    raise Stop\nexcept (Bad, Stop) as e:\n    print(type(e), repr(e))\n"
    "print(Stop(1, 2))\nraise Bad('end')",
    "__init__ returning a value": "class R:\n    def __init__(self):\n        return 1\nR()",
    "object base and no-argument instance": "class O(object):\n    pass\nO(1)",
}


@pytest.mark.parametrize("name", CLASSES)
def test_a_class_behaves_as_pythons(name):
    program = CLASSES[name]
    assert masked(gradcli_run(program)) == masked(python_run(program))


FUNCTIONS = {
    "exp, its node and grad_fn.name()": "class Exp(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, i):\n        result = i.exp()\n"
    "        ctx.save_for_backward(result)\n        return result\n    @staticmethod\n"
    "    def backward(ctx, grad_output):\n        result, = ctx.saved_tensors\n"
    "        return grad_output * result\n"
    "x = torch.tensor([0.5, -1.0], requires_grad=True)\ny = Exp.apply(x)\ny\n"
    "print(y.grad_fn.name())\ny.grad_fn\ny.sum().backward()\nx.grad",
    "needs_input_grad, ctx attributes, non-tensor arguments": "class Scale(torch.autograd."
    "Function):\n    @staticmethod\n    def forward(ctx, x, k, w):\n        ctx.k = k\n"
    "        print(ctx.needs_input_grad)\n        ctx.save_for_backward(w)\n"
    "        return x * k * w\n    @staticmethod\n    def backward(ctx, g):\n"
    "        w, = ctx.saved_tensors\n        return g * ctx.k * w, None, None\n"
    "x = torch.ones(2, requires_grad=True)\nw = torch.tensor([2.0, 3.0])\n"
    "Scale.apply(x, 4.0, w).sum().backward()\nprint(x.grad)",
    "mask write in backward (custom ReLU)": "class MyReLU(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
    "        return x.clamp(min=0)\n    @staticmethod\n    def backward(ctx, grad_output):\n"
    "        x, = ctx.saved_tensors\n        grad_x = grad_output.clone()\n"
    "        grad_x[x < 0] = 0\n        return grad_x\n"
    "w = torch.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)\n"
    "MyReLU.apply(w * 3).sum().backward()\nprint(w.grad)",
    "double backward": "class Cube(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x ** 3\n"
    "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
    "        return g * 3 * x ** 2\nx = torch.tensor([2.0], requires_grad=True)\n"
    "d, = torch.autograd.grad(Cube.apply(x), x, create_graph=True)\nd\n"
    "dd, = torch.autograd.grad(d, x)\ndd",
    "once_differentiable and materialize grads": "from torch.autograd.function import "
    "once_differentiable\nclass Two(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, x):\n        ctx.set_materialize_grads(False)\n"
    "        return x * 2, x * 3\n    @staticmethod\n    @once_differentiable\n"
    "    def backward(ctx, ga, gb):\n        print(ga is None, gb is None)\n"
    "        return ga * 2\nx = torch.ones(2, requires_grad=True)\na, b = Two.apply(x)\n"
    "a.sum().backward()\nprint(x.grad)",
    "mark_non_differentiable": "class Sort(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, x):\n        values, indices = x.sort()\n"
    "        ctx.mark_non_differentiable(indices)\n        ctx.save_for_backward(indices)\n"
    "        return values, indices\n    @staticmethod\n    def backward(ctx, g, _):\n"
    "        indices, = ctx.saved_tensors\n        out = torch.zeros_like(g)\n"
    "        out[indices] = g\n        return out\n"
    "x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)\nv, i = Sort.apply(x)\n"
    "print(v.requires_grad, i.requires_grad)\n(v * torch.tensor([1.0, 2.0, 3.0])).sum()"
    ".backward()\nprint(x.grad)",
    "a custom function's class": "class Id(torch.autograd.Function):\n    @staticmethod\n"
    "    def forward(ctx, x):\n        return x.clone()\n    @staticmethod\n"
    "    def backward(ctx, g):\n        return g\nprint(issubclass(Id, torch.autograd.Function),"
    " torch.autograd.Function, Id)",
    "gradcheck of a custom function": "class Sq(torch.autograd.Function):\n"
    "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n"
    "        return x * x\n    @staticmethod\n    def backward(ctx, g):\n"
    "        x, = ctx.saved_tensors\n        return 2 * x * g\n"
    "x = torch.tensor([0.3, 0.7], dtype=torch.double, requires_grad=True)\n"
    "torch.autograd.gradcheck(Sq.apply, x)\ntorch.autograd.gradgradcheck(Sq.apply, x)",
}
MODULES = {
    "a module of parameters, nested, its repr and API": "import torch.nn as nn\n"
    "class Affine(nn.Module):\n    def __init__(self, n, m):\n        super().__init__()\n"
    "        self.weight = nn.Parameter(torch.arange(float(n * m)).reshape(m, n) / 10)\n"
    "        self.bias = nn.Parameter(torch.zeros(m))\n        self.scale = 2.0\n"
    "    def forward(self, x):\n        return (x @ self.weight.T + self.bias) * self.scale\n"
    "    def extra_repr(self):\n        return f'n={self.weight.shape[1]}'\n"
    "class Net(nn.Module):\n    def __init__(self):\n        super(Net, self).__init__()\n"
    "        self.first = Affine(3, 4)\n        self.second = Affine(4, 1)\n"
    "    def forward(self, x):\n        return self.second(torch.relu(self.first(x)))\n"
    "net = Net()\nprint(net)\nnet\nx = torch.linspace(-1, 1, 6).reshape(2, 3)\ny = net(x)\n"
    "y\ny.pow(2).mean().backward()\nfor name, p in net.named_parameters():\n"
    "    print(name, p.shape, p.grad)\nprint(len(list(net.parameters())))\n"
    "net.zero_grad()\nprint(net.first.weight.grad)\n"
    "print(net.training, net.eval().training, net.first.training)\n"
    "print(list(net.state_dict().keys()))\n"
    "print(isinstance(net, nn.Module), isinstance(net, Net), isinstance(net.first, Net))\n"
    "print(net.first.scale, type(net))\nnet.first.bias\nnet.forward(x)\n"
    "print(issubclass(Net, nn.Module), issubclass(Net, object), nn.Module, nn.Parameter)",
    "Parameter before Module.__init__": "class Bad(torch.nn.Module):\n"
    "    def __init__(self):\n        self.w = torch.nn.Parameter(torch.ones(1))\nBad()",
}


@pytest.fixture(scope="module")
def torch_outcomes(tmp_path_factory):
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("classes")
    programs = [_torch(p) for p in (*FUNCTIONS.values(), *MODULES.values())]
    return torch_runs(programs, folder)


def _torch(program: str) -> str:
    return "import torch\n" + program


@pytest.mark.torch
@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_custom_function_behaves_as_torchs(name, torch_outcomes):
    program = _torch(FUNCTIONS[name])
    assert masked(gradcli_run(program)) == masked(torch_outcomes[program])


@pytest.mark.torch
@pytest.mark.parametrize("name", MODULES)
def test_a_module_subclass_behaves_as_torchs(name, torch_outcomes):
    program = _torch(MODULES[name])
    assert masked(gradcli_run(program)) == masked(torch_outcomes[program])


def test_a_tensor_written_through_a_bool_mask_outside_the_graph():
    program = "x = torch.tensor([1.0, -2.0, 3.0])\ng = torch.ones(3)\ng[x < 0] = 0\nprint(g)"
    assert gradcli_run(program)[0] == "tensor([1., 0., 1.])\n"


HOSTILE = {
    "a dunder read through a class": ("class A:\n    pass\nprint('ran')\nA.__dict__", "'__'"),
    "type(x).__mro__": ("class A:\n    pass\nprint('ran')\ntype(A()).__mro__", "'__'"),
    "super().__getattribute__": (
        "class A:\n    def f(self):\n        return super().__getattribute__('f')\n"
        "print('ran')\nA().f()",
        "'__'",
    ),
    "__bases__ through __class__": (
        "class A:\n    pass\nprint('ran')\nA().__class__.__bases__",
        "'__'",
    ),
    "__getattr__ defined": (
        "print('ran')\nclass A:\n    def __getattr__(self, name):\n        return 1",
        "does not honour __getattr__",
    ),
    "__init_subclass__ assigned": (
        "print('ran')\nclass A:\n    __init_subclass__ = print",
        "does not honour __init_subclass__",
    ),
    "a metaclass": ("print('ran')\nclass A(metaclass=type):\n    pass", "class keywords"),
    "super() outside a method": ("print('ran')\ndef f():\n    return super()", "super()"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_class_is_refused_before_it_runs(name):
    program, words = HOSTILE[name]
    with pytest.raises(GradcliError, match=re.escape(words)):
        gradcli_run(program)


def test_a_metaclass_refusal_says_what_to_write_instead():
    with pytest.raises(GradcliError) as caught:
        gradcli_run("class A(metaclass=type):\n    pass")
    assert "class Net(nn.Module):" in caught.value.hint


def _stopped(program: str, **limits: int) -> str:
    out = []

    class Out:
        def write(self, text):
            out.append(text)

        def flush(self):
            pass

    with pytest.raises(GradcliError) as caught:
        run_script(program, "<stdin>", out=Out(), err=Out(), **limits)  # type: ignore[arg-type]
    return str(caught.value)


@pytest.mark.parametrize(
    "program",
    [
        "class A:\n    def __init__(self):\n        A()\nA()",
        "class A:\n    def __getitem__(self, i):\n        return self[i]\nA()[0]",
        "class A:\n    def __repr__(self):\n        return repr(self)\nprint(A())",
        "class A:\n    def __eq__(self, o):\n        return self == o\nA() == 1",
    ],
)
def test_unbounded_recursion_through_a_class_stops_with_exit_2(program):
    assert "calls nest more than" in _stopped(program)


def test_a_million_instances_are_bounded_by_the_steps():
    program = "class A:\n    pass\nxs = [A() for _ in range(10 ** 6)]"
    assert "steps" in _stopped(program, max_steps=100_000)


def test_a_million_instances_are_bounded_by_the_memory():
    from gradcli.base import bounds

    program = "class A:\n    pass\nxs = [A() for _ in range(10 ** 6)]"
    with bounds.using(bounds.Budget(max_memory=100_000_000)):
        assert "--max-memory" in _stopped(program)


def test_input_is_a_name_whose_call_is_refused():
    # torch's docstring of autograd.Function passes the builtin where a tensor goes
    program = "def f(i):\n    return i.exp()\nprint('ran')\nf(input)"
    assert gradcli_run(program) == python_run(program)
    assert "does not take input()" in _stopped("x = input('? ')")


def test_classes_made_in_a_loop_are_bounded_by_the_memory():
    from gradcli.base import bounds

    program = "made = []\nfor _ in range(10 ** 6):\n    class A:\n        pass\n    made.append(A)"
    with bounds.using(bounds.Budget(max_memory=100_000_000)):
        assert "--max-memory" in _stopped(program)
