"""gradcli.nn.Module: registration by assignment, torch's walks and orders, the state dict,
modes, dtypes and printed forms, against torch 2.13's text where torch is installed and
against torch's text copied here where it is not."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import gradcli.ops.library as E
from gradcli import nn
from gradcli.engine.tensor import default_dtype


def _net(nn_module):
    """The same custom model in gradcli.nn or torch.nn."""

    class Net(nn_module.Module):
        def __init__(self):
            super().__init__()
            self.features = nn_module.Sequential(
                nn_module.Linear(3, 4), nn_module.ReLU(), nn_module.Dropout(0.1)
            )
            self.heads = nn_module.ModuleList([nn_module.Linear(4, 2) for _ in range(3)])
            self.norm = nn_module.BatchNorm1d(2)
            self.scale = nn_module.Parameter(nn_module.init.ones_(self.heads[0].bias.detach() * 0))
            self.named = nn_module.ModuleDict(
                {"act": nn_module.Tanh(), "out": nn_module.Linear(2, 1)}
            )
            self.plain = 3

        def forward(self, x):
            h = self.features(x)
            h = sum(head(h) for head in self.heads) * self.scale
            return self.named["out"](self.named["act"](self.norm(h)))

    return Net()


NET_TEXT = """Net(
  (features): Sequential(
    (0): Linear(in_features=3, out_features=4, bias=True)
    (1): ReLU()
    (2): Dropout(p=0.1, inplace=False)
  )
  (heads): ModuleList(
    (0-2): 3 x Linear(in_features=4, out_features=2, bias=True)
  )
  (norm): BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
  (named): ModuleDict(
    (act): Tanh()
    (out): Linear(in_features=2, out_features=1, bias=True)
  )
)"""

NAMES = [
    "scale",
    "features.0.weight",
    "features.0.bias",
    "heads.0.weight",
    "heads.0.bias",
    "heads.1.weight",
    "heads.1.bias",
    "heads.2.weight",
    "heads.2.bias",
    "norm.weight",
    "norm.bias",
    "named.out.weight",
    "named.out.bias",
]


@pytest.fixture
def float32():
    with default_dtype(np.float32):
        yield


def test_a_custom_module_registers_and_prints_as_torchs(float32):
    net = _net(nn)
    assert repr(net) == NET_TEXT
    assert [name for name, _ in net.named_parameters()] == NAMES
    assert list(net.state_dict()) == [
        *NAMES[:11],
        "norm.running_mean",
        "norm.running_var",
        "norm.num_batches_tracked",
        *NAMES[11:],
    ]
    assert [type(m).__name__ for m in net.children()] == [
        "Sequential",
        "ModuleList",
        "BatchNorm1d",
        "ModuleDict",
    ]
    assert len(list(net.modules())) == 13
    assert net.plain == 3 and "plain" not in net._modules


def test_the_walks_and_state_dict_are_torchs(float32):
    torch = pytest.importorskip("torch")
    E.manual_seed(1)
    ours = _net(nn)
    torch.manual_seed(1)
    theirs = _net(torch.nn)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert type(ours_state) is OrderedDict
    assert list(ours_state) == list(theirs_state)
    for key, value in theirs_state.items():
        assert np.array_equal(ours_state[key].data, value.numpy()), key
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(
        ours(E.tensor(x, dtype=np.float32)).data,
        theirs(torch.from_numpy(x)).detach().numpy(),
        rtol=1e-5,
    )


def test_parameter_and_state_dict_print_as_torch(float32):
    param = nn.Parameter(E.tensor([1.0, 2.0], dtype=np.float32))
    assert repr(param) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    E.manual_seed(0)
    layer = nn.Linear(2, 1)
    assert repr(layer.state_dict()) == (
        "OrderedDict([('weight', tensor([[-0.0053,  0.3793]])), ('bias', tensor([-0.5820]))])"
    )
    assert repr(layer.load_state_dict(layer.state_dict())) == "<All keys matched successfully>"


def test_load_state_dict_copies_and_refuses_as_torch(float32):
    source, target = nn.Linear(3, 2), nn.Linear(3, 2)
    target.load_state_dict(source.state_dict())
    assert np.array_equal(target.weight.data, source.weight.data)
    assert target.weight.data is not source.weight.data
    with pytest.raises(
        Exception,
        match=r"size mismatch for weight: copying a param with shape "
        r"torch.Size\(\[1, 3\]\) from checkpoint, the shape in current model is "
        r"torch.Size\(\[2, 3\]\)",
    ):
        target.load_state_dict(nn.Linear(3, 1).state_dict())
    with pytest.raises(Exception, match='Missing key\\(s\\) in state_dict: "bias"'):
        target.load_state_dict({"weight": source.weight.detach()})
    result = target.load_state_dict(
        {"weight": source.weight.detach(), "x": E.ones(1)}, strict=False
    )
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["x"]


def test_state_dict_shares_the_parameters_values(float32):
    layer = nn.Linear(2, 2)
    state = layer.state_dict()
    nn.init.zeros_(layer.weight)
    assert float(abs(state["weight"].data).sum()) == 0.0
    assert not state["weight"].requires_grad


def test_modes_grad_switches_and_dtypes():
    net = nn.Sequential(nn.Linear(2, 3), nn.Dropout(), nn.Linear(3, 1))
    assert net.training and net[1].training
    net.eval()
    assert not net.training and not net[1].training
    net.train()
    assert net[1].training
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    net(E.ones(4, 2)).sum().backward()
    assert net[0].weight.grad is not None
    net.zero_grad(set_to_none=False)
    assert float(net[0].weight.grad.data.sum()) == 0.0
    net.zero_grad()
    assert net[0].weight.grad is None
    assert net.float() is net and net[0].weight.dtype == np.float32
    net.to(np.float64)
    assert net[2].bias.dtype == np.float64 and net[2].bias.data.dtype == np.float64
    assert net.to("cpu") is net


def test_containers_index_slice_and_grow():
    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))
    assert isinstance(seq[-1], nn.Linear) and len(seq) == 3
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and list(head._modules) == ["0", "1"]
    del seq[1]
    assert list(seq._modules) == ["0", "1"] and isinstance(seq[1], nn.Linear)
    seq.append(nn.Tanh())
    assert repr(seq).endswith("(2): Tanh()\n)")
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(1, 1)), ("act", nn.Sigmoid())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    modules = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])
    assert repr(modules) == "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)"
    modules.append(nn.Linear(1, 1))
    assert len(list(modules.parameters())) == 2
    table = nn.ModuleDict({"a": nn.ReLU()})
    table["b"] = nn.Linear(1, 1)
    assert list(table.keys()) == ["a", "b"] and "b" in table


def test_assignment_rules_and_errors_are_torchs():
    class Early(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(
        AttributeError, match=r"cannot assign module before Module.__init__\(\) call"
    ):
        Early()
    layer = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'weight'"):
        layer.weight = 3
    with pytest.raises(TypeError, match="cannot assign 'torch.DoubleTensor' as parameter"):
        layer.weight = E.ones(2, 2)
    layer.bias = None
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        layer.nothing  # noqa: B018
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


def test_a_parameter_shared_by_two_modules_is_listed_once():
    first = nn.Linear(2, 2)
    second = nn.Linear(2, 2)
    second.weight = first.weight
    both = nn.Sequential(first, second)
    assert len(list(both.parameters())) == 3


def test_hooks_see_the_input_and_output():
    layer = nn.Linear(1, 1)
    seen = []
    handle = layer.register_forward_hook(lambda module, args, out: seen.append(out.shape))
    layer(E.ones(3, 1))
    handle.remove()
    layer(E.ones(3, 1))
    assert seen == [(3, 1)]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_is_torchs(float32, norm_type, max_norm):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    grads = [rng.standard_normal(shape).astype(np.float32) for shape in [(3, 4), (4,), (2, 2)]]
    ours = [nn.Parameter(E.zeros(*g.shape, dtype=np.float32)) for g in grads]
    theirs = [torch.nn.Parameter(torch.zeros(*g.shape)) for g in grads]
    for p, t, g in zip(ours, theirs, grads):
        p.grad = E.tensor(g.copy(), dtype=np.float32)
        t.grad = torch.from_numpy(g.copy())
    total = nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    np.testing.assert_allclose(total.data, expected.numpy(), rtol=1e-6)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.data, t.grad.numpy(), rtol=1e-6)
    nn.utils.clip_grad_value_(ours, 0.1)
    torch.nn.utils.clip_grad_value_(theirs, 0.1)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.data, t.grad.numpy(), rtol=1e-6)


def test_clip_grad_norm_scales_down_only():
    param = nn.Parameter(E.zeros(2))
    param.grad = E.tensor([3.0, 4.0])
    assert float(nn.utils.clip_grad_norm_([param], 10.0).data) == 5.0
    assert param.grad.tolist() == [3.0, 4.0]
    nn.utils.clip_grad_norm_(param, 1.0)
    np.testing.assert_allclose(param.grad.tolist(), [0.6, 0.8], rtol=1e-6)


def test_parameter_containers_register_and_print_as_torch():
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = nn.ParameterList(
                [nn.Parameter(E.ones(2, 3, dtype="float32")), E.ones(3, dtype="float64")]
            )
            self.pd = nn.ParameterDict({"a": nn.Parameter(E.ones(2, dtype="float32"))})

    holder = Holder()
    assert [name for name, _ in holder.named_parameters()] == ["ps.0", "ps.1", "pd.a"]
    assert isinstance(holder.ps[1], nn.Parameter) and len(holder.ps) == 2
    assert repr(holder) == (
        "Holder(\n"
        "  (ps): ParameterList(\n"
        "      (0): Parameter containing: [torch.float32 of size 2x3]\n"
        "      (1): Parameter containing: [torch.float64 of size 3]\n"
        "  )\n"
        "  (pd): ParameterDict(  (a): Parameter containing: [torch.FloatTensor of size 2])\n"
        ")"
    )
    holder.pd["b"] = E.ones(1, 1, dtype="float32")
    assert list(holder.pd.keys()) == ["a", "b"] and "b" in holder.pd


def test_parameter_containers_print_as_torchs():
    torch = pytest.importorskip("torch")
    ours = nn.ParameterList([nn.Parameter(E.ones(2, 3, dtype="float32")), E.ones(3)])
    theirs = torch.nn.ParameterList(
        [torch.nn.Parameter(torch.ones(2, 3)), torch.ones(3, dtype=torch.float64)]
    )
    assert repr(ours) == repr(theirs)
    ours_dict = nn.ParameterDict({"a": E.ones(2, dtype="float32"), "b": E.ones(1, 1)})
    theirs_dict = torch.nn.ParameterDict(
        {"a": torch.ones(2), "b": torch.ones(1, 1, dtype=torch.float64)}
    )
    assert repr(ours_dict) == repr(theirs_dict)
    assert repr(nn.ParameterList()) == repr(torch.nn.ParameterList())


def _lazy_net(torch, torch_nn, rand):
    """d2l's built-in initialization page: lazy layers, then init functions by apply."""
    torch.manual_seed(0)
    net = torch_nn.Sequential(torch_nn.LazyLinear(8), torch_nn.ReLU(), torch_nn.LazyLinear(1))
    before = repr(net)
    x = rand(2, 4)
    out = net(x)

    def init_normal(module):
        if type(module) == torch_nn.Linear:  # noqa: E721 - the page's test, as written
            torch_nn.init.normal_(module.weight, mean=0, std=0.01)
            torch_nn.init.zeros_(module.bias)

    first = [p.detach().numpy().copy() for p in net.parameters()]
    net.apply(init_normal)
    return (
        before,
        repr(net),
        out.detach().numpy(),
        first,
        [p.detach().numpy() for p in net.parameters()],
    )


def test_lazy_linear_draws_at_its_first_call_as_torch():
    torch = pytest.importorskip("torch")
    theirs = _lazy_net(torch, torch.nn, torch.rand)
    engine = type("Engine", (), {"manual_seed": staticmethod(E.manual_seed)})
    with default_dtype(np.float32):
        ours = _lazy_net(engine, nn, lambda *shape: E.rand(*shape, dtype=np.float32))
    assert ours[0] == theirs[0] and ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    for mine, expected in zip(ours[3] + ours[4], theirs[3] + theirs[4]):
        assert np.array_equal(mine, expected)


def test_lazy_linear_becomes_a_linear():
    layer = nn.LazyLinear(3)
    assert repr(layer) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert repr(layer.weight) == "<UninitializedParameter>"
    with pytest.raises(Exception, match="Can't access the shape of an uninitialized parameter"):
        layer.weight.shape  # noqa: B018
    layer(E.ones(2, 5))
    assert type(layer) is nn.Linear and type(layer.weight) is nn.Parameter
    assert layer.weight.shape == (3, 5) and layer.in_features == 5
