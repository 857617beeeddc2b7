"""Shared set-up of the Python tests: torch_mimic from the build tree (PYTHONPATH is set by
ctest), warnings about CPU fallbacks silenced, and the device fixture."""
import os

os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

import torch_mimic  # noqa: E402


@pytest.fixture
def device():
    return torch.device(torch_mimic.DEVICE_TYPE, 0)


@pytest.fixture
def fallbacks():
    """The fallback report of the test body only."""
    torch_mimic.reset_fallback_report()
    yield torch_mimic.fallback_report
