// C++ helpers over the C driver API: MIMIC_CHECK throws mimic::Error, naming the failed call,
// the caller's file and line, the result code and the driver's detail message.
#pragma once

#include <stdexcept>
#include <string>

#include "mimic/mimic.h"

namespace mimic {

class Error : public std::runtime_error {
 public:
  Error(mimicResult result, const std::string& message)
      : std::runtime_error(message), result_(result) {}
  mimicResult result() const { return result_; }

 private:
  mimicResult result_;
};

inline void check(mimicResult result, const char* call, const char* file, int line) {
  if (result == MIMIC_SUCCESS) return;
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  std::string message = std::string(file) + ":" + std::to_string(line) + ": " + call +
                        " failed with " + mimicGetErrorName(result) + " (" +
                        mimicGetErrorString(result) + ")";
  if (detail && *detail) message += ": " + std::string(detail);
  throw Error(result, message);
}

}  // namespace mimic

#define MIMIC_CHECK(call) ::mimic::check((call), #call, __FILE__, __LINE__)
