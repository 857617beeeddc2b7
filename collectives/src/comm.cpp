// mimicCommInitAll, mimicCommDestroy and the communicator queries.
#include "comm.h"

#include <mutex>
#include <set>
#include <string>

#include "errors.h"
#include "sim/isa/module_image.h"

namespace mimic::coll {
namespace {

constexpr size_t kInitialScratch = size_t{1} << 20;

std::mutex liveMutex;
std::set<mimicComm> liveComms;  // handles are checked here so destroyed ones are reported

mimicResult destroyRank(Rank& rank) {
  if (rank.scratch) COLL_TRY(mimicMemFree(rank.scratch));
  for (mimicEvent e : {rank.events.ready, rank.events.sent, rank.events.reduced, rank.events.done,
                       rank.events.probe})
    if (e) COLL_TRY(mimicEventDestroy(e));
  if (rank.module) COLL_TRY(mimicModuleUnload(rank.module));
  rank = Rank{};
  return MIMIC_SUCCESS;
}

mimicResult initRank(Rank& rank, int device, int ranks) {
  rank.device = device;
  mimicDeviceProperties props{};
  COLL_TRY(mimicDeviceGetProperties(device, &props));
  rank.scratchpadBytes = props.scratchpadBytes;
  const std::vector<uint8_t> image =
      isa::encodeImage(buildCollectiveModule(props.scratchpadBytes, ranks));
  COLL_TRY(mimicModuleLoad(device, image.data(), image.size(), &rank.module));
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (int o = 0; o < 4; ++o) {
      COLL_TRY(mimicModuleGetFunction(
          rank.module, reduceKernelName(mimicDataType(t), mimicReduceOp(o)), &rank.reduce[t][o]));
    }
    COLL_TRY(
        mimicModuleGetFunction(rank.module, scaleKernelName(mimicDataType(t)), &rank.scale[t]));
  }
  for (mimicEvent* e : {&rank.events.ready, &rank.events.sent, &rank.events.reduced,
                        &rank.events.done, &rank.events.probe})
    COLL_TRY(mimicEventCreate(device, MIMIC_EVENT_DISABLE_TIMING, e));
  return ensureScratch(rank, kInitialScratch);
}

}  // namespace

mimicResult checkComm(mimicComm comm) {
  std::lock_guard<std::mutex> lock(liveMutex);
  if (!comm || !liveComms.count(comm))
    return fail(MIMIC_ERROR_INVALID_COMM, "comm is not a live communicator");
  return MIMIC_SUCCESS;
}

mimicResult ensureScratch(Rank& rank, size_t bytes) {
  if (rank.scratchBytes >= bytes) return MIMIC_SUCCESS;
  if (rank.scratch) COLL_TRY(mimicMemFree(rank.scratch));
  rank.scratch = nullptr;
  rank.scratchBytes = 0;
  COLL_TRY(mimicMemAlloc(rank.device, bytes, &rank.scratch));
  rank.scratchBytes = bytes;
  return MIMIC_SUCCESS;
}

}  // namespace mimic::coll

using namespace mimic::coll;

extern "C" {

mimicResult mimicCommInitAll(mimicComm* comms, int count, const int* devices) {
  if (!comms) return fail(MIMIC_ERROR_NULL_POINTER, "comms is NULL");
  if (count < 1) return fail(MIMIC_ERROR_INVALID_VALUE, "count must be at least 1");
  int available = 0;
  COLL_TRY(mimicDeviceGetCount(&available));
  std::set<int> seen;
  for (int i = 0; i < count; ++i) {
    const int device = devices ? devices[i] : i;
    if (device < 0 || device >= available) {
      return fail(MIMIC_ERROR_INVALID_DEVICE, "devices[" + std::to_string(i) + "] = " +
                                                  std::to_string(device) + " is not a device");
    }
    if (!seen.insert(device).second) {
      return fail(MIMIC_ERROR_INVALID_VALUE,
                  "device " + std::to_string(device) + " is listed twice");
    }
  }
  auto clique = std::make_shared<Clique>();
  clique->ranks.resize(count);
  for (int i = 0; i < count; ++i) {
    mimicResult result = initRank(clique->ranks[i], devices ? devices[i] : i, count);
    if (result != MIMIC_SUCCESS) {
      for (Rank& rank : clique->ranks) destroyRank(rank);
      return result;
    }
  }
  clique->live = count;
  std::lock_guard<std::mutex> lock(liveMutex);
  for (int i = 0; i < count; ++i) {
    comms[i] = new mimicComm_st{clique, i};
    liveComms.insert(comms[i]);
  }
  return MIMIC_SUCCESS;
}

mimicResult mimicCommDestroy(mimicComm comm) {
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    if (!comm || !liveComms.erase(comm))
      return fail(MIMIC_ERROR_INVALID_COMM, "comm is not a live communicator");
  }
  std::shared_ptr<Clique> clique = std::move(comm->clique);
  delete comm;
  // A rank's scratch may still be read by a neighbour's copy, so the clique's device state is
  // released only with its last communicator, after every device of it is idle.
  if (--clique->live > 0) return MIMIC_SUCCESS;
  for (Rank& r : clique->ranks) COLL_TRY(mimicDeviceSynchronize(r.device));
  for (Rank& r : clique->ranks) {
    mimicResult result = destroyRank(r);
    if (result != MIMIC_SUCCESS) return result;
  }
  return MIMIC_SUCCESS;
}

mimicResult mimicCommGetRank(mimicComm comm, int* rank) {
  if (!rank) return fail(MIMIC_ERROR_NULL_POINTER, "rank is NULL");
  if (mimicResult r = checkComm(comm)) return r;
  *rank = comm->rank;
  return MIMIC_SUCCESS;
}

mimicResult mimicCommGetSize(mimicComm comm, int* size) {
  if (!size) return fail(MIMIC_ERROR_NULL_POINTER, "size is NULL");
  if (mimicResult r = checkComm(comm)) return r;
  *size = int(comm->clique->ranks.size());
  return MIMIC_SUCCESS;
}

mimicResult mimicCommGetDevice(mimicComm comm, int* device) {
  if (!device) return fail(MIMIC_ERROR_NULL_POINTER, "device is NULL");
  if (mimicResult r = checkComm(comm)) return r;
  *device = comm->clique->ranks[comm->rank].device;
  return MIMIC_SUCCESS;
}

}  // extern "C"
