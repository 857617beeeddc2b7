"""Host memory of rank processes, as the many-rank benchmarks and the scale study report it
(Linux /proc; plain Python, no torch)."""
import threading

POLL_S = 0.5


def mem_available_kb():
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def own_memory_kb():
    """(peak resident set, proportional set size) of this process, in kB. The proportional set
    divides shared pages (libtorch's code) among the processes that map them, so its sum over
    processes is what they take together."""
    peak = pss = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                peak = int(line.split()[1])
    with open("/proc/self/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    return peak, pss


class MemoryWatch:
    """The lowest MemAvailable seen while the ranks run, sampled every POLL_S. Below `floor_kb`
    it sets `exhausted`: the machine is shared, and the run must end before the kernel's
    out-of-memory killer picks a process."""

    def __init__(self, floor_kb=0):
        self.before = mem_available_kb()
        self.lowest = self.before
        self.floor_kb = floor_kb
        self.exhausted = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self):
        while not self._stop.wait(POLL_S):
            self.lowest = min(self.lowest, mem_available_kb())
            if self.lowest < self.floor_kb:
                self.exhausted.set()

    def stop(self):
        """Stops watching; returns the largest drop of MemAvailable, in kB."""
        self._stop.set()
        self._thread.join()
        return self.before - self.lowest
