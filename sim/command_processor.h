// A command processor: executes the commands of one hardware queue, strictly in order.
//
// It holds each command until its submission time, honours event waits, pays the command
// latency, and hands transfers to its device. Once its device has failed, it aborts every
// command it meets (the sticky error), completing it at once with the device's fault code.
#pragma once

#include <systemc>

#include <deque>
#include <memory>

#include "sim/command.h"
#include "sim/device_config.h"

namespace mimic::sim {

class Device;

class CommandProcessor : public sc_core::sc_module {
 public:
  CommandProcessor(sc_core::sc_module_name name, Device& device,
                   const CommandProcessorConfig& config, sc_core::sc_event& anyCompleted);

  // Called by the simulation thread between runs of the scheduler.
  void push(std::unique_ptr<Command> command);
  const CommandProcessorStats& stats() const { return stats_; }

 private:
  void run();
  void execute(Command& command);
  void finish(Command& command, int faultCode);

  Device& device_;
  CommandProcessorConfig config_;
  sc_core::sc_event& anyCompleted_;
  sc_core::sc_event arrived_;
  std::deque<std::unique_ptr<Command>> fifo_;
  CommandProcessorStats stats_;
};

}  // namespace mimic::sim
