#include "sim/command_processor.h"

#include "sim/collective/runner.h"
#include "sim/device.h"

namespace mimic::sim {
namespace {

SimTime nowNs() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}
void waitNs(SimTime ns) {
  if (ns > 0) sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

}  // namespace

CommandProcessor::CommandProcessor(sc_core::sc_module_name name, Device& device,
                                   const CommandProcessorConfig& config,
                                   sc_core::sc_event& anyCompleted)
    : sc_module(name), device_(device), config_(config), anyCompleted_(anyCompleted) {
  SC_HAS_PROCESS(CommandProcessor);
  SC_THREAD(run);
}

void CommandProcessor::push(std::unique_ptr<Command> command) {
  fifo_.push_back(std::move(command));
  arrived_.notify(sc_core::SC_ZERO_TIME);
}

void CommandProcessor::run() {
  for (;;) {
    while (fifo_.empty()) sc_core::wait(arrived_);
    std::unique_ptr<Command> command = std::move(fifo_.front());
    fifo_.pop_front();
    // It reaches the command processor a launch latency after its submission; that latency
    // overlaps whatever the processor is doing meanwhile.
    const SimTime arrives = command->stamp + config_.launchLatencyNs;
    SimTime now = nowNs();
    if (arrives > now) waitNs(arrives - now);
    command->completion->start = nowNs();
    device_.raiseScheduledFault(command->completion->start);
    if (device_.faultCode() != 0) {
      ++stats_.aborted;
      if (command->kind == CommandKind::Collective)
        device_.collectives().join(*command->collective);
      finish(*command, device_.faultCode());
      continue;
    }
    execute(*command);
    finish(*command, command->kind == CommandKind::Fault || command->kind == CommandKind::Kernel
                         ? command->faultCode
                         : 0);
  }
}

void CommandProcessor::execute(Command& command) {
  ++stats_.commands;
  SimTime began = nowNs();
  switch (command.kind) {
    case CommandKind::EventRecord:
      break;
    case CommandKind::EventWait:
      while (!command.waitFor->done.load(std::memory_order_acquire)) {
        sc_core::wait(anyCompleted_);
      }
      break;
    case CommandKind::Transfer:
      waitNs(config_.commandLatencyNs);
      device_.executeTransfer(command);
      break;
    case CommandKind::HostFunc:
      waitNs(config_.hostFuncLatencyNs);
      command.hostFn(command.userData);
      break;
    case CommandKind::HostTask: {
      // No launch latency of its own: the task's end time is its whole model. It runs with the
      // simulation standing still, however long it blocks, so that end time depends only on
      // simulated inputs.
      const SimTime start = nowNs();
      const SimTime end = command.hostTask(command.userData, start);
      if (end > start) waitNs(end - start);
      break;
    }
    case CommandKind::Fault:
      device_.raiseFault(command.faultCode);
      break;
    case CommandKind::Collective:
      device_.collectives().join(*command.collective);
      break;
    case CommandKind::Kernel:
      waitNs(config_.commandLatencyNs);
      device_.computeEngine().run(*command.launch);
      if (command.faultCode != 0) device_.raiseFault(command.faultCode);
      break;
  }
  if (command.kind != CommandKind::EventWait) stats_.busyNs += nowNs() - began;
}

void CommandProcessor::finish(Command& command, int faultCode) {
  Completion& c = *command.completion;
  c.end = nowNs();
  c.faultCode = faultCode;
  c.done.store(true, std::memory_order_seq_cst);
  anyCompleted_.notify(sc_core::SC_ZERO_TIME);
  // A host thread is blocked on this command: give control back so it wakes at exactly now.
  if (c.awaited.load(std::memory_order_seq_cst)) sc_core::sc_pause();
}

}  // namespace mimic::sim
