"""torch_mimic.compile's GEMM pass (_lower_gemm): epilogues fused into mm/addmm/bmm and operands
read through strides instead of copied, against eager on the same device. Epilogues compute the
same float32 operations on the same float32 GEMM value, and a strided operand holds the same
values, so every result here is compared bit for bit."""
import pytest
import torch
from torch import nn

import model_zoo
import torch_mimic
from kernel_launches import launches
from torch_mimic import _compile_lower


def _kernels(report, graph="forward"):
    graphs = report["captures"][-1]["graphs"]
    return graphs[graph]["kernels"] if graph in graphs else []


def _gemms(report, graph="forward"):
    return [k for k in _kernels(report, graph) if k["kind"] == "gemm"]


def _eager_nodes(report, graph="forward"):
    return report["captures"][-1]["graphs"][graph]["eager_nodes"]


@pytest.fixture
def without_gemm_pass(monkeypatch):
    """Runs the lowering without this pass (every other pass as it is)."""
    def disable():
        kept = tuple(p for p in _compile_lower.passes() if p[1] != "gemm")
        monkeypatch.setattr(_compile_lower, "_passes", kept)
    return disable


def _train_step(model, x, target):
    out = model(x)
    loss = nn.functional.mse_loss(out, target)
    loss.backward()
    return out.detach().cpu(), [p.grad.detach().cpu() for p in model.parameters()]


def _mlp():
    return nn.Sequential(nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, 64), nn.GELU(),
                         nn.Linear(64, 16))


def _step_launches(model, x, target):
    _train_step(model, x, target)  # compiles, allocates the gradients
    for p in model.parameters():
        p.grad = None
    before = launches()
    _train_step(model, x, target)
    return launches() - before


def test_mlp_training_step_is_bit_identical(device):
    torch.manual_seed(0)
    eager = _mlp().to(device)
    compiled_model = _mlp().to(device)
    compiled_model.load_state_dict(eager.state_dict())
    x, target = torch.randn(24, 48).to(device), torch.randn(24, 16).to(device)
    out, grads = _train_step(eager, x, target)
    compiled = torch_mimic.compile(compiled_model)
    out_c, grads_c = _train_step(compiled, x, target)
    assert torch.equal(out_c, out)
    for g, g_c in zip(grads, grads_c):
        assert torch.equal(g_c, g)
    report = torch_mimic.compile_report()[-1]
    forward = _gemms(report)
    assert [k["program"] for k in forward] == ["x0 relu"]  # the GELU's input has 2 readers
    assert forward[0]["nodes"] == ["aten.addmm.default", "aten.relu.default"]
    backward = _gemms(report, "backward")
    # The activations' backwards follow the input gradients' mm.
    assert {k["nodes"][0] for k in backward} == {"aten.mm.default"}
    assert len(backward) == 2


def test_each_epilogue_saves_one_launch(device, without_gemm_pass):
    torch.manual_seed(0)
    model = _mlp().to(device)
    x, target = torch.randn(24, 48).to(device), torch.randn(24, 16).to(device)
    fused = _step_launches(torch_mimic.compile(model), x, target)
    report = torch_mimic.compile_report()[-1]
    epilogues = len(_gemms(report)) + len(_gemms(report, "backward"))
    assert epilogues == 3
    without_gemm_pass()
    unfused = _step_launches(torch_mimic.compile(model), x, target)
    assert fused == unfused - epilogues


def test_transformer_layer_training_is_bit_identical(device):
    model, x, target = model_zoo.make("transformer")
    compiled_model, _, _ = model_zoo.make("transformer")
    model, compiled_model = model.to(device), compiled_model.to(device)
    x, target = x.to(device), target.to(device)
    out, grads = _train_step(model, x, target)
    out_c, grads_c = _train_step(torch_mimic.compile(compiled_model), x, target)
    assert torch.equal(out_c, out)
    for g, g_c in zip(grads, grads_c):
        assert torch.equal(g_c, g)
    report = torch_mimic.compile_report()[-1]
    programs = {tuple(k["nodes"][:2]): k["program"] for k in _gemms(report)}
    # The in-projection's bias (mm + add after a reshape), linear1's ReLU, linear2's residual.
    assert programs[("aten.mm.default", "aten.add.Tensor")] == "x0 x1 add"
    assert programs[("aten.addmm.default", "aten.relu.default")] == "x0 relu"
    assert programs[("aten.addmm.default", "aten.add.Tensor")] == "x1 x0 add"
    # Training saves the heads' copies for the backward: they stay copies.
    assert not any(any(k["strided_operands"]) for k in _gemms(report))
    # The heads merged back (clone of the attention output's transpose) are written by the bmm
    # in that layout: once forward, twice backward (the value and the probabilities' grads).
    assert sum(k["writes_permuted"] for k in _gemms(report)) == 1
    assert sum(k["writes_permuted"] for k in _gemms(report, "backward")) == 2
    assert _eager_nodes(report)["aten.clone.default"] == 4
    assert _eager_nodes(report, "backward")["aten.clone.default"] == 1


def test_inference_reads_attention_heads_through_strides(device):
    model, x, _ = model_zoo.make("transformer")
    model, x = model.to(device).eval(), x.to(device)
    compiled = torch_mimic.compile(model)
    with torch.no_grad():
        eager = model(x)
        out = compiled(x)
    assert torch.equal(out.cpu(), eager.cpu())
    report = torch_mimic.compile_report()[-1]
    strided = [k for k in _gemms(report) if any(k["strided_operands"])]
    assert [k["nodes"][0] for k in strided] == ["aten.bmm.default"] * 2
    # Three of the five copies are gone: k's and v's heads are read through strides, the merged
    # heads written in that layout by their bmm. q's feeds a pointwise kernel, and the input's
    # (sequence-first) copy gives mm rows that no single stride walks.
    assert _eager_nodes(report)["aten.clone.default"] == 2


_S, _B, _H, _D = 24, 3, 4, 8


def _attention_scores(qkv, residual):
    """[S, B, 3*H*D] -> scores [B, H, S, S] + residual: each head a strided slice of qkv, which
    eager copies (reshape of a slice) before its bmm."""
    q, k, _ = qkv.split(_H * _D, dim=-1)
    q = q.reshape(_S, _B * _H, _D).transpose(0, 1)
    k = k.reshape(_S, _B * _H, _D).transpose(0, 1)
    scores = torch.bmm(q, k.transpose(1, 2))
    return scores.view(_B, _H, _S, _S) * 0.125 + residual


def test_two_strided_batch_dims_and_an_epilogue(device):
    torch.manual_seed(3)
    qkv = torch.randn(_S, _B, 3 * _H * _D).to(device)
    residual = torch.randn(_B, _H, _S, _S).to(device)
    compiled = torch_mimic.compile(_attention_scores)
    with torch.no_grad():
        out = compiled(qkv, residual)
        eager = _attention_scores(qkv, residual)
    assert torch.equal(out.cpu(), eager.cpu())
    report = torch_mimic.compile_report()[-1]
    [kernel] = _gemms(report)
    assert kernel["strided_operands"] == [True, True]
    assert kernel["program"] == "x0 s0 mul x1 add"
    assert "aten.clone.default" not in _eager_nodes(report)
    # A copy made for another reader too stays: the GEMM reads the copy.
    def shared(qkv, residual):
        q, k, _ = qkv.split(_H * _D, dim=-1)
        q = q.reshape(_S, _B * _H, _D)
        scores = torch.bmm(q.transpose(0, 1), k.reshape(_S, _B * _H, _D).permute(1, 2, 0))
        return scores, q * 2
    compiled = torch_mimic.compile(shared)
    with torch.no_grad():
        out, doubled = compiled(qkv, residual)
        eager, eager_doubled = shared(qkv, residual)
    assert torch.equal(out.cpu(), eager.cpu())
    assert torch.equal(doubled.cpu(), eager_doubled.cpu())
    [kernel] = _gemms(torch_mimic.compile_report()[-1])
    assert kernel["strided_operands"] == [False, True]


@pytest.mark.parametrize("case", ["two_readers", "broadcast_value", "transposed_value",
                                  "dot_product", "float64"])
def test_refusals_run_the_gemm_eagerly(device, case):
    torch.manual_seed(5)
    dtype = torch.float64 if case == "float64" else torch.float32
    a = torch.randn(16, 12, dtype=dtype).to(device)
    b = torch.randn(12, 1 if case in ("broadcast_value", "dot_product") else 20,
                    dtype=dtype).to(device)
    y = torch.randn(16, 20, dtype=dtype).to(device)

    def f(a, b, y):
        if case == "two_readers":  # the GEMM value is also an output
            p = a @ b
            return p, torch.relu(p)
        if case == "broadcast_value":  # the pointwise kernel broadcasts the GEMM value
            return (a @ b) + y
        if case == "transposed_value":
            return (a @ b).t() * 2 + y.t()
        if case == "dot_product":
            return torch.relu(a[:1] @ b)
        return torch.relu(a @ b)

    with torch.no_grad():
        eager = f(a, b, y)
        out = torch_mimic.compile(f)(a, b, y)
    for e, o in zip(eager if isinstance(eager, tuple) else (eager,),
                    out if isinstance(out, tuple) else (out,)):
        assert torch.equal(o.cpu(), e.cpu())
    assert _gemms(torch_mimic.compile_report()[-1]) == []


def test_epilogue_reads_bool_masks_and_scalars(device):
    torch.manual_seed(6)
    a, b = torch.randn(20, 30).to(device), torch.randn(30, 40).to(device)
    mask = (torch.randn(20, 40) > 0).to(device)

    def f(a, b, mask):
        return torch.where(mask, a @ b, 0.0).masked_fill(~mask, 2.0) * 0.75

    with torch.no_grad():
        eager = f(a, b, mask)
        out = torch_mimic.compile(f)(a, b, mask)
    assert torch.equal(out.cpu(), eager.cpu())
    [kernel] = _gemms(torch_mimic.compile_report()[-1])
    assert kernel["nodes"][:3] == ["aten.mm.default", "aten.where.self",
                                   "aten.masked_fill.Scalar"]


def _merge_heads(probabilities, values):
    """[B, H, S, S] @ [B, H, S, D] -> [B, S, H*D]: the heads' outputs merged back, which eager
    copies (contiguous of the transpose) after its bmm."""
    out = probabilities @ values
    return out.transpose(1, 2).contiguous().view(_B, _S, _H * _D) * 2


def test_merged_heads_are_written_by_the_bmm(device):
    torch.manual_seed(7)
    probabilities = torch.rand(_B, _H, _S, _S).to(device)
    values = torch.randn(_B, _H, _S, _D).to(device)
    compiled = torch_mimic.compile(_merge_heads)
    with torch.no_grad():
        out = compiled(probabilities, values)
        eager = _merge_heads(probabilities, values)
    assert torch.equal(out.cpu(), eager.cpu())
    report = torch_mimic.compile_report()[-1]
    [kernel] = _gemms(report)
    # C is [B, H, S, D] with the strides of the [B, S, H, D] copy: two strided batch dims.
    assert kernel["writes_permuted"]
    assert "aten.clone.default" not in _eager_nodes(report)
