"""Matrix products on the gemm primitive: mm, bmm, addmm, baddbmm, mv; dot, vdot and 1 x K x 1
products (inner) on the fused reduction (matmul and linear reach these through PyTorch's own
decompositions)."""
import torch

from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, prepare_out

_ops = torch.ops.mimic


def _check_float(*tensors):
    dtype = tensors[0].dtype
    for t in tensors:
        if t.dtype != dtype:
            raise RuntimeError(f"expected scalar type {dtype} but found {t.dtype}")
    if dtype not in FLOAT_DTYPES:
        raise Unsupported()  # integer and float64 products run on the CPU


def _batched(a, b, c, alpha, beta):
    """c[i] = alpha * a[i] @ b[i] + beta * c[i] for 3-D tensors."""
    if c.numel() > 0:
        _ops.gemm(c, a, b, float(alpha), float(beta))
    return c


def _check_mm(a, b, name):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"{name}: expected 2-D tensors, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} "
                           f"and {b.shape[0]}x{b.shape[1]})")


def _mm_into(c, a, b, alpha=1, beta=0):
    if a.shape[0] == 1 and b.shape[1] == 1 and alpha == 1 and beta == 0:
        return _dot_into(c, a, b.t())  # 1 x K x 1 (inner, tensordot): a dot product, streamed
    _batched(a.unsqueeze(0), b.unsqueeze(0), c.unsqueeze(0), alpha, beta)
    return c


@impl("mm")
def mm(self, mat2):
    _check_mm(self, mat2, "mm")
    _check_float(self, mat2)
    out = empty((self.shape[0], mat2.shape[1]), self.dtype, self.device)
    _mm_into(out, self, mat2)
    return out


@impl("mm.out")
def mm_out(self, mat2, *, out):
    _check_mm(self, mat2, "mm")
    _check_float(self, mat2, out)
    prepare_out(out, (self.shape[0], mat2.shape[1]), self.dtype)
    _mm_into(out, self, mat2)
    return out


def _check_bmm(a, b):
    if a.dim() != 3 or b.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor; got {a.dim()}-D and {b.dim()}-D")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


@impl("bmm")
def bmm(self, mat2):
    _check_bmm(self, mat2)
    _check_float(self, mat2)
    out = empty((self.shape[0], self.shape[1], mat2.shape[2]), self.dtype, self.device)
    return _batched(self, mat2, out, 1, 0)


@impl("bmm.out")
def bmm_out(self, mat2, *, out):
    _check_bmm(self, mat2)
    _check_float(self, mat2, out)
    prepare_out(out, (self.shape[0], self.shape[1], mat2.shape[2]), self.dtype)
    return _batched(self, mat2, out, 1, 0)


def _with_bias(out, a, b, bias, alpha, beta):
    """out = alpha * a @ b + beta * bias for 3-D a, b and out: the bias, broadcast to out's shape
    (stride 0, no copy), is read by the GEMM's epilogue as out is written: one launch."""
    if out.numel() > 0:
        _ops.gemm(out, a, b, float(alpha), float(beta), bias.expand(out.shape) if beta != 0 else None)
    return out


@impl("addmm")
def addmm(self, mat1, mat2, *, beta=1, alpha=1):
    _check_mm(mat1, mat2, "addmm")
    _check_float(self, mat1, mat2)
    out = empty((mat1.shape[0], mat2.shape[1]), mat1.dtype, mat1.device)
    _with_bias(out.unsqueeze(0), mat1.unsqueeze(0), mat2.unsqueeze(0), self.expand(out.shape).unsqueeze(0), alpha,
               beta)
    return out


@impl("addmm.out")
def addmm_out(self, mat1, mat2, *, beta=1, alpha=1, out):
    _check_mm(mat1, mat2, "addmm")
    _check_float(self, mat1, mat2, out)
    prepare_out(out, (mat1.shape[0], mat2.shape[1]), mat1.dtype)
    if out.is_set_to(self):
        return _mm_into(out, mat1, mat2, alpha, beta)  # out's old contents are the bias
    _with_bias(out.unsqueeze(0), mat1.unsqueeze(0), mat2.unsqueeze(0), self.expand(out.shape).unsqueeze(0), alpha,
               beta)
    return out


@impl("addmm_")
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    _check_mm(mat1, mat2, "addmm")
    _check_float(self, mat1, mat2)
    return _mm_into(self, mat1, mat2, alpha, beta)


@impl("baddbmm")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm(batch1, batch2)
    _check_float(self, batch1, batch2)
    out = empty((batch1.shape[0], batch1.shape[1], batch2.shape[2]), batch1.dtype, batch1.device)
    return _with_bias(out, batch1, batch2, self, alpha, beta)


@impl("baddbmm_")
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _check_bmm(batch1, batch2)
    _check_float(self, batch1, batch2)
    return _batched(batch1, batch2, self, alpha, beta)


@impl("mv")
def mv(self, vec):
    if self.dim() != 2 or vec.dim() != 1 or self.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0]}), mat ({self.shape[0]}x{self.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    _check_float(self, vec)
    out = empty((self.shape[0],), self.dtype, self.device)
    _mm_into(out.unsqueeze(1), self, vec.unsqueeze(1))
    return out


_DOT_DTYPES = frozenset({torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8})


def _dot_into(out, a, b):
    """out (keepdim-shaped, one element) = the sum of a * b over a's last dim, fused in one
    streaming reduction (products in float32 or int64, as the sum accumulates)."""
    _ops.reduce(out, a, [a.dim() - 1], "sum", "mul", b)
    return out


@impl("dot")
def dot(self, tensor):
    if self.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError("1D tensors expected, but got "
                           f"{self.dim()}D and {tensor.dim()}D tensors")
    if self.shape[0] != tensor.shape[0] or self.dtype != tensor.dtype or self.dtype not in _DOT_DTYPES:
        raise Unsupported()  # the CPU's errors, and its kernels for float64
    out = empty((), self.dtype, self.device)
    return _dot_into(out.view(1), self, tensor).view(())


@impl("vdot")
def vdot(self, other):
    return dot(self, other)  # for real dtypes; complex ones are not native (Unsupported)
