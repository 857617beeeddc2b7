"""Streams and events over the driver's queues and events.

A ``Stream`` is a ``torch.Stream``, so ``tensor.record_stream(s)`` and PyTorch's stream guards
accept it. Event timing is in simulated milliseconds.
"""
import contextlib

import torch

from ._device import _index

_ops = torch.ops.mimic


class Stream(torch.Stream):
    """A queue of the device. ``priority`` is 0 (low) or -1 (high), as in CUDA."""

    def __new__(cls, device=None, priority=0, _packed=None):
        if _packed is None:
            _packed = _ops.stream_create(_index(device), priority)
        return super().__new__(cls, _cdata=_packed)

    def __init__(self, device=None, priority=0, _packed=None):
        pass

    def synchronize(self):
        _ops.stream_synchronize(self._cdata)

    def query(self):
        return _ops.stream_query(self._cdata)

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, torch.Stream) and self._cdata == other._cdata

    def __hash__(self):
        return hash(self._cdata)

    def __repr__(self):
        return f"<torch_mimic.Stream device={self.device} id={self._cdata & 0xFFFFFFFFFFFF}>"


def current_stream(device=None):
    return Stream(_packed=_ops.stream_current(_index(device)))


def default_stream(device=None):
    return Stream(_packed=_ops.stream_default(_index(device)))


@contextlib.contextmanager
def stream(s):
    """Makes ``s`` the current stream of its device inside the ``with`` block."""
    if s is None:
        yield
        return
    previous = current_stream(s.device.index)
    _ops.stream_set(s._cdata)
    try:
        yield
    finally:
        _ops.stream_set(previous._cdata)


class Event:
    """A marker in a stream. ``elapsed_time`` needs ``enable_timing=True`` on both events."""

    def __init__(self, enable_timing=False, device=None):
        self.enable_timing = enable_timing
        self._device = _index(device)
        self._handle = _ops.event_create(self._device, enable_timing)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _ops.event_destroy(handle)

    def record(self, stream=None):
        stream = current_stream(self._device) if stream is None else stream
        _ops.event_record(self._handle, stream._cdata)

    def wait(self, stream=None):
        stream = current_stream(self._device) if stream is None else stream
        _ops.event_wait(self._handle, stream._cdata)

    def query(self):
        return _ops.event_query(self._handle)

    def synchronize(self):
        _ops.event_synchronize(self._handle)

    def elapsed_time(self, end_event):
        """Simulated milliseconds from this event's record to ``end_event``'s."""
        return _ops.event_elapsed(self._handle, end_event._handle)
