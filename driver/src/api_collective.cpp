// mimicCollectiveGetPlan, mimicCollectiveLaunch: the driver's side of a collective. The data
// moves at launch (collective_data.h); sim/collective decides the algorithm and the time. In
// timing-only mode a call whose buffers on a rank exceed kTimingModeMovedBytes
// (timing_mode_transfers.h) reads and writes no byte of them (their pages are never committed);
// a smaller one, control data, moves its bytes. The checks, the plan and the commands are the
// same either way, so the times are too.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "collective_data.h"
#include "runtime.h"
#include "sim/collective/protocol.h"
#include "sim/collective/runner.h"
#include "sim/device.h"
#include "timing_mode_transfers.h"

using namespace mimic::driver;
namespace coll = mimic::sim::coll;

namespace {

const char* envOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The model's view of the call, after checking every field.
coll::CollectiveRequest requestOf(Runtime& rt, const mimicCollectiveDesc* desc) {
  requireNotNull(desc, "desc");
  if (unsigned(desc->kind) > unsigned(MIMIC_COLLECTIVE_ALL_TO_ALL)) {
    fail(MIMIC_ERROR_INVALID_VALUE, "kind " + std::to_string(int(desc->kind)));
  }
  if (unsigned(desc->datatype) > unsigned(mimicUint8)) {
    fail(MIMIC_ERROR_INVALID_VALUE, "datatype " + std::to_string(int(desc->datatype)));
  }
  if (unsigned(desc->op) > unsigned(mimicAvg)) {
    fail(MIMIC_ERROR_INVALID_VALUE, "op " + std::to_string(int(desc->op)));
  }
  if (desc->numRanks < 1) {
    fail(MIMIC_ERROR_INVALID_VALUE, "numRanks " + std::to_string(desc->numRanks));
  }
  requireNotNull(desc->devices, "desc->devices");
  if (desc->count == 0) fail(MIMIC_ERROR_INVALID_SIZE, "count is 0");
  if (desc->root < 0 || desc->root >= desc->numRanks) {
    fail(MIMIC_ERROR_INVALID_VALUE, "root " + std::to_string(desc->root) + " outside 0.." +
                                        std::to_string(desc->numRanks - 1));
  }
  coll::CollectiveRequest request;
  request.kind = coll::CollectiveKind(desc->kind);
  request.root = desc->root;
  std::set<int> seen;
  for (int r = 0; r < desc->numRanks; ++r) {
    rt.checkDevice(desc->devices[r], "desc->devices");
    if (!seen.insert(desc->devices[r]).second) {
      fail(MIMIC_ERROR_INVALID_VALUE,
           "device " + std::to_string(desc->devices[r]) + " is listed for two ranks");
    }
    request.devices.push_back(desc->devices[r]);
  }
  const bool wide = desc->kind == MIMIC_COLLECTIVE_ALL_GATHER ||
                    desc->kind == MIMIC_COLLECTIVE_REDUCE_SCATTER ||
                    desc->kind == MIMIC_COLLECTIVE_ALL_TO_ALL;
  request.bytes =
      uint64_t(desc->count) * dataTypeBytes(desc->datatype) * (wide ? uint64_t(desc->numRanks) : 1);
  return request;
}

coll::Choice choose(Runtime& rt, const coll::CollectiveRequest& request) {
  try {
    return rt.sim().planCollective(request, envOrEmpty("MIMIC_COLL_ALGO"),
                                   envOrEmpty("MIMIC_COLL_PROTO"));
  } catch (const coll::CollectiveChoiceError& e) {
    fail(e.unknownName() ? MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE
                         : MIMIC_ERROR_UNSUPPORTED_COLLECTIVE_CHOICE,
         e.what());
  }
}

void describe(const coll::Choice& choice, uint64_t bytes, mimicCollectivePlan* plan) {
  if (!plan) return;
  *plan = {};
  std::strncpy(plan->algorithm, choice.plan.algorithm.c_str(), sizeof plan->algorithm - 1);
  std::strncpy(plan->protocol, choice.plan.protocol->name, sizeof plan->protocol - 1);
  plan->channels = choice.plan.channels;
  plan->steps = int(choice.plan.steps.size());
  plan->estimateNs = choice.estimateNs;
  plan->bytes = bytes;
}

// Rank r's buffer of `bytes` on `device`, as a host view; null when the collective does not
// touch it. Reports the access to the memory checker.
uint8_t* viewOf(Runtime& rt, int device, const void* pointer, size_t bytes, bool write,
                const std::string& what) {
  if (bytes == 0) return nullptr;
  requireNotNull(pointer, what.c_str());
  const int owner = rt.deviceOfAddress(pointer);
  if (owner < 0) {
    fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
         what + " " + hexAddress(pointer) + " is not inside a live device allocation");
  }
  if (owner != device) {
    fail(MIMIC_ERROR_WRONG_DEVICE, what + " is on device " + std::to_string(owner) +
                                       ", its rank on device " + std::to_string(device));
  }
  mimic::sim::DeviceMemory& memory = rt.sim().device(device).memory();
  const uint64_t address = reinterpret_cast<uint64_t>(pointer);
  mimic::sim::Allocation a;
  if (!memory.find(address, &a)) {
    fail(MIMIC_ERROR_INVALID_DEVICE_POINTER,
         what + " " + hexAddress(pointer) + " is not inside a live allocation");
  }
  if (bytes > a.base + a.size - address) {
    fail(MIMIC_ERROR_OUT_OF_BOUNDS, what + " needs " + std::to_string(bytes) +
                                        " bytes; its allocation has " +
                                        std::to_string(a.base + a.size - address) + " left");
  }
  if (rt.memcheck().checking()) {
    rt.memcheck().onAccesses(device, {{address, address + bytes, write}},
                             "mimicCollectiveLaunch's " + what, Tracer::correlation());
  }
  return memory.hostView(address);
}

}  // namespace

extern "C" {

mimicResult mimicCollectiveGetPlan(const mimicCollectiveDesc* desc, mimicCollectivePlan* plan) {
  return guarded(__func__, [&](Runtime& rt) {
    requireNotNull(plan, "plan");
    const coll::CollectiveRequest request = requestOf(rt, desc);
    describe(choose(rt, request), request.bytes, plan);
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicCollectiveLaunch(const mimicCollectiveDesc* desc, const void* const* sends,
                                  void* const* recvs, const mimicQueue* queues,
                                  mimicCollectivePlan* plan) {
  return guarded(__func__, [&](Runtime& rt) {
    const coll::CollectiveRequest request = requestOf(rt, desc);
    requireNotNull(sends, "sends");
    requireNotNull(recvs, "recvs");
    requireNotNull(queues, "queues");
    const int n = desc->numRanks;
    const size_t block = desc->count * dataTypeBytes(desc->datatype);
    const auto kind = desc->kind;
    const size_t sendBytes =
        kind == MIMIC_COLLECTIVE_REDUCE_SCATTER || kind == MIMIC_COLLECTIVE_ALL_TO_ALL ? block * n
                                                                                       : block;
    const size_t recvBytes =
        kind == MIMIC_COLLECTIVE_ALL_GATHER || kind == MIMIC_COLLECTIVE_ALL_TO_ALL ? block * n
                                                                                   : block;
    std::vector<std::shared_ptr<QueueState>> rankQueues;
    std::vector<const uint8_t*> sendViews(n);
    std::vector<uint8_t*> recvViews(n);
    for (int r = 0; r < n; ++r) {
      const int device = desc->devices[r];
      const std::string rank = "rank " + std::to_string(r) + "'s ";
      auto q = rt.queue(queues[r], device);
      if (q->device != device) {
        fail(MIMIC_ERROR_WRONG_DEVICE, rank + "queue is on device " + std::to_string(q->device) +
                                           ", the rank on device " + std::to_string(device));
      }
      rankQueues.push_back(std::move(q));
      const bool reads = kind != MIMIC_COLLECTIVE_BROADCAST || r == desc->root;
      const bool writes = kind != MIMIC_COLLECTIVE_REDUCE || r == desc->root;
      sendViews[r] = viewOf(rt, device, sends[r], reads ? sendBytes : 0, false, rank + "send");
      recvViews[r] = viewOf(rt, device, recvs[r], writes ? recvBytes : 0, true, rank + "recv");
    }
    const coll::Choice choice = choose(rt, request);
    if (movesBytes(rt.config().timingOnly, sendBytes + recvBytes)) {
      applyCollective(*desc, sendViews, recvViews);
    }
    auto rendezvous = std::make_shared<coll::CollectiveRendezvous>();
    rendezvous->plan = choice.plan;
    rendezvous->expected = n;
    rendezvous->label = std::string(coll::kindName(request.kind)) + " " + choice.plan.algorithm +
                        "/" + choice.plan.protocol->name;
    for (int r = 0; r < n; ++r) {
      if (rt.racecheck().enabled()) {
        std::vector<DeviceAccess> accesses;
        const uint64_t send = reinterpret_cast<uint64_t>(sends[r]);
        const uint64_t recv = reinterpret_cast<uint64_t>(recvs[r]);
        if (sendViews[r]) accesses.push_back({desc->devices[r], send, send + sendBytes, false});
        if (recvViews[r]) accesses.push_back({desc->devices[r], recv, recv + recvBytes, true});
        rt.racecheck().onCommand(rankQueues[r]->id, accesses, "mimicCollectiveLaunch",
                                 Tracer::correlation());
      }
      auto cmd = std::make_unique<mimic::sim::Command>();
      cmd->kind = mimic::sim::CommandKind::Collective;
      cmd->bytes = request.bytes;
      cmd->collective = rendezvous;
      rt.submit(*rankQueues[r], std::move(cmd));
    }
    describe(choice, request.bytes, plan);
    return MIMIC_SUCCESS;
  });
}

}  // extern "C"
