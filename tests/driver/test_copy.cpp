// mimicMemcpy, mimicMemcpyAsync, mimicMemcpyPeerAsync, mimicMemsetAsync.
#include <climits>
#include <cstring>
#include <vector>

#include "driver_helpers.h"

namespace {

std::vector<unsigned char> pattern(size_t bytes, unsigned seed) {
  std::vector<unsigned char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + seed * 31 + 3);
  return data;
}

// Pinned host memory, freed at the end of the test.
class Pinned {
 public:
  explicit Pinned(size_t bytes) : ptr_(pinnedAlloc(bytes)), bytes_(bytes) {}
  ~Pinned() {
    if (ptr_) mimicHostFree(ptr_);
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  unsigned char* data() const { return static_cast<unsigned char*>(ptr_); }
  void fill(const std::vector<unsigned char>& bytes) { std::memcpy(ptr_, bytes.data(), bytes_); }
  std::vector<unsigned char> contents() const { return {data(), data() + bytes_}; }

 private:
  void* ptr_;
  size_t bytes_;
};

// The device bytes at dptr, read back with a blocking copy.
std::vector<unsigned char> readBack(const void* dptr, size_t bytes) {
  std::vector<unsigned char> out(bytes, 0xEE);
  EXPECT_EQ(mimicMemcpy(out.data(), dptr, bytes), MIMIC_SUCCESS);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Round trips

TEST_F(DriverTest, MemcpyPageableHostToDeviceToHostRoundTrips) {
  const size_t bytes = 3 * kMiB + 17;
  auto data = pattern(bytes, 1);
  void* dev = deviceAlloc(bytes, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(dev, data.data(), bytes));
  std::vector<unsigned char> back(bytes, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(back.data(), dev, bytes));
  EXPECT_EQ(back, data);
}

TEST_F(DriverTest, MemcpyPinnedHostToDeviceToHostRoundTrips) {
  const size_t bytes = 2 * kMiB;
  auto data = pattern(bytes, 2);
  Pinned src(bytes), dst(bytes);
  src.fill(data);
  void* dev = deviceAlloc(bytes, 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(dev, src.data(), bytes));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(dst.data(), dev, bytes));
  EXPECT_EQ(dst.contents(), data);
}

TEST_F(DriverTest, MemcpyAsyncPinnedRoundTripsOnAQueue) {
  const size_t bytes = 4 * kMiB;
  auto data = pattern(bytes, 3);
  Pinned src(bytes), dst(bytes);
  src.fill(data);
  void* dev = deviceAlloc(bytes, 0);
  mimicQueue queue = newQueue(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(dev, src.data(), bytes, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(dst.data(), dev, bytes, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(queue));
  EXPECT_EQ(dst.contents(), data);
}

TEST_F(DriverTest, MemcpyAsyncPageableRoundTripsOnDefaultQueue) {
  const size_t bytes = kMiB + 3;
  auto data = pattern(bytes, 4);
  void* dev = deviceAlloc(bytes, 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(dev, data.data(), bytes, nullptr));
  std::vector<unsigned char> back(bytes, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(back.data(), dev, bytes, nullptr));
  EXPECT_EQ(back, data);
}

TEST_F(DriverTest, MemcpyAsyncPageableSourceMayBeReusedOnReturn) {
  const size_t bytes = 8 * kMiB;
  auto data = pattern(bytes, 5);
  std::vector<unsigned char> staging = data;
  void* dev = deviceAlloc(bytes, 0);
  mimicQueue queue = newQueue(0);
  ASSERT_OK(mimicMemcpyAsync(dev, staging.data(), bytes, queue));
  std::fill(staging.begin(), staging.end(), 0);  // before the copy has completed
  ASSERT_OK(mimicQueueSynchronize(queue));
  EXPECT_EQ(readBack(dev, bytes), data);
}

TEST_F(DriverTest, MemcpyAsyncToPageableIsCompleteOnReturn) {
  const size_t bytes = 16 * kMiB;
  auto data = pattern(bytes, 6);
  void* dev = deviceAlloc(bytes, 0);
  ASSERT_OK(mimicMemcpy(dev, data.data(), bytes));
  mimicQueue queue = newQueue(0);
  std::vector<unsigned char> back(bytes, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(back.data(), dev, bytes, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
  EXPECT_EQ(back, data);
}

TEST_F(DriverTest, MemcpyAsyncToPinnedReturnsBeforeCompletion) {
  const size_t bytes = 16 * kMiB;
  Pinned host(bytes);
  void* dev = deviceAlloc(bytes, 0);
  mimicQueue queue = newQueue(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(host.data(), dev, bytes, queue));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
}

TEST_F(DriverTest, MemcpyBlocksUntilTheCopyHasCompleted) {
  const size_t bytes = 16 * kMiB;
  Pinned host(bytes);
  void* dev = deviceAlloc(bytes, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(dev, host.data(), bytes));
  // It ran on device 0's default queue, which has nothing left to do.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, MemcpyDeviceToDeviceOnOneDevice) {
  const size_t bytes = 2 * kMiB;
  auto data = pattern(bytes, 7);
  void* a = deviceAlloc(bytes, 0);
  void* b = deviceAlloc(bytes, 0);
  ASSERT_OK(mimicMemcpy(a, data.data(), bytes));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(b, a, bytes));
  EXPECT_EQ(readBack(b, bytes), data);
}

TEST_F(DriverTest, MemcpyAsyncDeviceToDeviceOnOneDevice) {
  const size_t bytes = kMiB;
  auto data = pattern(bytes, 8);
  void* a = deviceAlloc(bytes, 1);
  void* b = deviceAlloc(bytes, 1);
  ASSERT_OK(mimicMemcpy(a, data.data(), bytes));
  mimicQueue queue = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(b, a, bytes, queue));
  ASSERT_OK(mimicQueueSynchronize(queue));
  EXPECT_EQ(readBack(b, bytes), data);
}

TEST_F(DriverTest, MemcpyBetweenInteriorPointers) {
  const size_t bytes = 4096;
  auto data = pattern(bytes, 9);
  void* dev = deviceAlloc(3 * bytes, 0);
  ASSERT_OK(mimicMemsetAsync(dev, 0, 3 * bytes, nullptr));
  char* base = static_cast<char*>(dev);
  ASSERT_OK(mimicMemcpy(base + 100, data.data(), bytes));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(base + 2 * bytes, base + 100, bytes));
  EXPECT_EQ(readBack(base + 2 * bytes, bytes), data);
  auto head = readBack(base, 100);
  EXPECT_EQ(head, std::vector<unsigned char>(100, 0));
}

TEST_F(DriverTest, MemcpyPeerDeviceZeroToOne) {
  const size_t bytes = 2 * kMiB;
  auto data = pattern(bytes, 10);
  void* on0 = deviceAlloc(bytes, 0);
  void* on1 = deviceAlloc(bytes, 1);
  ASSERT_OK(mimicMemcpy(on0, data.data(), bytes));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(on1, on0, bytes));
  EXPECT_EQ(readBack(on1, bytes), data);
}

TEST_F(DriverTest, MemcpyAsyncPeerOnQueueOfEitherDevice) {
  const size_t bytes = kMiB;
  auto data = pattern(bytes, 11);
  void* on0 = deviceAlloc(bytes, 0);
  void* on1a = deviceAlloc(bytes, 1);
  void* on1b = deviceAlloc(bytes, 1);
  ASSERT_OK(mimicMemcpy(on0, data.data(), bytes));
  mimicQueue q0 = newQueue(0);
  mimicQueue q1 = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(on1a, on0, bytes, q0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(on1b, on0, bytes, q1));
  ASSERT_OK(mimicQueueSynchronize(q0));
  ASSERT_OK(mimicQueueSynchronize(q1));
  EXPECT_EQ(readBack(on1a, bytes), data);
  EXPECT_EQ(readBack(on1b, bytes), data);
}

TEST_F(DriverTest, MemcpyPeerAsyncDeviceZeroToOne) {
  const size_t bytes = 2 * kMiB;
  auto data = pattern(bytes, 12);
  void* on0 = deviceAlloc(bytes, 0);
  void* on1 = deviceAlloc(bytes, 1);
  ASSERT_OK(mimicMemcpy(on0, data.data(), bytes));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyPeerAsync(on1, 1, on0, 0, bytes, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(1));
  EXPECT_EQ(readBack(on1, bytes), data);
}

TEST_F(DriverTest, MemcpyPeerAsyncOnQueueOfEitherDevice) {
  const size_t bytes = kMiB;
  auto data = pattern(bytes, 13);
  void* on1 = deviceAlloc(bytes, 1);
  void* on0a = deviceAlloc(bytes, 0);
  void* on0b = deviceAlloc(bytes, 0);
  ASSERT_OK(mimicMemcpy(on1, data.data(), bytes));
  mimicQueue q0 = newQueue(0);
  mimicQueue q1 = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyPeerAsync(on0a, 0, on1, 1, bytes, q0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyPeerAsync(on0b, 0, on1, 1, bytes, q1));
  ASSERT_OK(mimicQueueSynchronize(q0));
  ASSERT_OK(mimicQueueSynchronize(q1));
  EXPECT_EQ(readBack(on0a, bytes), data);
  EXPECT_EQ(readBack(on0b, bytes), data);
}

TEST_F(DriverTest, MemcpyHostToHostPageable) {
  auto data = pattern(10000, 14);
  std::vector<unsigned char> dst(10000, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(dst.data(), data.data(), data.size()));
  EXPECT_EQ(dst, data);
}

TEST_F(DriverTest, MemcpyHostToHostPinnedAndPageable) {
  const size_t bytes = 10000;
  auto data = pattern(bytes, 15);
  Pinned pinned(bytes);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(pinned.data(), data.data(), bytes));
  EXPECT_EQ(pinned.contents(), data);
  std::vector<unsigned char> back(bytes, 0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(back.data(), pinned.data(), bytes));
  EXPECT_EQ(back, data);
}

TEST_F(DriverTest, MemcpyAsyncHostToHost) {
  const size_t bytes = 10000;
  auto data = pattern(bytes, 16);
  Pinned a(bytes), b(bytes);
  a.fill(data);
  mimicQueue queue = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(b.data(), a.data(), bytes, queue));
  ASSERT_OK(mimicQueueSynchronize(queue));
  EXPECT_EQ(b.contents(), data);
}

// ---------------------------------------------------------------------------------------------
// mimicMemsetAsync

TEST_F(DriverTest, MemsetAsyncFillsTheRange) {
  const size_t bytes = kMiB;
  void* dev = deviceAlloc(bytes, 0);
  mimicQueue queue = newQueue(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(dev, 0xA5, bytes, queue));
  ASSERT_OK(mimicQueueSynchronize(queue));
  EXPECT_EQ(readBack(dev, bytes), std::vector<unsigned char>(bytes, 0xA5));
}

TEST_F(DriverTest, MemsetAsyncOfInteriorRangeLeavesTheRestAlone) {
  void* dev = deviceAlloc(1000, 1);
  ASSERT_OK(mimicMemsetAsync(dev, 1, 1000, nullptr));
  ASSERT_OK(mimicMemsetAsync(static_cast<char*>(dev) + 100, 2, 50, nullptr));
  auto back = readBack(dev, 1000);
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(back[i], (i >= 100 && i < 150) ? 2 : 1) << i;
  }
}

TEST_F(DriverTest, MemsetAsyncValueIsTakenAsUnsignedChar) {
  void* dev = deviceAlloc(4, 0);
  const int values[] = {-128, -1, 0, 255};
  const unsigned char expected[] = {0x80, 0xFF, 0x00, 0xFF};
  for (int i = 0; i < 4; ++i) {
    EXPECT_RESULT(MIMIC_SUCCESS,
                  mimicMemsetAsync(static_cast<char*>(dev) + i, values[i], 1, nullptr));
  }
  auto back = readBack(dev, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], expected[i]) << values[i];
}

TEST_F(DriverTest, MemsetAsyncValueOutOfByteRangeIsInvalidValue) {
  void* dev = deviceAlloc(64, 0);
  ASSERT_OK(mimicMemsetAsync(dev, 9, 64, nullptr));
  for (int value : {256, -129, 1000, INT_MAX, INT_MIN}) {
    SCOPED_TRACE(value);
    EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicMemsetAsync(dev, value, 64, nullptr));
  }
  EXPECT_EQ(readBack(dev, 64), std::vector<unsigned char>(64, 9));
}

TEST_F(DriverTest, MemsetAsyncNullIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemsetAsync(nullptr, 0, 64, nullptr));
}

TEST_F(DriverTest, MemsetAsyncZeroBytesIsInvalidSize) {
  void* dev = deviceAlloc(64, 0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemsetAsync(dev, 0, 0, nullptr));
}

TEST_F(DriverTest, MemsetAsyncOnHostPointerIsInvalidDevicePointer) {
  char onStack[64] = {};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemsetAsync(onStack, 1, sizeof onStack, nullptr));
  EXPECT_EQ(onStack[0], 0);
  Pinned pinned(64);
  std::memset(pinned.data(), 0, 64);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemsetAsync(pinned.data(), 1, 64, nullptr));
  EXPECT_EQ(pinned.data()[0], 0);
}

TEST_F(DriverTest, MemsetAsyncPastEndIsOutOfBounds) {
  void* dev = deviceAlloc(1000, 0);
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemsetAsync(dev, 0, 1001, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS,
                mimicMemsetAsync(static_cast<char*>(dev) + 900, 0, 101, nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(static_cast<char*>(dev) + 900, 0, 100, nullptr));
}

TEST_F(DriverTest, MemsetAsyncFreedPointerIsInvalidDevicePointer) {
  void* dev = deviceAlloc(1000, 0);
  ASSERT_OK(mimicMemFree(dev));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemsetAsync(dev, 0, 10, nullptr));
}

TEST_F(DriverTest, MemsetAsyncQueueOfOtherDeviceIsWrongDevice) {
  void* dev = deviceAlloc(64, 0);
  ASSERT_OK(mimicMemsetAsync(dev, 3, 64, nullptr));
  mimicQueue q1 = newQueue(1);
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemsetAsync(dev, 4, 64, q1));
  EXPECT_EQ(readBack(dev, 64), std::vector<unsigned char>(64, 3));
}

TEST_F(DriverTest, MemsetAsyncNullQueueIsTheDevicesDefaultQueue) {
  // A NULL queue means dptr's device's default queue, so device 1 memory is fine.
  void* dev = deviceAlloc(64, 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(dev, 6, 64, nullptr));
  EXPECT_EQ(readBack(dev, 64), std::vector<unsigned char>(64, 6));
}

TEST_F(DriverTest, MemsetAsyncDestroyedQueueIsInvalidQueue) {
  void* dev = deviceAlloc(64, 0);
  mimicQueue queue = newQueue(0);
  ASSERT_OK(mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicMemsetAsync(dev, 0, 64, queue));
}

// ---------------------------------------------------------------------------------------------
// Bad arguments to mimicMemcpy / mimicMemcpyAsync

TEST_F(DriverTest, MemcpyNullPointersAreNullPointer) {
  void* dev = deviceAlloc(64, 0);
  char host[64] = {};
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpy(nullptr, host, 64));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpy(host, nullptr, 64));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpy(nullptr, dev, 64));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpy(dev, nullptr, 64));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpy(nullptr, nullptr, 64));
}

TEST_F(DriverTest, MemcpyAsyncNullPointersAreNullPointer) {
  void* dev = deviceAlloc(64, 0);
  char host[64] = {};
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpyAsync(nullptr, host, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpyAsync(host, nullptr, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpyAsync(nullptr, dev, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpyAsync(dev, nullptr, 64, nullptr));
}

TEST_F(DriverTest, MemcpyZeroBytesIsInvalidSize) {
  void* dev = deviceAlloc(64, 0);
  char host[64] = {};
  char other[64] = {};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpy(dev, host, 0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpy(host, dev, 0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpy(dev, dev, 0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpy(other, host, 0));
}

TEST_F(DriverTest, MemcpyAsyncZeroBytesIsInvalidSize) {
  void* dev = deviceAlloc(64, 0);
  char host[64] = {};
  char other[64] = {};
  mimicQueue queue = newQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpyAsync(dev, host, 0, queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpyAsync(host, dev, 0, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpyAsync(other, host, 0, nullptr));
}

TEST_F(DriverTest, MemcpyPastEndOfAllocationIsOutOfBounds) {
  const size_t bytes = 1000;
  void* dev = deviceAlloc(bytes, 0);
  ASSERT_OK(mimicMemsetAsync(dev, 0x11, bytes, nullptr));
  std::vector<unsigned char> host(2 * bytes, 0x22);
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpy(dev, host.data(), bytes + 1));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS,
                mimicMemcpy(static_cast<char*>(dev) + 500, host.data(), 501));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpy(host.data(), dev, bytes + 1));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS,
                mimicMemcpy(host.data(), static_cast<char*>(dev) + 999, 2));
  // Nothing was written by the rejected copies.
  EXPECT_EQ(readBack(dev, bytes), std::vector<unsigned char>(bytes, 0x11));
  EXPECT_EQ(host, std::vector<unsigned char>(2 * bytes, 0x22));
  // Exactly up to the end is fine.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(static_cast<char*>(dev) + 500, host.data(), 500));
}

TEST_F(DriverTest, MemcpyDeviceToDevicePastEndIsOutOfBounds) {
  void* small = deviceAlloc(1000, 0);
  void* big = deviceAlloc(4000, 0);
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpy(small, big, 2000));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpy(big, small, 2000));
  void* onOther = deviceAlloc(1000, 1);
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpy(onOther, big, 1001));
}

TEST_F(DriverTest, MemcpyAsyncPastEndIsOutOfBounds) {
  void* dev = deviceAlloc(1000, 1);
  Pinned host(4096);
  mimicQueue queue = newQueue(1);
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpyAsync(dev, host.data(), 1001, queue));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpyAsync(host.data(), dev, 1001, queue));
}

TEST_F(DriverTest, MemcpyInAlignmentPaddingIsInvalidDevicePointer) {
  void* dev = deviceAlloc(1000, 0);  // reserves 1024 bytes, 1000 of them the allocation
  char host[8] = {};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemcpy(static_cast<char*>(dev) + 1000, host, 8));
}

TEST_F(DriverTest, MemcpyFreedPointerIsInvalidDevicePointer) {
  void* dev = deviceAlloc(1000, 0);
  ASSERT_OK(mimicMemFree(dev));
  char host[64] = {};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemcpy(dev, host, 64));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemcpy(host, dev, 64));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemcpyAsync(dev, host, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemcpyAsync(host, dev, 64, nullptr));
  void* live = deviceAlloc(1000, 0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemcpy(static_cast<char*>(dev) + 8192, live, 64));
}

TEST_F(DriverTest, MemcpyAsyncQueueOfOtherDeviceIsWrongDevice) {
  void* on0 = deviceAlloc(64, 0);
  void* on0b = deviceAlloc(64, 0);
  ASSERT_OK(mimicMemsetAsync(on0, 1, 64, nullptr));
  std::vector<unsigned char> host(64, 2);
  mimicQueue q1 = newQueue(1);
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyAsync(on0, host.data(), 64, q1));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyAsync(host.data(), on0, 64, q1));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyAsync(on0b, on0, 64, q1));
  // The rejected copies moved no data.
  EXPECT_EQ(readBack(on0, 64), std::vector<unsigned char>(64, 1));
  EXPECT_EQ(host, std::vector<unsigned char>(64, 2));
}

TEST_F(DriverTest, MemcpyAsyncDestroyedQueueIsInvalidQueue) {
  void* dev = deviceAlloc(64, 0);
  char host[64] = {};
  mimicQueue queue = newQueue(0);
  ASSERT_OK(mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicMemcpyAsync(dev, host, 64, queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicMemcpyAsync(host, dev, 64, queue));
}

TEST_F(DriverTest, MemcpyAsyncEventHandleAsQueueIsInvalidQueue) {
  void* dev = deviceAlloc(64, 0);
  char host[64] = {};
  mimicEvent event = nullptr;
  ASSERT_OK(mimicEventCreate(0, 0, &event));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE,
                mimicMemcpyAsync(dev, host, 64, reinterpret_cast<mimicQueue>(event)));
}

// ---------------------------------------------------------------------------------------------
// Bad arguments to mimicMemcpyPeerAsync

TEST_F(DriverTest, MemcpyPeerAsyncNullPointersAreNullPointer) {
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpyPeerAsync(nullptr, 1, on0, 0, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemcpyPeerAsync(on1, 1, nullptr, 0, 64, nullptr));
}

TEST_F(DriverTest, MemcpyPeerAsyncZeroBytesIsInvalidSize) {
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemcpyPeerAsync(on1, 1, on0, 0, 0, nullptr));
}

TEST_F(DriverTest, MemcpyPeerAsyncBadDeviceIndexIsInvalidDevice) {
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemcpyPeerAsync(on1, 2, on0, 0, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemcpyPeerAsync(on1, -1, on0, 0, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemcpyPeerAsync(on1, 1, on0, 2, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemcpyPeerAsync(on1, 1, on0, -1, 64, nullptr));
}

TEST_F(DriverTest, MemcpyPeerAsyncPointerOnOtherDeviceIsWrongDevice) {
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  ASSERT_OK(mimicMemsetAsync(on1, 0x44, 64, nullptr));
  // dst is on device 1, not 0; src is on device 0, not 1.
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyPeerAsync(on1, 0, on0, 0, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyPeerAsync(on1, 1, on0, 1, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyPeerAsync(on0, 1, on1, 0, 64, nullptr));
  EXPECT_EQ(readBack(on1, 64), std::vector<unsigned char>(64, 0x44));
}

TEST_F(DriverTest, MemcpyPeerAsyncHostPointerIsWrongDevice) {
  void* on1 = deviceAlloc(64, 1);
  char host[64] = {};
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyPeerAsync(on1, 1, host, 0, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyPeerAsync(host, 0, on1, 1, 64, nullptr));
}

TEST_F(DriverTest, MemcpyPeerAsyncPastEndIsOutOfBounds) {
  void* on0 = deviceAlloc(1000, 0);
  void* on1 = deviceAlloc(2000, 1);
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpyPeerAsync(on1, 1, on0, 0, 1001, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemcpyPeerAsync(on0, 0, on1, 1, 1500, nullptr));
}

TEST_F(DriverTest, MemcpyPeerAsyncFreedPointerIsInvalidDevicePointer) {
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  ASSERT_OK(mimicMemFree(on0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemcpyPeerAsync(on1, 1, on0, 0, 64, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemcpyPeerAsync(on0, 0, on1, 1, 64, nullptr));
}

TEST_F(DriverTest, MemcpyPeerAsyncDestroyedQueueIsInvalidQueue) {
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  mimicQueue queue = newQueue(1);
  ASSERT_OK(mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicMemcpyPeerAsync(on1, 1, on0, 0, 64, queue));
}

// Three devices: a queue can belong to neither side of a peer copy.
TEST(CopyThreeDevicesTest, PeerCopyOnQueueOfThirdDeviceIsWrongDevice) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "system.num_devices=3"));
  void* on0 = deviceAlloc(64, 0);
  void* on1 = deviceAlloc(64, 1);
  ASSERT_OK(mimicMemsetAsync(on1, 0x77, 64, nullptr));
  mimicQueue q2 = newQueue(2);
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyPeerAsync(on1, 1, on0, 0, 64, q2));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicMemcpyAsync(on1, on0, 64, q2));
  EXPECT_EQ(readBack(on1, 64), std::vector<unsigned char>(64, 0x77));
}

TEST(CopyThreeDevicesTest, PeerCopyAcrossTwoRingHopsRoundTrips) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "system.num_devices=3"));
  const size_t bytes = kMiB;
  auto data = pattern(bytes, 17);
  void* on0 = deviceAlloc(bytes, 0);
  void* on2 = deviceAlloc(bytes, 2);
  ASSERT_OK(mimicMemcpy(on0, data.data(), bytes));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyPeerAsync(on2, 2, on0, 0, bytes, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(2));
  EXPECT_EQ(readBack(on2, bytes), data);
}
