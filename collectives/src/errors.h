// The calling thread's last collectives failure, and the names of the collectives codes.
#pragma once

#include <string>

#include "mimic/mimic_collectives.h"

namespace mimic::coll {

// Records `detail` as the calling thread's last failure and returns `code`.
mimicResult fail(mimicResult code, const std::string& detail);

// Records a failed driver call (its own detail, prefixed by `what`) and returns its code.
mimicResult failDriver(mimicResult code, const char* what);

}  // namespace mimic::coll

// Returns from the calling function when a driver call fails, keeping the driver's detail.
#define COLL_TRY(call)                                                                      \
  do {                                                                                      \
    mimicResult collResult_ = (call);                                                       \
    if (collResult_ != MIMIC_SUCCESS) return ::mimic::coll::failDriver(collResult_, #call); \
  } while (0)

// Returns from the calling function when an internal step fails (its detail is already set).
#define COLL_CHECK(call)                                  \
  do {                                                    \
    mimicResult collResult_ = (call);                     \
    if (collResult_ != MIMIC_SUCCESS) return collResult_; \
  } while (0)
