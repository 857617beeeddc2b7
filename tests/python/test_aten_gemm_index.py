"""The GEMM family and the indexing ops registered from C++ (torch_backend/aten/gemm_kernels.cpp,
index_kernels.cpp) against PyTorch's CPU device: every overload, dtypes, broadcasts, non-contiguous
inputs, out= resizing, in-place variants, error messages and the counted CPU fallback."""
import re
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_mimic

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
# Unit roundoff of each result dtype: products accumulate in float32 on both sides.
UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}

GEMM_OVERLOADS = ["mm", "mm.out", "bmm", "bmm.out", "addmm", "addmm.out", "addmm_", "baddbmm",
                  "baddbmm_", "mv", "dot", "vdot"]
INDEX_OVERLOADS = ["index_select", "index_select.out", "gather", "scatter.src", "scatter.value",
                   "scatter_.src", "scatter_.value", "scatter_add", "scatter_add_", "index_add",
                   "index_add_", "index.Tensor", "_index_put_impl_", "index_put", "index_put_",
                   "embedding_dense_backward", "cat", "cat.out"]


def _randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _assert_product_close(actual, a, b, c=None, alpha=1.0, beta=0.0):
    """actual = alpha a b + beta c within the bound of float32 accumulation over K products
    (gamma_K |alpha| |a| |b| + gamma_2 |beta| |c|) and one rounding to the result dtype, against
    a float64 reference."""
    actual = actual.cpu()
    a64, b64 = a.double(), b.double()
    expected = alpha * torch.matmul(a64, b64)
    magnitude = abs(alpha) * torch.matmul(a64.abs(), b64.abs())
    if c is not None and beta != 0:
        expected = expected + beta * c.double()
        magnitude = magnitude + abs(beta) * c.double().abs()
    k = a.shape[-1] + 2
    gamma = k * 2.0**-24 / (1 - k * 2.0**-24)
    bound = gamma * magnitude + UNIT[actual.dtype] * expected.abs() + 1e-30
    assert actual.shape == expected.shape and actual.dtype == a.dtype
    excess = (actual.double() - expected).abs() - bound
    assert excess.max() <= 0, f"beyond the error bound by {excess.max().item()}"


def test_every_moved_overload_is_registered_from_cpp():
    for overload in GEMM_OVERLOADS + INDEX_OVERLOADS:
        dump = torch._C._dispatch_dump(f"aten::{overload}")
        kernel = next(line for line in dump.splitlines() if line.startswith("PrivateUse1"))
        assert re.search(r"(gemm|index)_kernels\.cpp", kernel), (overload, kernel)


def test_importing_overrides_no_kernel():
    result = subprocess.run([sys.executable, "-W", "always", "-c", "import torch_mimic"],
                            capture_output=True, text=True, check=True)
    assert "Overriding a previously registered kernel" not in result.stderr, result.stderr


def test_the_table_lists_each_registered_op():
    table = torch_mimic.op_table()
    for name in ("mm", "bmm", "addmm", "baddbmm", "mv", "dot", "vdot"):
        assert table[(name, "")].kind == "gemm"
    for name in ("index_select", "gather", "scatter", "scatter_add", "index_add", "index",
                 "index_put", "embedding_dense_backward", "cat"):
        assert table[(name, "")].kind == "index"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mm_and_mv(dtype, device, fallbacks):
    a, b = _randn(5, 7, dtype=dtype), _randn(7, 3, dtype=dtype, seed=1)
    _assert_product_close(torch.mm(a.to(device), b.to(device)), a, b)
    # Transposed (non-contiguous) operands.
    at, bt = _randn(7, 5, dtype=dtype, seed=2), _randn(3, 7, dtype=dtype, seed=3)
    _assert_product_close(torch.mm(at.to(device).t(), bt.to(device).t()), at.t(), bt.t())
    # 1 x K x 1 runs as a dot product.
    _assert_product_close(torch.mm(a[:1].to(device), b[:, :1].to(device)), a[:1], b[:, :1])
    v = _randn(7, dtype=dtype, seed=4)
    result = torch.mv(a.to(device), v.to(device))
    _assert_product_close(result.unsqueeze(1), a, v.unsqueeze(1))
    _assert_product_close(torch.mv(a[:1].to(device), v.to(device)).unsqueeze(1), a[:1],
                          v.unsqueeze(1))
    assert not fallbacks()


def test_empty_products(device, fallbacks):
    a, b = torch.randn(3, 0), torch.randn(0, 4)
    assert torch.equal(torch.mm(a.to(device), b.to(device)).cpu(), torch.zeros(3, 4))
    assert torch.mm(torch.randn(0, 2).to(device), torch.randn(2, 4).to(device)).shape == (0, 4)
    assert torch.bmm(torch.randn(0, 2, 3).to(device), torch.randn(0, 3, 4).to(device)).shape == \
        (0, 2, 4)
    assert not fallbacks()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_bmm_with_broadcast_batch(dtype, device, fallbacks):
    a, b = _randn(3, 4, 5, dtype=dtype), _randn(1, 5, 6, dtype=dtype, seed=1)
    expanded = b.expand(3, 5, 6)  # batch stride 0
    _assert_product_close(torch.bmm(a.to(device), b.to(device).expand(3, 5, 6)), a, expanded)
    _assert_product_close(torch.bmm(a.to(device).transpose(1, 2).contiguous().transpose(1, 2),
                                    expanded.to(device)), a, expanded)
    assert not fallbacks()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("bias_shape", [(6,), (1, 6), (4, 1), (4, 6)], ids=str)
def test_addmm_bias_broadcasts(dtype, bias_shape, device, fallbacks):
    bias, a, b = (_randn(*bias_shape, dtype=dtype), _randn(4, 5, dtype=dtype, seed=1),
                  _randn(5, 6, dtype=dtype, seed=2))
    result = torch.addmm(bias.to(device), a.to(device), b.to(device), beta=0.5, alpha=-2)
    _assert_product_close(result, a, b, bias.expand(4, 6), alpha=-2, beta=0.5)
    _assert_product_close(F.linear(a.to(device), b.t().to(device), bias.to(device)), a, b,
                          bias.expand(4, 6), beta=1)
    assert not fallbacks()


def test_addmm_beta_zero_ignores_nan_bias(device, fallbacks):
    bias = torch.full((2, 3), float("nan"))
    a, b = _randn(2, 4), _randn(4, 3, seed=1)
    result = torch.addmm(bias.to(device), a.to(device), b.to(device), beta=0)
    _assert_product_close(result, a, b)
    assert not fallbacks()


def test_addmm_out_and_in_place(device, fallbacks):
    c, a, b = _randn(3, 4), _randn(3, 5, seed=1), _randn(5, 4, seed=2)
    out = torch.empty(0, device=device)
    torch.addmm(c.to(device), a.to(device), b.to(device), alpha=3, out=out)
    _assert_product_close(out, a, b, c, alpha=3, beta=1)
    # out is self: its old contents are the bias.
    same = c.to(device)
    torch.addmm(same, a.to(device), b.to(device), beta=2, out=same)
    _assert_product_close(same, a, b, c, beta=2)
    inplace = c.to(device)
    assert inplace.addmm_(a.to(device), b.to(device), beta=-1, alpha=0.5) is inplace
    _assert_product_close(inplace, a, b, c, alpha=0.5, beta=-1)
    assert not fallbacks()


def test_out_variants_resize(device, fallbacks):
    a, b = _randn(3, 5), _randn(5, 4, seed=1)
    out = torch.empty(0, device=device)
    torch.mm(a.to(device), b.to(device), out=out)
    _assert_product_close(out, a, b)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrong = torch.empty(7, device=device)
        torch.mm(a.to(device), b.to(device), out=wrong)
    assert any("resized" in str(w.message) for w in caught)
    _assert_product_close(wrong, a, b)
    batched = torch.empty(0, device=device)
    torch.bmm(a.unsqueeze(0).to(device), b.unsqueeze(0).to(device), out=batched)
    _assert_product_close(batched, a.unsqueeze(0), b.unsqueeze(0))
    assert not fallbacks()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_baddbmm_and_in_place(dtype, device, fallbacks):
    c, a, b = (_randn(1, 3, 4, dtype=dtype), _randn(2, 3, 5, dtype=dtype, seed=1),
               _randn(2, 5, 4, dtype=dtype, seed=2))
    result = torch.baddbmm(c.to(device), a.to(device), b.to(device), beta=0.25, alpha=2)
    _assert_product_close(result, a, b, c.expand(2, 3, 4), alpha=2, beta=0.25)
    inplace = c.expand(2, 3, 4).contiguous().to(device)
    inplace.baddbmm_(a.to(device), b.to(device), beta=-1)
    _assert_product_close(inplace, a, b, c.expand(2, 3, 4), beta=-1)
    assert not fallbacks()


@pytest.mark.parametrize("dtype", FLOATS + (torch.int32, torch.int64, torch.uint8), ids=str)
def test_dot_and_vdot(dtype, device, fallbacks):
    if dtype.is_floating_point:
        x, y = _randn(33, dtype=dtype), _randn(33, dtype=dtype, seed=1)
        _assert_product_close(torch.dot(x.to(device), y.to(device)).reshape(1, 1), x[None],
                              y[:, None])
        _assert_product_close(torch.vdot(x.to(device), y.to(device)).reshape(1, 1), x[None],
                              y[:, None])
    else:
        x = torch.arange(-16, 17).to(dtype)
        y = torch.arange(33).remainder(5).to(dtype)
        # Integer sums are exact in int64; a narrower result wraps as the CPU's does.
        assert torch.equal(torch.dot(x.to(device), y.to(device)).cpu(), torch.dot(x, y))
        assert torch.equal(torch.vdot(x.to(device), y.to(device)).cpu(), torch.vdot(x, y))
    assert not fallbacks()


@pytest.mark.parametrize("op,args", [
    ("mm", lambda: (torch.randn(2, 3, dtype=torch.float64),
                    torch.randn(3, 4, dtype=torch.float64))),
    ("mm", lambda: (torch.arange(6).view(2, 3), torch.arange(12).view(3, 4))),
    ("bmm", lambda: (torch.randn(2, 2, 3, dtype=torch.float64),
                     torch.randn(2, 3, 4, dtype=torch.float64))),
    ("addmm", lambda: (torch.randn(4, dtype=torch.float64), torch.randn(2, 3, dtype=torch.float64),
                       torch.randn(3, 4, dtype=torch.float64))),
    ("baddbmm", lambda: (torch.randn(2, 2, 4, dtype=torch.float64),
                         torch.randn(2, 2, 3, dtype=torch.float64),
                         torch.randn(2, 3, 4, dtype=torch.float64))),
    ("mv", lambda: (torch.randn(2, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64))),
    ("dot", lambda: (torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64))),
], ids=["mm-f64", "mm-int64", "bmm-f64", "addmm-f64", "baddbmm-f64", "mv-f64", "dot-f64"])
def test_products_the_device_cannot_compute_fall_back(op, args, device, fallbacks):
    inputs = args()
    expected = getattr(torch, op)(*inputs)
    actual = getattr(torch, op)(*[t.to(device) for t in inputs])
    assert actual.device == device
    torch.testing.assert_close(actual.cpu(), expected)
    assert fallbacks() == {f"aten::{op}": 1}


def _message(fn):
    with pytest.raises(Exception) as error:
        fn()
    return error.type, str(error.value).splitlines()[0]


@pytest.mark.parametrize("fn", [
    lambda d: torch.mm(torch.randn(2, 3, device=d), torch.randn(2, 3, device=d)),
    lambda d: torch.mm(torch.randn(2, 3, device=d), torch.randn(3, 2, device=d).double()),
    lambda d: torch.bmm(torch.randn(1, 2, 3, device=d), torch.randn(1, 2, 3, device=d)),
    lambda d: torch.dot(torch.randn(2, 3, device=d), torch.randn(3, device=d)),
    lambda d: torch.addmm(torch.randn(2, 2, device=d), torch.randn(2, 3, device=d),
                          torch.randn(2, 3, device=d)),
    lambda d: torch.addmm(torch.randn(5, device=d), torch.randn(2, 3, device=d),
                          torch.randn(3, 4, device=d)),
    lambda d: torch.index_select(torch.randn(3, device=d), 0,
                                 torch.zeros(1, 1, dtype=torch.long, device=d)),
    lambda d: torch.index_select(torch.randn(3, device=d), 2, torch.zeros(1, dtype=torch.long,
                                                                          device=d)),
    lambda d: torch.scatter(torch.randn(3, device=d), 0, torch.zeros(1, dtype=torch.long, device=d),
                            torch.randn(3, device=d).half()),
    lambda d: torch.cat([torch.randn(2, 3, device=d), torch.empty(0, device=d),
                         torch.randn(2, 2, device=d)]),
    lambda d: torch.cat([torch.randn(2, 3, device=d), torch.randn(2, device=d)]),
    lambda d: torch.cat([torch.randn(2, 3, device=d), torch.tensor(1.0, device=d)]),
], ids=["mm-shapes", "mm-dtypes", "bmm-shapes", "dot-rank", "addmm-shapes", "addmm-bias",
        "index_select-vector", "index_select-dim", "scatter-dtype", "cat-sizes", "cat-ranks",
        "cat-0d"])
def test_errors_are_pytorchs(fn, device, fallbacks):
    """Where the CPU's message and the device's agree in kind and text."""
    assert _message(lambda: fn(device)) == _message(lambda: fn("cpu"))
    assert not fallbacks()


@pytest.mark.parametrize("fn,kind,text", [
    (lambda d: torch.mm(torch.randn(3, device=d), torch.randn(3, 2, device=d)), RuntimeError,
     "mm: expected 2-D tensors, got 1-D and 2-D"),
    (lambda d: torch.bmm(torch.randn(2, 3, device=d), torch.randn(1, 3, 2, device=d)), RuntimeError,
     "batch1 must be a 3D tensor; got 2-D and 3-D"),
    (lambda d: torch.mv(torch.randn(2, 3, device=d), torch.randn(2, device=d)), RuntimeError,
     "size mismatch, got input (2), mat (2x3), vec (2)"),
    (lambda d: torch.index_select(torch.randn(3, device=d), 0, torch.zeros(1, device=d)),
     RuntimeError, "index_select(): Expected dtype int32/int64 for index but got Float"),
    (lambda d: torch.gather(torch.randn(3, device=d), 0, torch.zeros(1, device=d)), RuntimeError,
     "gather(): Expected dtype int32/int64 for index but got Float"),
    (lambda d: torch.randn(3, device=d)[torch.zeros(1, dtype=torch.long, device=d),
                                        torch.zeros(1, dtype=torch.long, device=d)],
     IndexError, "too many indices for tensor of dimension 1"),
    (lambda d: torch.mm(torch.randn(2, 2, device=d), torch.randn(2, 2)), RuntimeError,
     "mimic: gemm needs every tensor on privateuseone:0, got one on cpu"),
])
def test_errors_of_the_device(fn, kind, text, device, fallbacks):
    assert _message(lambda: fn(device)) == (kind, text)
    assert not fallbacks()


INDEX_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                torch.uint8)


def _values(dtype, *shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=generator).to(dtype)
    return torch.randint(0, 100, shape, generator=generator).to(dtype)


def _same(actual, expected):
    actual = actual.cpu()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert torch.equal(actual, expected), (actual, expected)


@pytest.mark.parametrize("dtype", INDEX_DTYPES + (torch.bool,), ids=str)
def test_index_select(dtype, device, fallbacks):
    x = _values(dtype, 6, 5)
    for dim, index in [(0, torch.tensor([4, 0, 4, 1])), (1, torch.tensor([2, 3])),
                       (-1, torch.tensor(3)), (0, torch.tensor([], dtype=torch.long)),
                       (1, torch.tensor([1, 0], dtype=torch.int32))]:
        _same(torch.index_select(x.to(device), dim, index.to(device)),
              torch.index_select(x, dim, index))
        _same(torch.index_select(x.to(device).t(), dim, index.to(device)),  # non-contiguous
              torch.index_select(x.t(), dim, index))
    _same(torch.index_select(x.to(device), 0, torch.tensor([2])),  # a CPU index
          torch.index_select(x, 0, torch.tensor([2])))
    scalar = x[0, 0]
    _same(torch.index_select(scalar.to(device), 0, torch.tensor([0]).to(device)),
          torch.index_select(scalar, 0, torch.tensor([0])))
    out = torch.empty(0, dtype=dtype, device=device)
    torch.index_select(x.to(device), 1, torch.tensor([4, 4]).to(device), out=out)
    _same(out, torch.index_select(x, 1, torch.tensor([4, 4])))
    assert not fallbacks()


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=str)
def test_gather_and_scatter(dtype, device, fallbacks):
    x = _values(dtype, 4, 5)
    index = torch.tensor([[0, 1, 2], [3, 0, 1], [2, 2, 0]])
    for dim in (0, 1, -1):
        _same(torch.gather(x.to(device), dim, index.to(device)), torch.gather(x, dim, index))
        _same(torch.gather(x.to(device).t(), dim, index.to(device)),
              torch.gather(x.t(), dim, index))
    # Distinct targets per column for scatter (duplicates' winner is unspecified on the CPU).
    target = torch.tensor([[0, 1, 2], [1, 2, 3], [3, 0, 1]])
    src = _values(dtype, 3, 3, seed=1)
    _same(torch.scatter(x.to(device), 0, target.to(device), src.to(device)),
          torch.scatter(x, 0, target, src))
    _same(torch.scatter(x.to(device), 0, target.to(device), 7), torch.scatter(x, 0, target, 7))
    inplace = x.to(device)
    assert inplace.scatter_(0, target.to(device), src.to(device)) is inplace
    _same(inplace, x.clone().scatter_(0, target, src))
    inplace = x.to(device)
    inplace.scatter_(0, target.to(device), 5)
    _same(inplace, x.clone().scatter_(0, target, 5))
    # scatter_add accumulates duplicates: exact for integers and small integral floats.
    duplicates = torch.tensor([[0, 0, 1], [0, 0, 1]])
    ints = torch.arange(6).view(2, 3).to(dtype)
    _same(torch.scatter_add(x.to(device), 0, duplicates.to(device), ints.to(device)),
          torch.scatter_add(x, 0, duplicates, ints))
    inplace = x.to(device)
    inplace.scatter_add_(1, duplicates.to(device), ints.to(device))
    _same(inplace, x.clone().scatter_add_(1, duplicates, ints))
    assert not fallbacks()


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=str)
def test_index_add(dtype, device, fallbacks):
    x = torch.arange(20).view(4, 5).to(dtype)
    source = torch.arange(10).view(2, 5).to(dtype)
    index = torch.tensor([3, 3])
    alpha = 2
    _same(torch.index_add(x.to(device), 0, index.to(device), source.to(device), alpha=alpha),
          torch.index_add(x, 0, index, source, alpha=alpha))
    columns = torch.arange(8).view(4, 2).to(dtype)
    inplace = x.to(device)
    assert inplace.index_add_(1, torch.tensor([0, 4]).to(device), columns.to(device)) is inplace
    _same(inplace, x.clone().index_add_(1, torch.tensor([0, 4]), columns))
    assert not fallbacks()


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=str)
def test_advanced_indexing(dtype, device, fallbacks):
    x = _values(dtype, 5, 4, 3)
    rows, cols = torch.tensor([[4, -1], [0, 2]]), torch.tensor([1, -4])
    dx = x.to(device)
    _same(dx[rows.to(device)], x[rows])
    _same(dx[rows.to(device), cols.to(device)], x[rows, cols])  # broadcast to [2, 2]
    _same(dx[rows], x[rows])  # CPU indices
    _same(dx.transpose(0, 1)[cols.to(device)], x.transpose(0, 1)[cols])
    assert not fallbacks()


@pytest.mark.parametrize("dtype", INDEX_DTYPES, ids=str)
def test_index_put(dtype, device, fallbacks):
    x = _values(dtype, 5, 3)
    index = torch.tensor([0, -1, 2])
    values = _values(dtype, 3, seed=1)
    _same(torch.index_put(x.to(device), (index.to(device),), values.to(device)),
          torch.index_put(x, (index,), values))
    dx = x.to(device)
    dx.index_put_((index.to(device), torch.tensor([1]).to(device)), values[:1].to(device))
    _same(dx, x.clone().index_put_((index, torch.tensor([1])), values[:1]))
    dx = x.to(device)
    torch.ops.aten._index_put_impl_(dx, [index.to(device)], values.to(device), True)
    _same(dx, torch.ops.aten._index_put_impl_(x.clone(), [index], values, True))
    ones = torch.ones(3, dtype=dtype)
    duplicates = torch.tensor([1, 1, 1])
    dx = x.to(device)
    dx.index_put_((duplicates.to(device),), ones.to(device), accumulate=True)
    _same(dx, x.clone().index_put_((duplicates,), ones, accumulate=True))
    dx = x.to(device)
    dx[index.to(device)] = 1
    expected = x.clone()
    expected[index] = 1
    _same(dx, expected)
    assert not fallbacks()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_backward(dtype, padding_idx, device, fallbacks):
    # Integral gradients add exactly, in any order.
    weight = torch.zeros(6, 4, dtype=dtype, requires_grad=True)
    indices = torch.tensor([[2, 0, 5], [5, 2, 2]])
    grad = torch.arange(24).view(2, 3, 4).to(dtype)
    F.embedding(indices, weight, padding_idx=padding_idx).backward(grad)
    dweight = torch.zeros(6, 4, dtype=dtype, device=device, requires_grad=True)
    F.embedding(indices.to(device), dweight, padding_idx=padding_idx).backward(grad.to(device))
    _same(dweight.grad, weight.grad)
    assert not fallbacks()


@pytest.mark.parametrize("dtype", INDEX_DTYPES + (torch.bool, torch.float64), ids=str)
def test_cat(dtype, device, fallbacks):
    a, b = _values(dtype, 2, 3), _values(dtype, 4, 3, seed=1)
    _same(torch.cat([a.to(device), b.to(device)]), torch.cat([a, b]))
    _same(torch.cat([a.to(device).t(), b.to(device).t()], -1), torch.cat([a.t(), b.t()], -1))
    # Legacy empty 1-D inputs are skipped; a CPU input is copied in.
    _same(torch.cat([torch.empty(0, dtype=dtype, device=device), a.to(device), b]),
          torch.cat([torch.empty(0, dtype=dtype), a, b]))
    out = torch.empty(0, dtype=dtype, device=device)
    torch.cat([a.to(device), b.to(device)], out=out)
    _same(out, torch.cat([a, b]))
    assert not fallbacks()


def test_cat_promotes(device, fallbacks):
    a, b = torch.randn(2, 3).half(), torch.arange(3).view(1, 3)
    _same(torch.cat([a.to(device), b.to(device)]), torch.cat([a, b]))
    empty = torch.cat([torch.empty(0, device=device), torch.empty(0, dtype=torch.long,
                                                                  device=device)])
    assert empty.shape == (0,) and empty.dtype == torch.float32
    assert not fallbacks()


@pytest.mark.parametrize("name,fn", [
    ("index_select", lambda x, i: torch.index_select(x, 0, i)),
    ("gather", lambda x, i: torch.gather(x, 0, i.view(-1, 1).expand(-1, 3))),
    ("scatter.src", lambda x, i: torch.scatter(x, 0, i.view(-1, 1), x[:2, :1])),
    ("scatter_add", lambda x, i: torch.scatter_add(x, 0, i.view(-1, 1), x[:2, :1])),
    ("index_add", lambda x, i: torch.index_add(x, 0, i, x[:2])),
    ("index.Tensor", lambda x, i: x[i]),
    ("index_put", lambda x, i: torch.index_put(x, (i,), x[:2])),
    ("index_put_", lambda x, i: x.clone().index_put_((i,), x[:2])),
])
def test_float64_index_ops_run_on_the_device(name, fn, device, fallbacks):
    # The index kernels move f64 elements and add them in f64 (ordered, not atomic).
    x = torch.randn(4, 3, dtype=torch.float64)
    index = torch.tensor([3, 1])
    expected = fn(x, index)
    _same(fn(x.to(device), index.to(device)), expected)
    assert f"aten::{name}" not in fallbacks()


def test_masks_and_gaps_fall_back(device, fallbacks):
    x = torch.randn(4, 3)
    mask = x[:, 0] > 0
    _same(x.to(device)[mask.to(device)], x[mask])
    _same(x.to(device)[:, torch.tensor([2, 0]).to(device)], x[:, torch.tensor([2, 0])])
    dx = x.to(device)
    dx[mask.to(device)] = 0
    expected = x.clone()
    expected[mask] = 0
    _same(dx, expected)
    assert set(fallbacks()) <= {"aten::index.Tensor", "aten::index_put_"}
    assert fallbacks().get("aten::index.Tensor") == 2


def test_embedding_backward_scaled_by_frequency_falls_back(device, fallbacks):
    indices = torch.tensor([1, 1, 3])
    grad = torch.ones(3, 2)
    expected = torch.ops.aten.embedding_dense_backward(grad, indices, 5, -1, True)
    _same(torch.ops.aten.embedding_dense_backward(grad.to(device), indices.to(device), 5, -1, True),
          expected)
    assert fallbacks() == {"aten::embedding_dense_backward": 1}
