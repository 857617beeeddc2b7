#include "torch_backend/src/fallback_guard.h"

#include <ATen/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>

namespace mimic::torch_backend {
namespace {

constexpr int kGuardedSignals[] = {SIGSEGV, SIGFPE, SIGBUS, SIGILL};

thread_local sigjmp_buf* tJumpBack = nullptr;
thread_local volatile sig_atomic_t tCaught = 0;
struct sigaction gPrevious[NSIG];

void onFault(int signal, siginfo_t* info, void* context) {
  if (tJumpBack != nullptr) {
    tCaught = signal;
    siglongjmp(*tJumpBack, 1);
  }
  // Not ours: hand the fault to the handler that was there before. For the default action,
  // restoring it and returning re-executes the faulting instruction, which then ends the process
  // with the signal, as it would have without this handler.
  const struct sigaction& previous = gPrevious[signal];
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
  } else {
    sigaction(signal, &previous, nullptr);
  }
}

void installHandlers() {
  struct sigaction action {};
  action.sa_sigaction = onFault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  for (int signal : kGuardedSignals) sigaction(signal, &action, &gPrevious[signal]);
}

}  // namespace

void runGuardedFallback(const std::string& op, const std::function<void()>& body) {
  static std::once_flag installed;
  std::call_once(installed, installHandlers);
  const at::ThreadLocalState state;  // dispatch keys, grad mode: the crashed frames never restore
  sigjmp_buf here;
  sigjmp_buf* const outer = tJumpBack;
  if (sigsetjmp(here, 1) != 0) {
    tJumpBack = outer;
    at::ThreadLocalState::setThreadLocalState(state);
    const int signal = tCaught;
    TORCH_CHECK(false, "mimic: ", op, " crashed on the CPU through the fallback (",
                strsignal(signal), "): PyTorch's CPU kernel does not handle these inputs");
  }
  tJumpBack = &here;
  try {
    body();
  } catch (...) {
    tJumpBack = outer;
    throw;
  }
  tJumpBack = outer;
}

}  // namespace mimic::torch_backend
