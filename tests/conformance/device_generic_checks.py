"""A small device-generic test module: proves that PyTorch's device-type test machinery runs on the
mimic device through ``TORCH_TEST_DEVICES`` (tests/python/test_conformance.py runs it).

With ``TORCH_TEST_DEVICES=tests/conformance/torch_test_devices.py``,
``instantiate_device_type_tests`` generates ``TestMimicDeviceGenericPRIVATEUSEONE`` next to the
CPU class: plain device-generic tests, a ``@dtypes`` test, a multi-device test, an expecttest
inline check and an ``@ops`` test over a handful of op_db entries.
"""
import torch
from torch.testing import make_tensor
from torch.testing._internal.common_device_type import (
    deviceCountAtLeast,
    dtypes,
    instantiate_device_type_tests,
    ops,
)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase, run_tests

# Plain variants only: a few cheap ops that every device should run.
SMALL_OP_DB = [op for op in op_db
               if op.name in ("add", "mul", "exp", "sum", "mm") and not op.variant_test_name]


class TestMimicDeviceGeneric(TestCase):
    def test_tensor_lands_on_device(self, device):
        zeros = torch.zeros(2, 3, device=device)
        self.assertEqual(zeros.device, torch.device(device))
        self.assertEqual(zeros.cpu(), torch.zeros(2, 3))
        values = torch.tensor([1.5, -2.0, 3.25])
        self.assertEqual(values.to(device).cpu(), values)

    @dtypes(torch.float32, torch.int64)
    def test_add_matches_cpu(self, device, dtype):
        a = make_tensor((4, 5), device="cpu", dtype=dtype)
        b = make_tensor((4, 5), device="cpu", dtype=dtype)
        self.assertEqual((a.to(device) + b.to(device)).cpu(), a + b)

    @deviceCountAtLeast(1)
    def test_primary_device_comes_first(self, devices):
        self.assertEqual(devices[0], self.get_primary_device())
        self.assertEqual(len(devices), len(set(devices)))

    def test_expect_inline(self, device):
        total = torch.ones(4, device=device).sum()
        self.assertExpectedInline(str(total.item()), """4.0""")
        # view is ATen's own kernel on every device, so its message is the same everywhere.
        self.assertExpectedRaisesInline(
            RuntimeError, lambda: torch.ones(2, device=device).view(3),
            """shape '[3]' is invalid for input of size 2""")

    @ops(SMALL_OP_DB, allowed_dtypes=(torch.float32,))
    def test_samples_match_cpu(self, device, dtype, op):
        for sample in op.sample_inputs("cpu", dtype):
            expected = op(sample.input, *sample.args, **sample.kwargs)
            moved = sample.transform(
                lambda value: value.to(device) if isinstance(value, torch.Tensor) else value)
            actual = op(moved.input, *moved.args, **moved.kwargs)
            self.assertEqual(actual.device, torch.device(device))
            self.assertEqual(actual.cpu(), expected)


instantiate_device_type_tests(TestMimicDeviceGeneric, globals())

if __name__ == "__main__":
    run_tests()
