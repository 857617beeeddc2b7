// Helpers for tests that measure simulated time with events.
#pragma once

#include <cstdint>

#include "driver_test.h"

// The simulated time at which an event's most recent record completed (waits for it).
inline uint64_t timestampOf(mimicEvent event) {
  EXPECT_EQ(mimicEventSynchronize(event), MIMIC_SUCCESS);
  uint64_t ns = 0;
  EXPECT_EQ(mimicEventGetTimestamp(event, &ns), MIMIC_SUCCESS);
  return ns;
}

inline mimicEvent newEvent(int device = 0) {
  mimicEvent event = nullptr;
  EXPECT_EQ(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &event), MIMIC_SUCCESS);
  return event;
}

inline mimicQueue newQueue(int device = 0) {
  mimicQueue queue = nullptr;
  EXPECT_EQ(mimicQueueCreate(device, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue), MIMIC_SUCCESS);
  return queue;
}

inline void* deviceAlloc(size_t bytes, int device = 0) {
  void* p = nullptr;
  EXPECT_EQ(mimicMemAlloc(device, bytes, &p), MIMIC_SUCCESS);
  return p;
}

inline void* pinnedAlloc(size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(mimicHostAlloc(bytes, &p), MIMIC_SUCCESS);
  return p;
}

inline mimicDeviceProperties propertiesOf(int device = 0) {
  mimicDeviceProperties p{};
  EXPECT_EQ(mimicDeviceGetProperties(device, &p), MIMIC_SUCCESS);
  return p;
}

#define EXPECT_WITHIN_PERCENT(actual, expected, percent) \
  EXPECT_NEAR(double(actual), double(expected), double(expected) * (percent) / 100.0)
