// The c10d ProcessGroup "mimic": collectives between processes, each owning its simulated
// devices.
//
// A collective has a functional part and a timed part, like every mimic command:
// - Arrival: the host waits (in simulated time) until the caller's current stream has reached
//   the call, and reads that time. This is the one host synchronisation per collective: each
//   simulation then only runs as far as its own host lets it, so no rank's simulation ever
//   waits for another process, and the times are deterministic.
// - Agreement: one small Gloo allgather of each rank's description of the call (collective,
//   dtype, sizes, root, op, whether its own arguments were valid, arrival time, bytes), so a
//   mismatch is an error on every rank instead of a hang, and every rank computes the same end
//   time: the last arrival + the link model's time (time_model.h).
// - Data: PyTorch's Gloo moves the bytes directly between the host views of the device tensors
//   (mimicMemGetHostView). mimic does the functional work of a command at submission, so the
//   views hold what every earlier-submitted command produced, and later commands see the result.
// - Timing: a host task holds the group's collective queue of the device (one per device, like
//   NCCL's stream; it waits for the caller's stream first) until the agreed end. The Work's
//   future completes on that queue, so waiting on it orders the caller's stream after the
//   collective, while work queued meanwhile overlaps with it.
// Point to point: send and recv move their bytes with Gloo's send/recv; the sender leaves its
// arrival time in the store for the receiver, whose timed part is queued when it waits.
// Timing-only mode (MIMIC_MODE=timing): the same arrival, agreement and timed part, and no bulk
// data: a call whose buffers on some rank exceed the driver's limit for control data
// (driver/src/timing_mode_transfers.h) makes no host view (so no device page is committed), no
// staging copy and no Gloo transfer of tensor bytes; a smaller one moves its bytes as in full
// mode. The agreed end, and so every simulated time, is the same as in full mode.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/c10d/time_model.h"

namespace mimic::c10d {

struct Call;

class ProcessGroupMimic : public ::c10d::ProcessGroup {
 public:
  // `data` is a Gloo group of the same ranks over a prefix of `store`.
  ProcessGroupMimic(c10::intrusive_ptr<::c10d::Store> store, int rank, int size,
                    c10::intrusive_ptr<::c10d::ProcessGroup> data,
                    std::chrono::milliseconds timeout);
  ~ProcessGroupMimic() override;

  const std::string getBackendName() const override { return "mimic"; }
  // Timing-only mode: the collectives move no bulk data (see above).
  bool timingOnly() const { return timingOnly_; }

  c10::intrusive_ptr<::c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                             const ::c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                             const ::c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const ::c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                          const ::c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                             std::vector<at::Tensor>& inputs,
                                             const ::c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                   const ::c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
      const ::c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const ::c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                           std::vector<std::vector<at::Tensor>>& inputs,
                                           const ::c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const ::c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const ::c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                                 std::vector<int64_t>& outputSplits,
                                                 std::vector<int64_t>& inputSplits,
                                                 const ::c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                            std::vector<at::Tensor>& inputs,
                                            const ::c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> barrier(const ::c10d::BarrierOptions& opts) override;
  c10::intrusive_ptr<::c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                        int tag) override;
  c10::intrusive_ptr<::c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                        int tag) override;

 private:
  // The collective queue and events of one device, created on first use.
  struct DeviceQueue;
  DeviceQueue& deviceQueue(int device);

  // Exchanges every rank's description of the call; throws on every rank if any rank's
  // arguments were bad or the ranks disagree.
  void agree(Call& call);
  // Queues the timed part on the device's collective queue and returns the finished Work.
  c10::intrusive_ptr<::c10d::Work> finish(Call& call, std::vector<at::Tensor> outputs,
                                          std::function<void()> deferred = nullptr);
  // Runs one Gloo operation of `call`, turning its failure into an error naming the ranks.
  void runData(const Call& call, const c10::intrusive_ptr<::c10d::Work>& work);
  // Orders the device's collective queue after the caller's current stream and returns the
  // simulated time at which that stream reached the call (the host waits for it; 0 when the
  // group has one rank).
  uint64_t arrive(int device);
  void checkPeer(Call& call, int peer, const char* role);
  // Whether an agreed call with bytes to move (`hasBytes`) moves them: in timing-only mode only
  // when its buffers are small (see above).
  bool movesData(const Call& call, bool hasBytes) const;
  void allreduceStaging(const Call& call, std::vector<at::Tensor>& staging);
  // The collective model's time for the call moving `bytes` among `devices` (time_model.h).
  uint64_t modelNs(const Call& call, uint64_t bytes, const std::vector<int>& devices);
  // This process's slow_link fault (mimic_debug.h): 1, or how much slower its links are.
  static double linkSlowdown();
  [[noreturn]] void failPeers(const Call& call, const std::string& why);
  std::string missingRanks(uint64_t sequence);

  c10::intrusive_ptr<::c10d::Store> store_;
  c10::intrusive_ptr<::c10d::ProcessGroup> data_;
  std::chrono::milliseconds timeout_;
  bool timingOnly_;
  uint64_t sequence_ = 0;
  std::map<std::pair<int, int>, uint64_t> sendSequence_, recvSequence_;  // (peer, tag)
  std::map<int, std::unique_ptr<DeviceQueue>> queues_;
};

}  // namespace mimic::c10d
