// A crash inside an op that runs on the CPU through the fallback becomes an error naming the op.
//
// The CPU kernels are PyTorch's, and some of them crash on inputs their own dispatch never gives
// them but the fallback can (1.13's composite group norm hands batch_norm_cpu zero channels, an
// integer division by zero). A SIGSEGV, SIGFPE, SIGBUS or SIGILL raised on the calling thread
// while `body` runs jumps back here; the thread's dispatch and autograd state is restored and a
// c10::Error names the op and the signal. Best effort: memory the crashed kernel allocated leaks,
// and a crash on another thread (an intra-op worker) still ends the process, as before. Signals
// outside a guarded call go to whatever handler was installed before.
#pragma once

#include <functional>
#include <string>

namespace mimic::torch_backend {

void runGuardedFallback(const std::string& op, const std::function<void()>& body);

}  // namespace mimic::torch_backend
