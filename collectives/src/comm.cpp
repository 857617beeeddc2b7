// mimicCommInitAll, mimicCommDestroy and the communicator queries.
#include "comm.h"

#include <mutex>
#include <set>
#include <string>

#include "errors.h"

namespace mimic::coll {
namespace {

std::mutex liveMutex;
std::set<mimicComm> liveComms;  // handles are checked here so destroyed ones are reported

}  // namespace

Clique::~Clique() {
  for (Rank& r : ranks) {
    if (r.previous) mimicEventDestroy(r.previous);
  }
}

mimicResult checkComm(mimicComm comm) {
  std::lock_guard<std::mutex> lock(liveMutex);
  if (!comm || !liveComms.count(comm))
    return fail(MIMIC_ERROR_INVALID_COMM, "comm is not a live communicator");
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
    Rank& rank = clique->ranks[i];
    rank.device = devices ? devices[i] : i;
    COLL_TRY(mimicEventCreate(rank.device, MIMIC_EVENT_DISABLE_TIMING, &rank.previous));
  }
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
  delete comm;  // the clique goes with its last communicator; queued work still completes
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
