// A command as the device model sees it: what to do, on which hardware queue, from when.
//
// The driver does a command's functional work (moving the bytes) when it is submitted, in
// submission order; the model only decides when the command starts and ends in simulated time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "sim/sim_time.h"

namespace mimic::sim {

// Shared between the host thread that submitted a command and the model that executes it.
// `start`, `end` and `faultCode` are written by the model before `done` is set.
struct Completion {
  std::atomic<bool> done{false};
  std::atomic<bool> awaited{false};  // a host thread blocks on it: the model pauses when done
  SimTime start = 0;
  SimTime end = 0;
  int faultCode = 0;  // non-zero: the device had failed and the command was aborted
};

enum class CommandKind {
  Transfer,     // a copy or fill, timed by the copy/link engines and the flow network
  HostFunc,     // calls a host function when the queue reaches it
  HostTask,     // calls a host function that says when its (off-device) work ends
  EventRecord,  // completes when every earlier command of its hardware queue has
  EventWait,    // holds its hardware queue until another command has completed
  Fault,        // fails the device with `faultCode` (the driver's fault-injection hook)
  Kernel,       // runs a kernel's workgroups; fails the device afterwards if `faultCode` is set
  Collective,   // one rank's part of a collective: holds the queue until the collective ends
};

enum class TransferKind {
  HostToDevice,
  DeviceToHost,
  DeviceToDevice,  // within one device
  Peer,            // between two devices, over the device links
  HostToHost,
  Fill,  // memset
};

struct KernelLaunch;
namespace coll {
struct CollectiveRendezvous;
}

struct Command {
  CommandKind kind = CommandKind::EventRecord;
  SimTime stamp = 0;  // host time of submission: the command cannot start earlier
  int device = 0;
  int hwQueue = 0;

  TransferKind transfer = TransferKind::Fill;
  uint64_t bytes = 0;
  bool hostPinned = true;
  int srcDevice = -1;
  int dstDevice = -1;

  void (*hostFn)(void*) = nullptr;
  uint64_t (*hostTask)(void*, uint64_t) = nullptr;  // (userData, start ns) -> end ns
  void* userData = nullptr;

  std::shared_ptr<Completion> waitFor;
  int faultCode = 0;

  std::shared_ptr<KernelLaunch> launch;
  std::shared_ptr<coll::CollectiveRendezvous> collective;

  std::shared_ptr<Completion> completion = std::make_shared<Completion>();
};

}  // namespace mimic::sim
