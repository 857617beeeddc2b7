"""lgamma, digamma and polygamma for n = 0 and 1 (trigamma) as chains of elementwise launches in
float32, following PyTorch's CPU kernels (aten/src/ATen/native/Math.h):

- digamma: reflection psi(x) = psi(1 - x) - pi / tan(pi * frac(x)) for x < 0, the recurrence
  psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series of calc_digamma.
- trigamma: reflection for x < 0.5, six recurrence steps, then calc_trigamma's series.
- lgamma: reflection lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) for x < 0.5, the
  recurrence lgamma(y) = lgamma(y + 8) - log(y (y+1) ... (y+7)) for y < 8, then Stirling's
  series with four terms (relative truncation error below 2^-40 for arguments >= 8).

The element language has no variables, so each step that reuses a value many times is its own
launch into a float32 temporary. Float16/bfloat16 compute in float32 and round once, as the
CPU's opmath does. Integer inputs, whose float32 results PyTorch's tests compare exactly, run on
the CPU.

polygamma for n >= 2 is (-1)^(n+1) n! zeta(n + 1, x) with Hurwitz's zeta as PyTorch's zeta()
computes it for x > 0, and the reflection formula for x < 0 (_polygamma_series)."""
import math

import torch

from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, launch, prepare_out

_F32 = torch.float32
_PI = math.pi
_PSI_10 = 2.25175258906672110764
# calc_digamma's A[] (polevl order: highest power first).
_DIGAMMA_SERIES = [8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                   -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2]


def _result_dtype(self):
    # Integer inputs give float32 results that PyTorch's tests compare exactly, bit for bit
    # with the CPU's libm: they run on the CPU.
    if self.dtype not in FLOAT_DTYPES:
        raise Unsupported()
    return self.dtype


def _temp(like):
    return empty(like.shape, _F32, like.device)


def _polevl(variable, coefficients):
    """coefficients[0] v^n + ... + coefficients[n] by Horner's rule; ``variable`` is one token."""
    program = repr(coefficients[0])
    for c in coefficients[1:]:
        program += f" {variable} mul {c!r} add"
    return program


def _digamma(x, out):
    """psi(x) into ``out``, computed as calc_digamma does."""
    # t: the argument after reflection (x < 0: 1 - x), then >= 0.
    t = launch(_temp(x), [x], "x0 0 lt 1 x0 sub x0 where", _F32)
    # The recurrence's terms: sum of 1/(t + k) over the steps with t + k < 10.
    terms = " ".join(f"x0 {k} add 10 lt x0 {k} add recip 0 where" for k in range(10)) + " add" * 9
    steps = launch(_temp(x), [t], terms, _F32)
    shifted = launch(_temp(x), [t], "x0 10 x0 sub ceil 0 max add", _F32)
    zz = "x0 x0 mul recip"
    series = launch(_temp(x), [shifted],
                    f"x0 10 eq {_PSI_10!r} x0 log 0.5 x0 div sub {zz} {_polevl(zz, _DIGAMMA_SERIES)} mul sub where",
                    _F32)
    psi = launch(_temp(x), [series, steps], "x0 x1 sub", _F32)
    # x == 0: -1/x, infinite with the sign of -x; negative integers: NaN; other x < 0: the
    # reflection's pi / tan(pi r), r the fractional part.
    angle = "x0 x0 trunc sub s0 mul"
    return launch(out, [x, psi],
                  f"x0 0 eq 1 x0 div neg x0 0 lt x0 x0 trunc eq 0 0 div x1 s0 {angle} cos mul {angle} sin div sub "
                  "where x1 where where", _F32, [_PI])


def _trigamma(x, out):
    """psi'(x) into ``out``, computed as calc_trigamma does."""
    t = launch(_temp(x), [x], "x0 0.5 lt 1 x0 sub x0 where", _F32)
    steps = " ".join(f"x0 {k} add x0 {k} add mul recip" for k in range(6)) + " add" * 5
    recurrence = launch(_temp(x), [t], steps, _F32)
    # w = t + 6; (1 + 1/(2w) + ixx (1/6 - ixx (1/30 - ixx/42))) / w, ixx = 1/w^2.
    ixx = "x0 6 add x0 6 add mul recip"
    series = (f"1 1 2 x0 6 add mul div add {ixx} {1 / 6!r} {ixx} {1 / 30!r} {ixx} {1 / 42!r} mul sub mul sub "
              "mul add x0 6 add div")
    tail = launch(_temp(x), [t], series, _F32)
    # x < 0.5: -(recurrence + tail - pi^2 / sin^2(pi x)).
    return launch(out, [x, recurrence, tail],
                  "x0 0.5 lt s0 x0 s1 mul sin x0 s1 mul sin mul div x1 x2 add sub x1 x2 add where", _F32,
                  [_PI * _PI, _PI])


def _lgamma(x, out):
    """log|Gamma(x)| into ``out``."""
    y = launch(_temp(x), [x], "x0 0.5 lt 1 x0 sub x0 where", _F32)
    shifted = launch(_temp(x), [y], "x0 8 lt x0 8 add x0 where", _F32)
    product = "x0 " + " ".join(f"x0 {k} add mul" for k in range(1, 8))
    log_product = launch(_temp(x), [y], f"x0 8 lt {product} log 0 where", _F32)
    # Stirling: (w - 1/2) log w - w + log(2 pi)/2 + 1/(12w) - 1/(360w^3) + 1/(1260w^5) - 1/(1680w^7).
    w2 = "x0 x0 mul recip"
    stirling = (f"x0 0.5 sub x0 log mul x0 sub {0.5 * math.log(2 * _PI)!r} add "
                f"{1 / 1680!r} neg {w2} mul {1 / 1260!r} add {w2} mul {1 / 360!r} sub {w2} mul {1 / 12!r} add "
                "x0 div add x1 sub")
    body = launch(_temp(x), [shifted, log_product], stirling, _F32)
    # x < 0.5: log(pi) - log|sin(pi r)| - lgamma(1 - x), r = x - round(x); infinities give inf.
    reflected = "s0 x0 x0 round sub s1 mul sin abs log sub x1 sub"
    return launch(out, [x, body], f"x0 abs s2 eq s2 x0 0.5 lt {reflected} x1 where where", _F32,
                  [math.log(_PI), _PI, float("inf")])


# zeta()'s Euler-Maclaurin denominators.
_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18]
_TERMS_PER_LAUNCH = 5
# P_n's coefficients grow like n!, and the float32 reflection with them; polygamma of higher
# orders runs on the CPU.
_MAX_SERIES_ORDER = 5


def _cot_derivative(n):
    """Coefficients (lowest power first) of P_n with d^n/dx^n cot(x) = P_n(cot x):
    P_0(c) = c and P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    poly = [0, 1]
    for _ in range(n):
        derivative = [i * c for i, c in enumerate(poly)][1:] or [0]
        poly = [0] * (len(derivative) + 2)
        for i, c in enumerate(derivative):
            poly[i] -= c
            poly[i + 2] -= c
    return poly


def _polygamma_series(n):
    """A function computing polygamma(n, x) for n >= 2 into ``out``: for x > 0 as PyTorch's
    (-1)^(n+1) n! zeta(n + 1, x), zeta's direct sum over (x + i)^-s for i = 0 .. 9 and its
    Euler-Maclaurin tail at w = x + 9; for x < 0 by the reflection
    psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)), since the direct sum of PyTorch
    (in double there) cancels too much in float32."""
    s = n + 1
    factor = float(math.factorial(n)) * (1 if n % 2 else -1)

    def compute(x, out):
        t = launch(_temp(x), [x], "x0 0 lt 1 x0 sub x0 where", _F32)
        total = torch.zeros(x.shape, dtype=_F32, device=x.device)
        for first in range(0, 10, _TERMS_PER_LAUNCH):
            terms = " ".join(f"x0 {i} add s0 pow add" for i in range(first, first + _TERMS_PER_LAUNCH))
            launch(total, [t, total], f"x1 {terms}", _F32, [-s])
        # The tail w^-s (w/(s-1) - 1/2 + sum_i C_i w^-(2i+1)), w = t + 9, with C_i the rising
        # factorial s (s+1) ... (s+2i) over A[i].
        coefficients = [math.prod(range(s, s + 2 * i + 1)) / a for i, a in enumerate(_ZETA_A)]
        w = "x0 9 add"
        u = f"{w} {w} mul recip"
        tail = f"{w} s0 pow {w} {1 / (s - 1)!r} mul 0.5 sub {_polevl(u, coefficients[::-1])} {w} div add mul x1 add"
        launch(total, [t, total], tail, _F32, [-s])
        cot = launch(_temp(x), [x], "x0 x0 round sub s0 mul cos x0 x0 round sub s0 mul sin div", _F32, [_PI])
        cot_poly = _polevl("x2", [float(c) for c in _cot_derivative(n)[::-1]])
        # Poles x = 0, -1, ...: zeta is infinite there.
        return launch(out, [x, total, cot],
                      f"x0 0 le x0 x0 floor eq and s1 x0 0 lt x1 s2 mul {cot_poly} s3 mul sub x1 s0 mul where where",
                      _F32, [factor, factor * float("inf"), factor * (-1) ** n, _PI ** (n + 1)])

    return compute


def _unary(compute, self, out=None, inplace=False):
    dtype = _result_dtype(self)
    if inplace:
        if dtype != self.dtype:
            raise RuntimeError(f"result type Float can't be cast to the desired output type {self.dtype}")
        target = self
    elif out is not None:
        target = prepare_out(out, self.shape, dtype)
    else:
        target = empty(self.shape, dtype, self.device)
    if self.numel() == 0:
        return target
    return compute(self, target)


@impl("digamma")
def digamma(self):
    return _unary(_digamma, self)


@impl("digamma_")
def digamma_(self):
    return _unary(_digamma, self, inplace=True)


@impl("digamma.out")
def digamma_out(self, *, out):
    return _unary(_digamma, self, out)


@impl("lgamma")
def lgamma(self):
    return _unary(_lgamma, self)


@impl("lgamma_")
def lgamma_(self):
    return _unary(_lgamma, self, inplace=True)


@impl("lgamma.out")
def lgamma_out(self, *, out):
    return _unary(_lgamma, self, out)


def _polygamma_kernel(n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n > _MAX_SERIES_ORDER:
        raise Unsupported()
    return _digamma if n == 0 else _trigamma if n == 1 else _polygamma_series(n)


@impl("polygamma")
def polygamma(n, self):
    return _unary(_polygamma_kernel(n), self)


@impl("polygamma.out")
def polygamma_out(n, self, *, out):
    return _unary(_polygamma_kernel(n), self, out)


@impl("mvlgamma")
def mvlgamma(self, p):
    """PyTorch's composite mvlgamma, over this file's lgamma; integer inputs run on the CPU, as
    lgamma's do (mvlgamma converts them to float before lgamma sees them)."""
    if self.dtype not in FLOAT_DTYPES:
        raise Unsupported()
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    args = torch.arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=self.dtype, device=self.device).add(self.unsqueeze(-1))
    return args.lgamma_().sum(-1).add_(p * (p - 1) * math.log(_PI) * 0.25)
