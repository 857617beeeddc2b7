"""The torch_mimic package API: devices, streams, events, memory statistics, pinned memory,
the generator and the fallback report."""
import os
import subprocess
import sys

import pytest
import torch

import torch_mimic


def test_device_module_is_registered():
    assert torch_mimic.device_count() >= 1
    assert torch_mimic.is_available()
    assert getattr(torch, torch_mimic.DEVICE_TYPE) is torch_mimic


def test_properties_describe_the_preset():
    props = torch_mimic.get_device_properties(0)
    assert props.preset == "default"
    assert props.compute_units > 0 and props.total_memory > 0 and props.hbm_bandwidth_gbps > 0
    assert isinstance(props.clock_mhz, float) and isinstance(props.compute_units, int)


def test_set_device_rejects_an_index_out_of_range():
    with pytest.raises(RuntimeError, match="out of range"):
        torch_mimic.set_device(torch_mimic.device_count())
    assert torch_mimic.current_device() == 0


def test_tensors_round_trip(device):
    x = torch.arange(12, dtype=torch.float32).view(3, 4)
    y = x.to(device)
    assert y.device == device
    assert torch.equal(y.cpu(), x)
    assert torch.equal(y.t().cpu(), x.t())  # a non-contiguous device view


def test_views_alias_storage(device):
    y = torch.zeros(4, 4, device=device)
    y.view(16)[5] = 7.0
    y.t()[0, 1] = 3.0
    expected = torch.zeros(4, 4)
    expected.view(16)[5] = 7.0
    expected.t()[0, 1] = 3.0
    assert torch.equal(y.cpu(), expected)


def test_sim_time_advances_with_work(device):
    before = torch_mimic.sim_time()
    x = torch.ones(1 << 20, device=device)
    (x * 2).sum().item()
    assert torch_mimic.sim_time() > before


def test_event_elapsed_time_is_simulated(device):
    start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
    x = torch.ones(1 << 22, device=device)
    start.record()
    for _ in range(4):
        x = x * 1.5
    end.record()
    end.synchronize()
    assert end.query()
    elapsed = start.elapsed_time(end)
    assert elapsed > 0
    # The same work takes the same simulated time: timing is deterministic.
    start.record()
    for _ in range(4):
        x = x * 1.5
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) == pytest.approx(elapsed, rel=1e-6)


def test_event_without_timing_refuses_elapsed_time():
    a, b = torch_mimic.Event(), torch_mimic.Event()
    a.record()
    b.record()
    with pytest.raises(RuntimeError, match="TIMING_DISABLED"):
        a.elapsed_time(b)


def test_streams_order_through_events(device):
    side = torch_mimic.Stream()
    assert side != torch_mimic.current_stream()
    x = torch.ones(1 << 20, device=device)
    with torch_mimic.stream(side):
        assert torch_mimic.current_stream() == side
        side.wait_stream(torch_mimic.default_stream())
        y = x * 3
    assert torch_mimic.current_stream() == torch_mimic.default_stream()
    torch_mimic.current_stream().wait_stream(side)
    assert torch.equal(y.cpu(), torch.full((1 << 20,), 3.0))
    side.synchronize()
    assert side.query()


def test_record_stream_defers_reuse(device):
    side = torch_mimic.Stream()
    x = torch.ones(1 << 18, device=device)
    side.wait_stream(torch_mimic.current_stream())  # x is written on the default stream
    with torch_mimic.stream(side):
        (x * 2).sum()
    x.record_stream(side)
    pointer = x.data_ptr()
    del x
    # The block waits for the side stream before going back to the cache; once it has
    # completed, a same-size allocation on the default stream gets it again.
    side.synchronize()
    torch.ones(1, device=device)  # an allocation processes pending frees
    y = torch.empty(1 << 18, device=device)
    assert y.data_ptr() == pointer


def test_memory_statistics(device):
    torch_mimic.empty_cache()
    torch_mimic.reset_peak_memory_stats()
    base = torch_mimic.memory_allocated()
    x = torch.empty(1 << 20, device=device)
    assert torch_mimic.memory_allocated() - base == 4 << 20
    assert torch_mimic.max_memory_allocated() >= base + (4 << 20)
    del x
    assert torch_mimic.memory_allocated() == base
    assert torch_mimic.memory_reserved() >= 4 << 20  # cached
    torch_mimic.empty_cache()
    assert torch_mimic.memory_reserved() == base
    assert "allocated" in torch_mimic.memory_summary()


def test_out_of_memory_reports_the_numbers(device):
    total = torch_mimic.get_device_properties(0).total_memory
    pattern = r"out of memory.*Tried to allocate.*allocated.*reserved.*free.*largest free block"
    with pytest.raises(RuntimeError, match=pattern):
        torch.empty(total // 4 * 5, dtype=torch.uint8, device=device)
    held = torch.empty(total // 4 * 3, dtype=torch.uint8, device=device)
    with pytest.raises(RuntimeError, match=pattern):
        torch.empty(total // 2, dtype=torch.uint8, device=device)
    del held
    assert torch_mimic.memory_stats()["out_of_memory"] == 2
    torch.empty(total // 2, dtype=torch.uint8, device=device)  # the memory is usable again


def test_pinned_memory_copies(device):
    host = torch_mimic.empty_pinned((1024,))
    assert torch_mimic.is_pinned(host) and not torch_mimic.is_pinned(torch.empty(4))
    host.copy_(torch.arange(1024, dtype=torch.float32))
    y = host.to(device, non_blocking=True)
    back = torch_mimic.pin_memory(torch.zeros(1024))
    back.copy_(y, non_blocking=True)
    torch_mimic.synchronize()
    assert torch.equal(back, torch.arange(1024, dtype=torch.float32))


def test_generator_is_reproducible(device):
    torch_mimic.manual_seed(1234)
    a = torch.rand(1000, device=device).cpu()
    state = torch_mimic.get_rng_state()
    b = torch.randn(1000, device=device).cpu()
    torch_mimic.set_rng_state(state)
    assert torch.equal(torch.randn(1000, device=device).cpu(), b)
    torch_mimic.manual_seed(1234)
    assert torch.equal(torch.rand(1000, device=device).cpu(), a)
    assert torch_mimic.initial_seed() == 1234
    assert 0.45 < a.mean().item() < 0.55 and not torch.equal(a, b)
    with pytest.raises(ValueError):
        torch_mimic.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def _run_python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=120)


def test_fallback_is_counted_and_its_policy_applies(device, fallbacks):
    x = torch.tensor([[3.0, 1.0], [2.0, 4.0]], device=device)
    torch.linalg.svd(x)  # no mimic kernel (the issue leaves SVD on the CPU): runs on the CPU
    assert fallbacks().get("aten::_linalg_svd.U", 0) >= 1
    code = "import torch, torch_mimic; torch.linalg.svd(torch.ones(2, 2, device='privateuseone'))"
    refused = _run_python(code, MIMIC_FALLBACK="error")
    assert refused.returncode != 0 and "MIMIC_FALLBACK=error" in refused.stderr
    warned = _run_python(code, MIMIC_FALLBACK="warn")
    assert warned.returncode == 0 and "runs on the CPU through the fallback" in warned.stderr
    bad = _run_python(code, MIMIC_FALLBACK="loud")
    assert bad.returncode != 0 and "MIMIC_FALLBACK must be" in bad.stderr


def test_bad_allocator_mode_is_named():
    result = _run_python("import torch, torch_mimic; torch.ones(2, device='privateuseone')",
                         MIMIC_ALLOCATOR="fancy")
    assert result.returncode != 0 and "MIMIC_ALLOCATOR" in result.stderr


def test_direct_allocator_frees_at_once():
    code = ("import torch, torch_mimic; x = torch.ones(1 << 20, device='privateuseone'); del x; "
            "print(torch_mimic.memory_reserved())")
    result = _run_python(code, MIMIC_ALLOCATOR="direct")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def test_unknown_preset_is_a_clear_error():
    result = _run_python("import torch, torch_mimic; torch.ones(2, device='privateuseone')",
                         MIMIC_PRESET="no-such-preset")
    assert result.returncode != 0 and "no-such-preset" in result.stderr


def test_a_failed_kernel_names_the_error_the_kernel_and_the_op():
    # aten::index_select checks its indices on the host; the primitive its compositions call
    # does not, so its kernel reads past the tensor and faults.
    code = ("import torch, torch_mimic\n"
            "x = torch.ones(3, device='privateuseone')\n"
            "y = torch.empty(1, device='privateuseone')\n"
            "torch.ops.mimic.index_select(y, x, 0, torch.tensor([7], device='privateuseone'))\n"
            "try:\n"
            "    y.cpu()\n"
            "except RuntimeError as e:\n"
            "    print(e)\n"
            "try:\n"
            "    x + 1\n"
            "    torch_mimic.synchronize()\n"
            "except RuntimeError as e:\n"
            "    print('sticky:', e)\n")
    for allocator in ("caching", "direct"):  # freeing tensors of a failed device never aborts
        result = _run_python(code, MIMIC_ALLOCATOR=allocator)
        assert result.returncode == 0, result.stderr
    first, sticky = result.stdout.split("sticky:")
    assert "MIMIC_ERROR_ILLEGAL_ADDRESS" in first and "index_select" in first
    assert "while running aten::_copy_from" in first
    assert "MIMIC_ERROR_ILLEGAL_ADDRESS" in sticky  # the device stays failed


def test_non_blocking_copies_follow_their_stream(device):
    side = torch_mimic.Stream()
    host = torch_mimic.empty_pinned((1 << 20,))
    host.fill_(2.0)
    back = torch_mimic.empty_pinned((1 << 20,))
    start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
    with torch_mimic.stream(side):
        start.record()
        y = host.to(device, non_blocking=True)
        back.copy_(y * 3, non_blocking=True)
        end.record()
    y.record_stream(side)
    side.synchronize()
    assert torch.equal(back, torch.full((1 << 20,), 6.0))
    # Both 4 MiB copies crossed the host link on the side stream's timeline.
    link_gbps = torch_mimic.get_device_properties(0).host_link_bandwidth_gbps
    assert start.elapsed_time(end) >= 2 * (4 << 20) / (link_gbps * 1e9) * 1e3
