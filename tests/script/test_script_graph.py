"""torch.autograd.graph in ``gradcli run``: the Node class, a node's hooks, the saved-tensor
hooks' blocks, and the in-place methods they are seen with. Each program runs in gradcli's
interpreter and, with torch 2.13, in Python's interactive interpreter (``python_oracle``);
stdout (object addresses masked), exit status and exception line must be the same."""

from __future__ import annotations

import gc as collector

import pytest
from python_oracle import compared_with_torch, gradcli_run

from gradcli.base.errors import GradcliError
from gradcli.engine import graph_hooks
from gradcli.ops import library as gc

PRELUDE = "import torch\na = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\n"
PROGRAMS = {
    "Node": "b = a.clone()\nprint(isinstance(b.grad_fn, torch.autograd.graph.Node), "
    "isinstance(a, torch.autograd.graph.Node), b.grad_fn.name())\n"
    "print(isinstance(b.grad_fn.next_functions[0][0], torch.autograd.graph.Node))\n"
    "b.grad_fn.metadata['step'] = 1\nprint(b.grad_fn.metadata)\n"
    "from torch.autograd.graph import Node\nprint(isinstance(b.grad_fn, (int, Node)))",
    "a node's hook and pre-hook": "b = a.clone()\n"
    "handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))\n"
    "b.sum().backward(retain_graph=True)\nprint(a.grad)\nhandle.remove()\nhandle.remove()\n"
    "a.grad = None\nb.sum().backward(retain_graph=True)\nprint(a.grad)\n"
    "h = b.grad_fn.register_prehook(lambda gO: (gO[0] * 3,))\na.grad = None\n"
    "b.sum().backward()\nprint(a.grad)\nh",
    "what a hook is given": "m = a * torch.ones(3)\n"
    "def seen(grad_inputs, grad_outputs):\n    print('hook', grad_inputs, grad_outputs)\n"
    "m.grad_fn.register_hook(seen)\n"
    "m.grad_fn.register_prehook(lambda g: print('pre', g))\n"
    "n = a * 2.0\nn.grad_fn.register_hook(seen)\n(m + n).sum().backward()\nprint(a.grad)",
    "a pre-hook's values counted": "b = a.sin()\n"
    "b.grad_fn.register_prehook(lambda g: (g[0] * 2, g[0]))\nb.sum().backward()",
    "a hook's value not a tuple": "b = a.sin()\nb.grad_fn.register_hook(lambda gi, go: 5)\n"
    "b.sum().backward()",
    "a hook's value not a tensor": "b = a.sin()\n"
    "b.grad_fn.register_hook(lambda gi, go: (5,))\nb.sum().backward()",
    "saved tensors packed and unpacked": "def pack_hook(x):\n    print('Packing', x)\n"
    "    return x.detach()\ndef unpack_hook(x):\n    print('Unpacking', x)\n    return x\n"
    "b = torch.ones(3, requires_grad=True) * 2\n"
    "with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):\n"
    "    y = a * b\n    z = a.pow(2)\n    e = a.exp()\n    s = a.sin()\n    q = a * a\n"
    "    w = a * 3\n    d = a / b\n"
    "print(torch.is_grad_enabled())\n(y + z + e + s + q + w + d).sum().backward()\nprint(a.grad)",
    "hooks that change the values": "storage = []\ndef pack(x):\n    storage.append(x)\n"
    "    return len(storage) - 1\ndef unpack(k):\n    return storage[k]\n"
    "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n    y = a * a\n"
    "y.sum().backward()\nprint(a.grad, len(storage))\na.grad = None\n"
    "with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):\n"
    "    y = torch.pow(a, 2)\ny.sum().backward()\nprint(a.grad.equal(2 * a))\n"
    "with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 0, lambda x: x):\n"
    "    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):\n"
    "        y = a * a\n    v = a * a\na.grad = None\ny.sum().backward()\nprint(a.grad)\n"
    "a.grad = None\nv.sum().backward()\nprint(a.grad)",
    "a saved tensor read by the script": "with torch.autograd.graph.saved_tensors_hooks("
    "lambda x: x * 2, lambda x: x + 1):\n    y = a * torch.ones(3, requires_grad=True)\n"
    "print(y.grad_fn._saved_self, y.grad_fn._saved_other)",
    "an unpack hook's value not a tensor": "with torch.autograd.graph.saved_tensors_hooks("
    "lambda t: t, lambda t: 1):\n    q = a.sin()\nq.sum().backward()",
    "save_on_cpu": "with torch.autograd.graph.save_on_cpu():\n    y = a * a\n"
    "y.sum().backward()\nprint(a.grad)\n"
    "with torch.autograd.graph.save_on_cpu(pin_memory=True) as kept:\n    print(kept)",
    "disable_saved_tensors_hooks": "with torch.autograd.graph.disable_saved_tensors_hooks("
    "'no hooks here'):\n    y = a * 2\n"
    "with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):\n"
    "    y = a * a\nprint(y)\n"
    "with torch.autograd.graph.disable_saved_tensors_hooks('no hooks here'):\n"
    "    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):\n"
    "        pass",
    "allow_mutation_on_saved_tensors": "with "
    "torch.autograd.graph.allow_mutation_on_saved_tensors():\n"
    "    b = a.clone()\n    out = (b**2).sum()\n    b.sin_()\n    out.sum().backward()\n"
    "print(a.grad)\nc = torch.ones(3)\n"
    "with torch.autograd.graph.allow_mutation_on_saved_tensors():\n"
    "    y = a * c\n    c.mul_(5)\n    y.sum().backward()\nprint(a.grad, c)",
    "in-place methods": "c = torch.tensor([[0.5, -1.0, 2.0]])\nc.exp_()\nc.clamp_(min=1.0)\n"
    "c.unsqueeze_(0)\nprint(c.shape)\nc.squeeze_()\nc.gt_(1.5)\nb = a * 2\nb.sin_()\n"
    "b.sum().backward()\nprint(a.grad)\ntorch.tensor([1, 2]).sin_()",
    "an in-place method on a leaf": "a.sin_()",
    "register_multi_grad_hook": "b = torch.tensor([1., 2., 3.], requires_grad=True)\n"
    "c = a * b\nd = a * b\ndef fn(grads):\n"
    "    print([g is not None for g in grads], [g.sum().item() for g in grads if g is not None])"
    "\nhandle = torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)\nhandle\n"
    "c.sum().backward(retain_graph=True)\nc.sum().backward(inputs=(a,), retain_graph=True)\n"
    "torch.autograd.grad(d.sum(), [b])\n(c * 0).sum().backward()\nhandle.remove()\n"
    "d.sum().backward()\nprint(a.grad)",
    "a multi-grad hook of results": "c = a * 2\nd = a * 3\nh = "
    "torch.autograd.graph.register_multi_grad_hook([c, d], lambda gs: print(gs))\n"
    "torch.autograd.grad(c.sum(), a, retain_graph=True)\n(c * 0 + d).sum().backward()\n"
    "h.remove()\nd.sum().backward()\nprint(a.grad)",
    "a saved operand written in place": "b = a.clone()\nout = (b**2).sum()\nb.sin_()\n"
    "out.backward()",
    "a saved leaf written under no_grad": "y = (a * a).sum()\nwith torch.no_grad():\n"
    "    a.mul_(2)\ny.backward()",
    "a saved result written in place": "y = a.exp()\nz = y.sum()\ny.add_(1)\nz.backward()",
    "written twice": "b = a * 1\ny = (b * b).sum()\nb += 1\nb += 1\ny.backward()",
    "written by an index": "b = a.double() * 1\ny = (b * b).sum()\nb[0] = 5\ny.backward()",
    "zeroed": "b = a * 1\ny = (b * b).sum()\nb.zero_()\ny.backward()",
    "written where nothing saved it": "b = a * 1\ny = (b + b).sum()\nb.mul_(3)\n"
    "y.backward()\nx = torch.ones(3)\ny = (a * x).sum()\nx.data.mul_(2)\ny.backward()\n"
    "print(a.grad)\nfor i in range(3):\n    loss = (a * a).sum()\n    loss.backward()\n"
    "    with torch.no_grad():\n        a -= 0.1 * a.grad\n    a.grad.zero_()\n"
    "print(a)",
    "increment_version": "x = torch.ones(3)\ny = (a * x).sum()\n"
    "torch.autograd.graph.increment_version(x)\ny.backward()",
    "a node's edges, as torch's derivative formulas take its operands": "b = a * 1\n"
    "for y in (2 * b, 2 + b, 2 - b, 2 / b, 2 ** b, b ** 2, b * 2, 1 - b.sigmoid()):\n"
    "    print(y.grad_fn, y.grad_fn.next_functions)\n"
    "m = torch.stack([b, b])\ni = torch.tensor([[0, 2, 1], [1, 0, 0]])\n"
    "for y in (m.gather(1, i), m.index_select(0, torch.tensor([1])), m[torch.tensor([1, 0])],"
    "\n          m.masked_fill(m > 0, 0.0), torch.where(m > 0, m, 0.0), torch.lerp(b, b, 0.5),"
    "\n          b * (b > 0), torch.where(b > 0, b, torch.tensor([1, 2, 3]))):\n"
    "    print(y.grad_fn, y.grad_fn.next_functions)",
    "register_multi_grad_hook's mode": "torch.autograd.graph.register_multi_grad_hook("
    "(a,), print, mode='some')",
}


torch_outcomes, test_the_graph_behaves_as_torchs = compared_with_torch("graph", PROGRAMS, PRELUDE)


def test_the_engine_calls_a_nodes_hooks_and_unpacks_what_it_packed():
    x = gc.Tensor([1.0, 2.0], requires_grad=True)
    y = gc.Tensor([3.0, 4.0], requires_grad=True)
    seen = []

    def pack(t):
        seen.append(t)
        return len(seen) - 1

    with graph_hooks.saved_tensors_hooks(pack, seen.__getitem__):
        z = x * y
    assert [t is y for t in seen] == [True, False] and seen[1] is x  # other first, as torch's
    handle = graph_hooks.register_prehook(z, lambda g: (g[0] * 10,))
    z.sum().backward(retain_graph=True)
    assert x.grad.tolist() == [30.0, 40.0]
    handle.remove()
    assert not graph_hooks.SAVED_HOOKS
    z.sum().backward()
    assert x.grad.tolist() == [33.0, 44.0]


def test_a_hook_lives_as_long_as_its_node():
    x = gc.Tensor([1.0], requires_grad=True)
    y = x * x
    before = len(graph_hooks.HOOKED)
    graph_hooks.register_hook(y, lambda gi, go: None)
    assert len(graph_hooks.HOOKED) == before + 1
    del y
    assert len(graph_hooks.HOOKED) == before


def test_a_hook_that_reaches_its_node_dies_with_it():
    """A hook is kept by its node, not by the engine: one whose closure holds the node's
    tensor (a script's function holds the script's globals) goes with the graph."""
    x = gc.Tensor([1.0], requires_grad=True)
    y = x * x
    collector.collect()
    before = len(graph_hooks.HOOKED), len(graph_hooks.PACKED)
    graph_hooks.register_hook(y, lambda gi, go, kept=[y]: None)
    with graph_hooks.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = y * y  # packs y, which holds z's node alive only through z
    assert (len(graph_hooks.HOOKED), len(graph_hooks.PACKED)) == (before[0] + 1, before[1] + 1)
    del y, z
    collector.collect()
    assert (len(graph_hooks.HOOKED), len(graph_hooks.PACKED)) == before


def test_nothing_of_a_script_outlives_its_run():
    """A run's values, its hooks and saved tensors among them, go when the run ends: the
    REPL, the library and a test suite run many scripts in one process."""
    program = (
        PRELUDE + "b = a.clone()\nh = b.grad_fn.register_hook(lambda gI, gO: None)\n"
        "with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):\n"
        "    c = (b * b).sum()\nc.backward()\nprint(isinstance(c, torch.Tensor))\n"
    )
    collector.collect()
    alive = sum(type(o) is gc.Tensor for o in collector.get_objects())
    assert gradcli_run(program) == ("True\n", 0, "")
    collector.collect()
    assert sum(type(o) is gc.Tensor for o in collector.get_objects()) == alive
    assert not graph_hooks.HOOKED and not graph_hooks.PACKED


def test_a_multi_grad_hook_of_any_gradient_is_refused():
    with pytest.raises(GradcliError, match="mode='all' only"):
        gradcli_run(
            PRELUDE + "torch.autograd.graph.register_multi_grad_hook((a,), print, mode='any')"
        )
