#include "errors.h"

namespace mimic::coll {
namespace {

thread_local std::string lastDetail;

}  // namespace

mimicResult fail(mimicResult code, const std::string& detail) {
  lastDetail = detail;
  return code;
}

mimicResult failDriver(mimicResult code, const char* what) {
  const char* driverDetail = nullptr;
  mimicGetErrorDetail(&driverDetail);
  return fail(code, std::string(what) + ": " + mimicGetErrorName(code) +
                        (driverDetail && *driverDetail ? std::string(": ") + driverDetail : ""));
}

}  // namespace mimic::coll

extern "C" {

const char* mimicCollGetErrorName(mimicResult result) {
  switch (int(result)) {
    case MIMIC_ERROR_INVALID_COMM:
      return "MIMIC_ERROR_INVALID_COMM";
    case MIMIC_ERROR_INVALID_DATATYPE:
      return "MIMIC_ERROR_INVALID_DATATYPE";
    case MIMIC_ERROR_INVALID_REDUCE_OP:
      return "MIMIC_ERROR_INVALID_REDUCE_OP";
    case MIMIC_ERROR_INVALID_ROOT:
      return "MIMIC_ERROR_INVALID_ROOT";
    case MIMIC_ERROR_GROUP_REQUIRED:
      return "MIMIC_ERROR_GROUP_REQUIRED";
    case MIMIC_ERROR_GROUP_NOT_STARTED:
      return "MIMIC_ERROR_GROUP_NOT_STARTED";
    case MIMIC_ERROR_GROUP_MISMATCH:
      return "MIMIC_ERROR_GROUP_MISMATCH";
    case MIMIC_ERROR_GROUP_INCOMPLETE:
      return "MIMIC_ERROR_GROUP_INCOMPLETE";
    default:
      return mimicGetErrorName(result);
  }
}

mimicResult mimicCollGetErrorDetail(const char** detail) {
  if (!detail) return MIMIC_ERROR_NULL_POINTER;
  *detail = mimic::coll::lastDetail.c_str();
  return MIMIC_SUCCESS;
}

}  // extern "C"
