// How API functions fail: they throw ApiError inside guarded(), which turns it into the
// function's result code and records the detail message for mimicGetErrorDetail.
#pragma once

#include <string>

#include "mimic/mimic.h"

namespace mimic::driver {

class ApiError {
 public:
  ApiError(mimicResult result, std::string message)
      : result_(result), message_(std::move(message)) {}
  mimicResult result() const { return result_; }
  const std::string& message() const { return message_; }

 private:
  mimicResult result_;
  std::string message_;
};

[[noreturn]] inline void fail(mimicResult result, std::string message) {
  throw ApiError(result, std::move(message));
}

inline void require(bool condition, mimicResult result, const char* message) {
  if (!condition) fail(result, message);
}

inline void requireNotNull(const void* pointer, const char* argument) {
  if (!pointer) fail(MIMIC_ERROR_NULL_POINTER, std::string(argument) + " is NULL");
}

bool isStickyError(mimicResult result);
std::string hexAddress(const void* pointer);

// Records a failure of `function` for mimicGetErrorDetail and mimicGetLastError.
mimicResult recordFailure(const char* function, mimicResult result, const std::string& message);

}  // namespace mimic::driver
