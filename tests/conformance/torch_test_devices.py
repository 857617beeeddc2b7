"""The mimic device for PyTorch's device-generic tests (``TORCH_TEST_DEVICES``).

``torch.testing._internal.common_device_type`` runs this file with ``runpy.run_path`` and its
own globals, so ``DeviceTypeTestBase`` is already in scope (and this file must not import
``common_device_type``). ``TEST_CLASS`` is the base of the generated ``*PRIVATEUSEONE`` classes.

Usage::

    TORCH_TEST_DEVICES=/work/main/tests/conformance/torch_test_devices.py \\
    PYTHONPATH=/work/main/build/python:/work/main/tests/conformance \\
    /usr/bin/python3 some_device_generic_test.py
"""
import os
import sys

# Fallbacks to the CPU are what the conformance runs measure, not something to warn about.
os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import torch_mimic  # noqa: E402


class MimicTestBase(DeviceTypeTestBase):  # noqa: F821 (provided by common_device_type)
    device_type = torch_mimic.DEVICE_TYPE
    primary_device = f"{torch_mimic.DEVICE_TYPE}:0"

    @classmethod
    def get_primary_device(cls):
        return cls.primary_device

    @classmethod
    def get_all_devices(cls):
        """The primary device first, then every other mimic device."""
        primary = torch.device(cls.get_primary_device())
        others = [f"{cls.device_type}:{index}" for index in range(torch_mimic.device_count())
                  if index != primary.index]
        return [cls.get_primary_device()] + others

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Tests of one class share the device that is current when the class starts, as the
        # CUDA base does.
        cls.primary_device = f"{cls.device_type}:{torch_mimic.current_device()}"

    def _should_stop_test_suite(self):
        """After a RuntimeError, stop the suite only if the device can no longer synchronise:
        later tests would fail for the same reason (CUDA's rule)."""
        try:
            torch_mimic.synchronize()
        except RuntimeError:
            print("TEST SUITE EARLY TERMINATION: torch_mimic.synchronize() failed",
                  file=sys.stderr)
            return True
        return False


TEST_CLASS = MimicTestBase
