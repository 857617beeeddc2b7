"""addbmm (beta self + alpha sum_b batch1[b] @ batch2[b]) on the device for float32 and
complex64: the sum over the batch is one GEMM whose inner dimension runs over batch and k
([n, b k] @ [b k, p], batch1's batches side by side), then the scaled sum with self in one
pointwise add. PyTorch 1.13 registers no PrivateUse1 kernel for addbmm; other dtypes and the
calls the CPU rejects (shapes, mixed dtypes) take the counted fallback, which raises its errors."""
import torch

from ._lib import Unsupported, impl

_SERVED = (torch.float32, torch.complex64)


def _addbmm(self, batch1, batch2, beta, alpha):
    dtype = self.dtype
    if (dtype not in _SERVED or batch1.dtype != dtype or batch2.dtype != dtype or batch1.dim() != 3
            or batch2.dim() != 3 or batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]):
        raise Unsupported()
    if not dtype.is_complex and (isinstance(beta, complex) or isinstance(alpha, complex)):
        raise Unsupported()
    if batch1.device != self.device or batch2.device != self.device:
        raise Unsupported()
    b, n, k = batch1.shape
    p = batch2.shape[2]
    try:
        if torch.broadcast_shapes(self.shape, (n, p)) != (n, p):
            raise Unsupported()
    except RuntimeError:
        raise Unsupported() from None
    product = torch.mm(batch1.permute(1, 0, 2).reshape(n, b * k), batch2.reshape(b * k, p))
    # beta 0 ignores self (NaN and inf included), as the CPU's kernel, which never reads it then.
    if beta == 0:
        return product.mul_(alpha) if alpha != 1 else product
    scaled = self if beta == 1 else self * beta
    return torch.add(scaled.expand(n, p), product, alpha=alpha)


@impl("addbmm")
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return _addbmm(self, batch1, batch2, beta, alpha)


@impl("addbmm.out")
def addbmm_out(self, batch1, batch2, *, beta=1, alpha=1, out):
    if out.dtype != self.dtype or out.device != self.device:
        raise Unsupported()
    result = _addbmm(self, batch1, batch2, beta, alpha)
    # The CPU kernel resizes out= without resize_output's warning (OpInfo marks it so).
    if out.shape != result.shape:
        out.resize_(result.shape)
    return out.copy_(result)


@impl("addbmm_")
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    if self.dim() != 2 or batch1.dim() != 3 or batch2.dim() != 3 or \
            tuple(self.shape) != (batch1.shape[1], batch2.shape[2]):
        raise Unsupported()
    return self.copy_(_addbmm(self, batch1, batch2, beta, alpha))
