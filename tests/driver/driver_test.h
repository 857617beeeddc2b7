// Shared set-up for driver tests: each test process initialises mimic on the tiny preset.
#pragma once

#include <gtest/gtest.h>

#include "mimic/mimic.h"

// Asserts an exact result code and prints names, not numbers, when it differs.
#define EXPECT_RESULT(expected, call)                                                             \
  do {                                                                                            \
    mimicResult mimicActual_ = (call);                                                            \
    EXPECT_EQ(mimicActual_, expected) << #call << " returned " << mimicGetErrorName(mimicActual_) \
                                      << ", expected " << mimicGetErrorName(expected);            \
  } while (0)
#define ASSERT_OK(call) ASSERT_EQ((call), MIMIC_SUCCESS) << #call

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr)); }
};
