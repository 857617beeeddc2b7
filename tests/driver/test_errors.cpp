// mimicGetErrorName, mimicGetErrorString, mimicGetErrorDetail and mimicGetLastError.

#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "driver_helpers.h"
#include "mimic/mimic_debug.h"

namespace {

struct NamedResult {
  mimicResult result;
  const char* name;
};

#define MIMIC_NAMED(code) \
  { code, #code }
const NamedResult kAllResults[] = {
    MIMIC_NAMED(MIMIC_SUCCESS),
    MIMIC_NAMED(MIMIC_NOT_READY),
    MIMIC_NAMED(MIMIC_ERROR_NOT_INITIALIZED),
    MIMIC_NAMED(MIMIC_ERROR_ALREADY_INITIALIZED),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_FLAGS),
    MIMIC_NAMED(MIMIC_ERROR_UNKNOWN_PRESET),
    MIMIC_NAMED(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_CONFIG_VALUE),
    MIMIC_NAMED(MIMIC_ERROR_SYSTEM_RESOURCES),
    MIMIC_NAMED(MIMIC_ERROR_NULL_POINTER),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_DEVICE),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_SIZE),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_VALUE),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_PRIORITY),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_QUEUE),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_EVENT),
    MIMIC_NAMED(MIMIC_ERROR_WRONG_DEVICE),
    MIMIC_NAMED(MIMIC_ERROR_NOT_PERMITTED),
    MIMIC_NAMED(MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE),
    MIMIC_NAMED(MIMIC_ERROR_UNSUPPORTED_COLLECTIVE_CHOICE),
    MIMIC_NAMED(MIMIC_ERROR_OUT_OF_MEMORY),
    MIMIC_NAMED(MIMIC_ERROR_HOST_OUT_OF_MEMORY),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_DEVICE_POINTER),
    MIMIC_NAMED(MIMIC_ERROR_DOUBLE_FREE),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_HOST_POINTER),
    MIMIC_NAMED(MIMIC_ERROR_OUT_OF_BOUNDS),
    MIMIC_NAMED(MIMIC_ERROR_EVENT_NOT_RECORDED),
    MIMIC_NAMED(MIMIC_ERROR_EVENT_TIMING_DISABLED),
    MIMIC_NAMED(MIMIC_ERROR_SIMULATION_STALLED),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_IMAGE),
    MIMIC_NAMED(MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_MODULE),
    MIMIC_NAMED(MIMIC_ERROR_FUNCTION_NOT_FOUND),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_FUNCTION),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_GRID),
    MIMIC_NAMED(MIMIC_ERROR_INVALID_ARGUMENT_SIZE),
    MIMIC_NAMED(MIMIC_ERROR_NO_KERNEL),
    MIMIC_NAMED(MIMIC_ERROR_ILLEGAL_ADDRESS),
    MIMIC_NAMED(MIMIC_ERROR_LAUNCH_FAILURE),
    MIMIC_NAMED(MIMIC_ERROR_LAUNCH_TIMEOUT),
    MIMIC_NAMED(MIMIC_ERROR_ECC_UNCORRECTABLE),
    MIMIC_NAMED(MIMIC_ERROR_DEVICE_LOST),
    MIMIC_NAMED(MIMIC_ERROR_MISALIGNED_ADDRESS),
    MIMIC_NAMED(MIMIC_ERROR_SCRATCHPAD_HAZARD),
    MIMIC_NAMED(MIMIC_ERROR_ILLEGAL_INSTRUCTION),
};
#undef MIMIC_NAMED

}  // namespace

// ---------------------------------------------------------------------------------------------
// mimicGetErrorName / mimicGetErrorString

TEST(ErrorNameTest, EveryResultHasItsOwnName) {
  std::set<std::string> names;
  for (const NamedResult& r : kAllResults) {
    const char* name = mimicGetErrorName(r.result);
    ASSERT_NE(name, nullptr) << r.name;
    EXPECT_STREQ(name, r.name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), sizeof kAllResults / sizeof kAllResults[0]);
}

TEST(ErrorNameTest, EveryResultHasADistinctNonEmptyDescription) {
  std::set<std::string> descriptions;
  const std::string foreign = mimicGetErrorString(static_cast<mimicResult>(12345));
  for (const NamedResult& r : kAllResults) {
    const char* text = mimicGetErrorString(r.result);
    ASSERT_NE(text, nullptr) << r.name;
    EXPECT_GT(std::strlen(text), 0u) << r.name;
    EXPECT_NE(text, foreign) << r.name;
    descriptions.insert(text);
  }
  EXPECT_EQ(descriptions.size(), sizeof kAllResults / sizeof kAllResults[0]);
}

TEST(ErrorNameTest, UnknownValuesAreUnrecognized) {
  for (int value : {2, 99, 107, 211, 306, 402, 501, 699, 799, -1, 12345}) {
    mimicResult result = static_cast<mimicResult>(value);
    EXPECT_STREQ(mimicGetErrorName(result), "MIMIC_UNRECOGNIZED_RESULT") << value;
    const char* text = mimicGetErrorString(result);
    ASSERT_NE(text, nullptr) << value;
    EXPECT_GT(std::strlen(text), 0u) << value;
  }
}

// ---------------------------------------------------------------------------------------------
// mimicGetErrorDetail

TEST(ErrorDetailTest, NullDetailIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicGetErrorDetail(nullptr));
  EXPECT_NE(errorDetail().find("detail"), std::string::npos) << errorDetail();
}

TEST(ErrorDetailTest, EmptyBeforeAnyFailure) {
  EXPECT_EQ(errorDetail(), "");
}

TEST_F(DriverTest, ErrorDetailNamesFunctionAndArgument) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemAlloc(0, 256, nullptr));
  std::string detail = errorDetail();
  EXPECT_NE(detail.find("mimicMemAlloc"), std::string::npos) << detail;
  EXPECT_NE(detail.find("dptr"), std::string::npos) << detail;

  mimicQueue queue = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicQueueCreate(7, 0, 0, &queue));
  detail = errorDetail();
  EXPECT_NE(detail.find("mimicQueueCreate"), std::string::npos) << detail;
  EXPECT_NE(detail.find("7"), std::string::npos) << detail;
}

TEST_F(DriverTest, ErrorDetailSurvivesSuccessfulCalls) {
  void* p = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemAlloc(0, 0, &p));
  const std::string before = errorDetail();
  ASSERT_FALSE(before.empty());
  ASSERT_OK(mimicMemAlloc(0, 256, &p));
  int count = 0;
  ASSERT_OK(mimicDeviceGetCount(&count));
  EXPECT_EQ(errorDetail(), before);
}

TEST_F(DriverTest, ErrorDetailIsPerThread) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDeviceGetCount(nullptr));
  const std::string mine = errorDetail();
  std::string theirs;
  std::thread([&] {
    mimicDeviceProperties props{};
    EXPECT_EQ(mimicDeviceGetProperties(5, &props), MIMIC_ERROR_INVALID_DEVICE);
    theirs = errorDetail();
  }).join();
  EXPECT_NE(theirs.find("mimicDeviceGetProperties"), std::string::npos) << theirs;
  EXPECT_EQ(errorDetail(), mine);
}

// ---------------------------------------------------------------------------------------------
// mimicGetLastError

TEST(LastErrorTest, SuccessBeforeAnyFailure) {
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST(LastErrorTest, ReportsNotInitializedThenClears) {
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicGetLastError());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST(LastErrorTest, ReportsFailedInit) {
  clearMimicEnvironment();
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInitWithPreset(0, "no-such-preset", nullptr));
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicGetLastError());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorReturnsLastErrorThenClears) {
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
  void* p = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemAlloc(0, 0, &p));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicGetLastError());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorIsTheMostRecentFailure) {
  void* p = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemAlloc(0, 0, &p));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemAlloc(9, 256, &p));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicGetLastError());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorIsNotClearedBySuccessfulCalls) {
  mimicQueue queue = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_PRIORITY, mimicQueueCreate(0, 0, 3, &queue));
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(mimicQueueSynchronize(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_PRIORITY, mimicGetLastError());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorIsPerThread) {
  std::thread([] {
    void* p = nullptr;
    EXPECT_EQ(mimicMemAlloc(0, 0, &p), MIMIC_ERROR_INVALID_SIZE);
  }).join();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorReportsStickyErrorUntilReset) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicQueueSynchronize(nullptr));
  // Sticky: reading it does not clear it.
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicGetLastError());
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicGetLastError());
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicGetLastError());
  // Another thread sees it too: it is the device's error, not the thread's.
  mimicResult seenByOtherThread = MIMIC_SUCCESS;
  std::thread([&] { seenByOtherThread = mimicGetLastError(); }).join();
  EXPECT_EQ(seenByOtherThread, MIMIC_ERROR_ECC_UNCORRECTABLE);

  ASSERT_OK(mimicDeviceReset(0));
  // What remains is this thread's own last error (the failed synchronize), cleared once read.
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicGetLastError());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorPrefersStickyErrorOverThreadError) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_DEVICE_LOST));
  EXPECT_RESULT(MIMIC_ERROR_DEVICE_LOST, mimicDeviceSynchronize(0));
  void* p = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemAlloc(1, 0, &p));
  EXPECT_RESULT(MIMIC_ERROR_DEVICE_LOST, mimicGetLastError());
}

TEST_F(DriverTest, LastErrorReportsTheFirstStickyErrorReported) {
  mimicQueue onOne = nullptr;
  ASSERT_OK(mimicQueueCreate(1, 0, 0, &onOne));
  // Device 1 fails and reports first, device 0 afterwards.
  ASSERT_OK(mimicDebugInjectFault(onOne, MIMIC_ERROR_LAUNCH_FAILURE));
  ASSERT_EQ(mimicQueueSynchronize(onOne), MIMIC_ERROR_LAUNCH_FAILURE);
  EXPECT_RESULT(MIMIC_ERROR_LAUNCH_FAILURE, mimicGetLastError());
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  ASSERT_EQ(mimicQueueSynchronize(nullptr), MIMIC_ERROR_ECC_UNCORRECTABLE);
  EXPECT_RESULT(MIMIC_ERROR_LAUNCH_FAILURE, mimicGetLastError());
}
