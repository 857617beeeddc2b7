// mimicDevice*, mimicGetSimTime, and sticky device errors (mimicDebugInjectFault).
#include <climits>
#include <cstring>
#include <vector>

#include "driver_helpers.h"
#include "mimic/mimic_debug.h"

// ---------------------------------------------------------------------------------------------
// mimicDeviceGetCount

TEST_F(DriverTest, DeviceGetCountIsTwoOnTiny) {
  int count = -1;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceGetCount(&count));
  EXPECT_EQ(count, 2);
}

TEST_F(DriverTest, DeviceGetCountNullIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDeviceGetCount(nullptr));
}

// ---------------------------------------------------------------------------------------------
// mimicDeviceGetProperties

TEST_F(DriverTest, DevicePropertiesMatchTinyPreset) {
  for (int device = 0; device < 2; ++device) {
    SCOPED_TRACE(device);
    mimicDeviceProperties p;
    std::memset(&p, 0xAB, sizeof p);
    ASSERT_OK(mimicDeviceGetProperties(device, &p));
    EXPECT_STREQ(p.name, "mimic-tiny");
    EXPECT_STREQ(p.preset, "tiny");
    EXPECT_EQ(p.totalMemory, size_t{67108864});
    EXPECT_EQ(p.computeUnits, 4);
    EXPECT_EQ(p.vectorLanes, 16);
    EXPECT_DOUBLE_EQ(p.clockMHz, 1500.0);
    EXPECT_EQ(p.scratchpadBytes, size_t{65536});
    EXPECT_DOUBLE_EQ(p.hbmBandwidthGBps, 100.0);
    EXPECT_EQ(p.hbmLatencyNs, uint64_t{200});
    EXPECT_DOUBLE_EQ(p.hostLinkBandwidthGBps, 10.0);
    EXPECT_EQ(p.hostLinkLatencyNs, uint64_t{1000});
    EXPECT_EQ(p.deviceLinkTopology, MIMIC_TOPOLOGY_RING);
    EXPECT_DOUBLE_EQ(p.deviceLinkBandwidthGBps, 25.0);
    EXPECT_EQ(p.deviceLinkLatencyNs, uint64_t{500});
    EXPECT_EQ(p.hardwareQueues, 4);
    EXPECT_EQ(p.copyEngines, 2);
    EXPECT_EQ(p.linkEngines, 2);
    EXPECT_EQ(p.commandLatencyNs, uint64_t{1000});
    EXPECT_EQ(p.allocationAlignment, size_t{256});
  }
}

TEST_F(DriverTest, DevicePropertiesNullIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDeviceGetProperties(0, nullptr));
}

TEST_F(DriverTest, DevicePropertiesBadIndexIsInvalidDevice) {
  for (int device : {-1, 2, 3, INT_MAX, INT_MIN}) {
    SCOPED_TRACE(device);
    mimicDeviceProperties p{};
    p.computeUnits = -42;
    EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicDeviceGetProperties(device, &p));
    EXPECT_EQ(p.computeUnits, -42);  // untouched
  }
}

// ---------------------------------------------------------------------------------------------
// mimicDeviceSynchronize

TEST_F(DriverTest, DeviceSynchronizeIdleDeviceSucceeds) {
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(1));
}

TEST_F(DriverTest, DeviceSynchronizeBadIndexIsInvalidDevice) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicDeviceSynchronize(-1));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicDeviceSynchronize(2));
}

TEST_F(DriverTest, DeviceSynchronizeWaitsForEveryQueueOfTheDevice) {
  PinnedCopy copy(0);
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(copy.start(queue));
  ASSERT_OK(mimicMemsetAsync(copy.dev(), 1, 4096, nullptr));
  const uint64_t before = simTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
  // 32 MiB over a 10 GB/s link takes at least 3.35 ms of simulated time.
  EXPECT_GE(simTime() - before, copy.minNs());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, DeviceSynchronizeDoesNotWaitForOtherDevices) {
  PinnedCopy copy(0);
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(copy.start(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(1));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
}

// ---------------------------------------------------------------------------------------------
// mimicDeviceReset

TEST_F(DriverTest, DeviceResetBadIndexIsInvalidDevice) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicDeviceReset(-1));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicDeviceReset(2));
}

TEST_F(DriverTest, DeviceResetFreesAllAllocations) {
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 1 << 20, &a));
  ASSERT_OK(mimicMemAlloc(0, 4096, &b));
  ASSERT_LT(freeBytesOf(0), kTinyMemory);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceReset(0));
  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_OK(mimicMemGetInfo(0, &freeBytes, &totalBytes));
  EXPECT_EQ(freeBytes, totalBytes);
  EXPECT_EQ(totalBytes, kTinyMemory);
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicPointerGetAttributes(a, &attrs));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicPointerGetAttributes(b, &attrs));
  // The reset already freed them.
  EXPECT_RESULT(MIMIC_ERROR_DOUBLE_FREE, mimicMemFree(a));
  // The whole capacity is one block again.
  void* all = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, kTinyMemory, &all));
}

TEST_F(DriverTest, DeviceResetLeavesOtherDeviceAllocationsAlone) {
  void* onOne = nullptr;
  ASSERT_OK(mimicMemAlloc(1, 4096, &onOne));
  const size_t freeOnOne = freeBytesOf(1);
  ASSERT_OK(mimicDeviceReset(0));
  EXPECT_EQ(freeBytesOf(1), freeOnOne);
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicPointerGetAttributes(onOne, &attrs));
  EXPECT_EQ(attrs.device, 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemFree(onOne));
}

TEST_F(DriverTest, DeviceResetKeepsQueuesAndEventsValid) {
  mimicQueue queue = nullptr;
  mimicEvent event = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(mimicEventCreate(0, 0, &event));
  ASSERT_OK(mimicDeviceReset(0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(event, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(event));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(event));
}

TEST_F(DriverTest, DeviceResetWaitsForTheDevicesWork) {
  PinnedCopy copy(0);
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(copy.start(queue));
  const uint64_t before = simTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceReset(0));
  EXPECT_GE(simTime() - before, copy.minNs());
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
}

// ---------------------------------------------------------------------------------------------
// mimicGetSimTime

TEST_F(DriverTest, GetSimTimeNullIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicGetSimTime(nullptr));
}

TEST_F(DriverTest, GetSimTimeDoesNotAdvanceByItself) {
  const uint64_t first = simTime();
  EXPECT_EQ(simTime(), first);
  EXPECT_EQ(simTime(), first);
}

TEST_F(DriverTest, GetSimTimeAdvancesWithBlockingCopy) {
  const size_t bytes = kMiB;
  std::vector<char> host(bytes, 5);
  void* dev = nullptr;
  ASSERT_OK(mimicMemAlloc(0, bytes, &dev));
  const uint64_t before = simTime();
  ASSERT_OK(mimicMemcpy(dev, host.data(), bytes));
  // At least 1 MiB over the 10 GB/s host link, plus the 1000 ns link latency.
  EXPECT_GE(simTime() - before, uint64_t{104857 + 1000});
}

// ---------------------------------------------------------------------------------------------
// Sticky errors

TEST_F(DriverTest, InjectFaultWithNonStickyCodeIsInvalidValue) {
  for (mimicResult code :
       {MIMIC_SUCCESS, MIMIC_NOT_READY, MIMIC_ERROR_INVALID_VALUE, MIMIC_ERROR_SIMULATION_STALLED,
        static_cast<mimicResult>(699), static_cast<mimicResult>(799)}) {
    SCOPED_TRACE(code);
    EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugInjectFault(nullptr, code));
  }
  // None of them failed the device.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
}

TEST_F(DriverTest, InjectFaultOnDestroyedQueueIsInvalidQueue) {
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE,
                mimicDebugInjectFault(queue, MIMIC_ERROR_ECC_UNCORRECTABLE));
}

TEST_F(DriverTest, InjectedFaultIsReportedBySynchronize) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicQueueSynchronize(nullptr));
}

TEST_F(DriverTest, InjectedFaultIsReportedByQuery) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, InjectedFaultIsNotReportedBeforeASynchronizingCallObservesIt) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  void* p = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, 256, &p));
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicDeviceSynchronize(0));
}

TEST_F(DriverTest, EachStickyCodeIsReportedAsInjected) {
  for (mimicResult code :
       {MIMIC_ERROR_ILLEGAL_ADDRESS, MIMIC_ERROR_LAUNCH_FAILURE, MIMIC_ERROR_LAUNCH_TIMEOUT,
        MIMIC_ERROR_ECC_UNCORRECTABLE, MIMIC_ERROR_DEVICE_LOST}) {
    SCOPED_TRACE(mimicGetErrorName(code));
    ASSERT_OK(mimicDebugInjectFault(nullptr, code));
    EXPECT_RESULT(code, mimicDeviceSynchronize(0));
    EXPECT_RESULT(code, mimicDeviceSynchronize(0));
    ASSERT_OK(mimicDeviceReset(0));
    EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
  }
}

TEST_F(DriverTest, FirstInjectedFaultWins) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ILLEGAL_ADDRESS));
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_DEVICE_LOST));
  EXPECT_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS, mimicDeviceSynchronize(0));
}

TEST_F(DriverTest, StickyErrorIsReturnedByLaterCallsOnThatDevice) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  mimicEvent event = nullptr;
  ASSERT_OK(mimicEventCreate(0, 0, &event));
  ASSERT_OK(mimicEventRecord(event, queue));
  ASSERT_OK(mimicDebugInjectFault(queue, MIMIC_ERROR_ECC_UNCORRECTABLE));
  ASSERT_EQ(mimicQueueSynchronize(queue), MIMIC_ERROR_ECC_UNCORRECTABLE);

  const mimicResult ecc = MIMIC_ERROR_ECC_UNCORRECTABLE;
  void* p = nullptr;
  EXPECT_RESULT(ecc, mimicMemAlloc(0, 256, &p));
  EXPECT_EQ(p, nullptr);
  mimicQueue q2 = nullptr;
  EXPECT_RESULT(ecc, mimicQueueCreate(0, 0, 0, &q2));
  mimicEvent e2 = nullptr;
  EXPECT_RESULT(ecc, mimicEventCreate(0, 0, &e2));
  EXPECT_RESULT(ecc, mimicMemsetAsync(dptr, 0, 4096, nullptr));
  EXPECT_RESULT(ecc, mimicMemsetAsync(dptr, 0, 4096, queue));
  char host[64] = {};
  EXPECT_RESULT(ecc, mimicMemcpy(dptr, host, sizeof host));
  EXPECT_RESULT(ecc, mimicMemcpy(host, dptr, sizeof host));
  EXPECT_RESULT(ecc, mimicMemcpyAsync(dptr, host, sizeof host, queue));
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_RESULT(ecc, mimicMemGetInfo(0, &freeBytes, &totalBytes));
  EXPECT_RESULT(ecc, mimicMemFree(dptr));
  EXPECT_RESULT(ecc, mimicDeviceSynchronize(0));
  EXPECT_RESULT(ecc, mimicQueueSynchronize(nullptr));
  EXPECT_RESULT(ecc, mimicQueueQuery(queue));
  EXPECT_RESULT(ecc, mimicQueueWaitEvent(queue, event));
  EXPECT_RESULT(ecc, mimicEventRecord(event, queue));
  EXPECT_RESULT(ecc, mimicEventQuery(event));
  EXPECT_RESULT(ecc, mimicEventSynchronize(event));
  uint64_t ns = 0;
  EXPECT_RESULT(ecc, mimicEventGetTimestamp(event, &ns));
  EXPECT_RESULT(ecc, mimicDebugInjectFault(queue, MIMIC_ERROR_DEVICE_LOST));
}

TEST_F(DriverTest, StickyErrorDoesNotAffectTheOtherDevice) {
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  ASSERT_EQ(mimicDeviceSynchronize(0), MIMIC_ERROR_ECC_UNCORRECTABLE);

  void* dptr = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(1, 4096, &dptr));
  mimicQueue queue = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueCreate(1, 0, 0, &queue));
  mimicEvent event = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventCreate(1, 0, &event));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(dptr, 0x5A, 4096, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(event, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(event));
  unsigned char back[16] = {};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpy(back, dptr, sizeof back));
  EXPECT_EQ(back[0], 0x5A);
  EXPECT_EQ(back[15], 0x5A);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(1));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemFree(dptr));
  // Device 0 is still failed.
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicDeviceSynchronize(0));
}

TEST_F(DriverTest, StickyErrorOnDeviceOneLeavesDeviceZeroWorking) {
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(1, 0, 0, &queue));
  ASSERT_OK(mimicDebugInjectFault(queue, MIMIC_ERROR_LAUNCH_FAILURE));
  EXPECT_RESULT(MIMIC_ERROR_LAUNCH_FAILURE, mimicQueueSynchronize(queue));
  EXPECT_RESULT(MIMIC_ERROR_LAUNCH_FAILURE, mimicDeviceSynchronize(1));
  void* p = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_LAUNCH_FAILURE, mimicMemAlloc(1, 256, &p));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, 256, &p));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
}

TEST_F(DriverTest, DeviceResetClearsStickyErrorAndFreesAllocations) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 1 << 20, &dptr));
  ASSERT_OK(mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  ASSERT_EQ(mimicQueueSynchronize(nullptr), MIMIC_ERROR_ECC_UNCORRECTABLE);

  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceReset(0));
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemGetInfo(0, &freeBytes, &totalBytes));
  EXPECT_EQ(freeBytes, totalBytes);
  EXPECT_EQ(totalBytes, kTinyMemory);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));

  // The device works again, data included.
  void* fresh = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &fresh));
  ASSERT_OK(mimicMemsetAsync(fresh, 0x33, 4096, nullptr));
  unsigned char back[8] = {};
  ASSERT_OK(mimicMemcpy(back, fresh, sizeof back));
  EXPECT_EQ(back[0], 0x33);
  EXPECT_EQ(back[7], 0x33);
}

TEST_F(DriverTest, DeviceResetOnFailedDeviceKeepsQueuesUsable) {
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(mimicDebugInjectFault(queue, MIMIC_ERROR_DEVICE_LOST));
  ASSERT_EQ(mimicQueueSynchronize(queue), MIMIC_ERROR_DEVICE_LOST);
  ASSERT_OK(mimicDeviceReset(0));
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(dptr, 1, 4096, queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(queue));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
}

TEST_F(DriverTest, CommandsAfterTheFaultAreAborted) {
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  mimicEvent after = nullptr;
  ASSERT_OK(mimicEventCreate(0, 0, &after));
  ASSERT_OK(mimicDebugInjectFault(queue, MIMIC_ERROR_ILLEGAL_ADDRESS));
  ASSERT_OK(mimicEventRecord(after, queue));
  EXPECT_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS, mimicEventSynchronize(after));
}
