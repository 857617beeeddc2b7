// mimicInit and mimicInitWithPreset: presets, overrides, the environment, repeated calls.
//
// The tests here control initialisation themselves, so they use InitTest (below), which only
// clears the environment, instead of DriverTest: ctest runs every test in a process of its own,
// so each starts uninitialised with a fresh error state.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "driver_helpers.h"
#include "mimic/mimic_debug.h"

namespace {

uint64_t noTask(void*, uint64_t startNs) {
  return startNs;
}

int deviceCount() {
  int count = -1;
  EXPECT_EQ(mimicDeviceGetCount(&count), MIMIC_SUCCESS);
  return count;
}

// A preset file in /tmp, removed when the test ends.
class TempPresetFile {
 public:
  explicit TempPresetFile(const std::string& text) {
    char name[] = "/tmp/mimic_test_XXXXXX.preset";
    int fd = mkstemps(name, 7);
    EXPECT_GE(fd, 0);
    if (fd >= 0) {
      EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
      close(fd);
    }
    path_ = name;
  }
  ~TempPresetFile() { std::remove(path_.c_str()); }
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

// Each test starts without the environment variables mimicInit reads, so it sees only what it
// sets itself.
class InitTest : public ::testing::Test {
 protected:
  void SetUp() override { clearMimicEnvironment(); }
};
class InitEnvTest : public InitTest {};
class InitPresetFileTest : public InitTest {};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Before initialisation

TEST_F(InitTest, EveryCallBeforeInitReturnsNotInitialized) {
  int count = -7;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
  EXPECT_EQ(count, -7);
  mimicDeviceProperties props{};
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetProperties(0, &props));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceSynchronize(0));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceReset(0));
  uint64_t ns = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicGetSimTime(&ns));

  void* ptr = nullptr;
  char host[16] = {};
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemAlloc(0, 256, &ptr));
  EXPECT_EQ(ptr, nullptr);
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemFree(host));
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemGetInfo(0, &freeBytes, &totalBytes));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicHostAlloc(256, &ptr));
  EXPECT_EQ(ptr, nullptr);
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicHostFree(host));
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicPointerGetAttributes(host, &attrs));
  void* view = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemGetHostView(host, 8, &view));

  char other[16] = {};
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemcpy(other, host, sizeof host));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemcpyAsync(other, host, sizeof host, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED,
                mimicMemcpyPeerAsync(other, 1, host, 0, sizeof host, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemsetAsync(host, 0, sizeof host, nullptr));

  mimicQueue queue = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicQueueCreate(0, 0, 0, &queue));
  EXPECT_EQ(queue, nullptr);
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicQueueDestroy(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicQueueQuery(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicQueueSynchronize(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicQueueWaitEvent(nullptr, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicLaunchHostFunc(nullptr, noOp, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicLaunchHostTask(nullptr, noTask, nullptr));

  mimicEvent event = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventCreate(0, 0, &event));
  EXPECT_EQ(event, nullptr);
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventDestroy(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventRecord(nullptr, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventQuery(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventSynchronize(nullptr));
  float ms = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventElapsedTime(&ms, nullptr, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicEventGetTimestamp(nullptr, &ns));

  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED,
                mimicDebugInjectFault(nullptr, MIMIC_ERROR_ECC_UNCORRECTABLE));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDebugSetFaults("oom_at_alloc=1"));
  uint64_t findings = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDebugGetRaceFindings(&findings));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDebugNameCorrelation(1, "aten::add"));
}

TEST_F(InitTest, NotInitializedIsReportedEvenForNullArguments) {
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicMemAlloc(0, 256, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicGetSimTime(nullptr));
}

TEST_F(InitTest, NotInitializedDetailSaysToCallMimicInit) {
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
  EXPECT_NE(errorDetail().find("mimicInit"), std::string::npos) << errorDetail();
}

// ---------------------------------------------------------------------------------------------
// mimicInitWithPreset

TEST_F(InitTest, InitWithTinyPresetSucceeds) {
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_EQ(deviceCount(), 2);
  mimicDeviceProperties props = propertiesOf(0);
  EXPECT_STREQ(props.preset, "tiny");
  EXPECT_STREQ(props.name, "mimic-tiny");
  EXPECT_EQ(props.totalMemory, size_t{64} << 20);
}

TEST_F(InitTest, InitWithPresetRejectsNonZeroFlags) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicInitWithPreset(1, "tiny", nullptr));
  EXPECT_NE(errorDetail().find("flags"), std::string::npos) << errorDetail();
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicInitWithPreset(0x80000000u, "tiny", nullptr));
  // Nothing was built.
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
}

TEST_F(InitTest, InitRejectsNonZeroFlags) {
  setenv("MIMIC_PRESET", "tiny", 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicInit(1));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicInit(~0u));
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
}

TEST_F(InitTest, UnknownPresetIsRejectedAndNamedInDetail) {
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInitWithPreset(0, "no-such-preset", nullptr));
  EXPECT_NE(errorDetail().find("no-such-preset"), std::string::npos) << errorDetail();
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
}

TEST_F(InitTest, UnknownOverrideFieldIsRejectedAndNamed) {
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD, mimicInitWithPreset(0, "tiny", "hbm.bandwdth=1"));
  EXPECT_NE(errorDetail().find("hbm.bandwdth"), std::string::npos) << errorDetail();
}

TEST_F(InitTest, UnknownFieldAmongValidOverridesIsNamed) {
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD,
                mimicInitWithPreset(0, "tiny", "hbm.capacity=32MiB,cp.hw_queuez=2"));
  EXPECT_NE(errorDetail().find("cp.hw_queuez"), std::string::npos) << errorDetail();
}

TEST_F(InitTest, InvalidOverrideValueIsRejectedAndNamed) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE,
                mimicInitWithPreset(0, "tiny", "hbm.capacity=lots"));
  EXPECT_NE(errorDetail().find("hbm.capacity"), std::string::npos) << errorDetail();
}

TEST_F(InitTest, OutOfRangeOverrideValuesAreInvalid) {
  const char* bad[] = {
      "hbm.bandwidth_gbps=0",        // must be positive
      "hbm.bandwidth_gbps=-5",       // negative
      "system.num_devices=0",        // at least one device
      "device_link.topology=torus",  // not one of the choices
      "memory.alignment=100",        // not a power of two
      "hbm.capacity=1.5",            // not a whole number of bytes
      "hbm.capacity",                // not field=value
      "=5",                          // no field name
  };
  for (const char* overrides : bad) {
    SCOPED_TRACE(overrides);
    EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInitWithPreset(0, "tiny", overrides));
  }
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
}

TEST_F(InitTest, RetryAfterFailedInitSucceeds) {
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD, mimicInitWithPreset(0, "tiny", "hbm.bandwdth=1"));
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInitWithPreset(0, "tinyy", nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicInitWithPreset(2, "tiny", nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_EQ(deviceCount(), 2);
}

TEST_F(InitTest, SystemResourcesFailureWhenAddressSpaceCannotBeReserved) {
  // 1000 TiB per device is more than a 47-bit user address space can reserve.
  EXPECT_RESULT(MIMIC_ERROR_SYSTEM_RESOURCES,
                mimicInitWithPreset(0, "tiny", "hbm.capacity=1000TiB"));
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&count));
}

TEST_F(InitTest, RetryAfterSystemResourcesFailureSucceeds) {
  ASSERT_EQ(mimicInitWithPreset(0, "tiny", "hbm.capacity=1000TiB"), MIMIC_ERROR_SYSTEM_RESOURCES);
  // mimic.h: "After a failure it may be called again" - a failure to reserve the device
  // address space must leave nothing behind that blocks a second attempt.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", nullptr));
  int count = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceGetCount(&count));
  EXPECT_EQ(count, 2);
}

TEST_F(InitTest, ReinitWithSameArgumentsSucceeds) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "hbm.capacity=32MiB"));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", "hbm.capacity=32MiB"));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", "hbm.capacity=32MiB"));
  EXPECT_EQ(propertiesOf(0).totalMemory, size_t{32} << 20);
}

TEST_F(InitTest, ReinitWithEmptyOverridesIsTheSameConfiguration) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr));
  // "" overrides nothing, exactly like NULL: the configuration is the same.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", ""));
}

TEST_F(InitTest, ReinitWithDifferentlySpacedOverridesIsTheSameConfiguration) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "hbm.capacity=32MiB"));
  // Overrides are trimmed around '=' and ',', so this sets the very same field to the same value.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", " hbm.capacity = 32MiB "));
}

TEST_F(InitTest, ReinitWithDifferentPresetIsAlreadyInitialized) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_RESULT(MIMIC_ERROR_ALREADY_INITIALIZED, mimicInitWithPreset(0, "default", nullptr));
  EXPECT_FALSE(errorDetail().empty());
  // The first simulation is untouched.
  EXPECT_STREQ(propertiesOf(0).preset, "tiny");
  EXPECT_EQ(propertiesOf(0).totalMemory, size_t{64} << 20);
}

TEST_F(InitTest, ReinitWithDifferentOverridesIsAlreadyInitialized) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_RESULT(MIMIC_ERROR_ALREADY_INITIALIZED,
                mimicInitWithPreset(0, "tiny", "hbm.capacity=32MiB"));
  EXPECT_EQ(propertiesOf(0).totalMemory, size_t{64} << 20);
}

TEST_F(InitTest, ReinitWithNullPresetMeansDefaultSoIsAlreadyInitialized) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_RESULT(MIMIC_ERROR_ALREADY_INITIALIZED, mimicInitWithPreset(0, nullptr, nullptr));
}

TEST_F(InitTest, PlainInitAfterSuccessDoesNothingAndSucceeds) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr));
  // mimicInit would pick "default", but it never compares configurations.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInit(0));
  EXPECT_STREQ(propertiesOf(0).preset, "tiny");
}

TEST_F(InitTest, InitTwiceSucceeds) {
  setenv("MIMIC_PRESET", "tiny", 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInit(0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInit(0));
  EXPECT_EQ(deviceCount(), 2);
}

TEST_F(InitTest, InitWithoutEnvironmentUsesDefaultPreset) {
  ASSERT_OK(mimicInit(0));
  mimicDeviceProperties props = propertiesOf(0);
  EXPECT_STREQ(props.preset, "default");
  EXPECT_STREQ(props.name, "mimic-1");
  EXPECT_EQ(props.totalMemory, size_t{16} << 30);
  EXPECT_EQ(props.computeUnits, 16);
  EXPECT_EQ(props.hardwareQueues, 8);
  EXPECT_EQ(deviceCount(), 2);
}

TEST_F(InitTest, InitWithPresetNullUsesDefaultPreset) {
  ASSERT_OK(mimicInitWithPreset(0, nullptr, "hbm.capacity=64MiB"));
  EXPECT_STREQ(propertiesOf(0).preset, "default");
  EXPECT_STREQ(propertiesOf(0).name, "mimic-1");
}

// ---------------------------------------------------------------------------------------------
// Environment variables

TEST_F(InitEnvTest, MimicPresetSelectsThePreset) {
  setenv("MIMIC_PRESET", "tiny", 1);
  ASSERT_OK(mimicInit(0));
  mimicDeviceProperties props = propertiesOf(0);
  EXPECT_STREQ(props.preset, "tiny");
  EXPECT_STREQ(props.name, "mimic-tiny");
  EXPECT_EQ(props.computeUnits, 4);
}

TEST_F(InitEnvTest, MimicPresetUnknownIsRejected) {
  setenv("MIMIC_PRESET", "bogus-env-preset", 1);
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInit(0));
  EXPECT_NE(errorDetail().find("bogus-env-preset"), std::string::npos) << errorDetail();
}

TEST_F(InitEnvTest, MimicPresetIsUsedWhenPresetArgumentIsNull) {
  setenv("MIMIC_PRESET", "tiny", 1);
  ASSERT_OK(mimicInitWithPreset(0, nullptr, nullptr));
  EXPECT_STREQ(propertiesOf(0).preset, "tiny");
}

TEST_F(InitEnvTest, PresetArgumentTakesPrecedenceOverMimicPreset) {
  setenv("MIMIC_PRESET", "bogus-env-preset", 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_STREQ(propertiesOf(0).preset, "tiny");
}

TEST_F(InitEnvTest, MimicOverridesAreApplied) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_OVERRIDES", "hbm.capacity=32MiB,cp.hw_queues=2", 1);
  ASSERT_OK(mimicInit(0));
  mimicDeviceProperties props = propertiesOf(0);
  EXPECT_EQ(props.totalMemory, size_t{32} << 20);
  EXPECT_EQ(props.hardwareQueues, 2);
  EXPECT_EQ(props.computeUnits, 4);  // still from tiny
}

TEST_F(InitEnvTest, MimicOverridesApplyToInitWithPresetToo) {
  setenv("MIMIC_OVERRIDES", "compute.units=8", 1);
  ASSERT_OK(mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_EQ(propertiesOf(0).computeUnits, 8);
}

TEST_F(InitEnvTest, CallerOverridesApplyAfterEnvironmentOverrides) {
  setenv("MIMIC_OVERRIDES", "hbm.capacity=32MiB,compute.units=8", 1);
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "hbm.capacity=16MiB"));
  mimicDeviceProperties props = propertiesOf(0);
  EXPECT_EQ(props.totalMemory, size_t{16} << 20);  // the caller's value wins
  EXPECT_EQ(props.computeUnits, 8);                // the environment's value still applies
}

TEST_F(InitEnvTest, MimicOverridesUnknownFieldIsRejected) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_OVERRIDES", "hbm.bandwdth=1", 1);
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD, mimicInit(0));
  EXPECT_NE(errorDetail().find("hbm.bandwdth"), std::string::npos) << errorDetail();
}

TEST_F(InitEnvTest, MimicOverridesInvalidValueIsRejected) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_OVERRIDES", "hbm.latency_ns=soon", 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInit(0));
}

TEST_F(InitEnvTest, MimicNumDevicesSetsTheDeviceCount) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_NUM_DEVICES", "3", 1);
  ASSERT_OK(mimicInit(0));
  EXPECT_EQ(deviceCount(), 3);
  EXPECT_STREQ(propertiesOf(2).name, "mimic-tiny");
  mimicDeviceProperties props{};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicDeviceGetProperties(3, &props));
}

TEST_F(InitEnvTest, MimicNumDevicesOverridesMimicOverrides) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_OVERRIDES", "system.num_devices=4", 1);
  setenv("MIMIC_NUM_DEVICES", "1", 1);
  ASSERT_OK(mimicInit(0));
  EXPECT_EQ(deviceCount(), 1);
}

TEST_F(InitEnvTest, MimicNumDevicesZeroIsInvalid) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_NUM_DEVICES", "0", 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInit(0));
}

TEST_F(InitEnvTest, MoreThanMaxDevicesIsInvalidAndNamesTheLimit) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_NUM_DEVICES", std::to_string(MIMIC_MAX_DEVICES + 1).c_str(), 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInit(0));
  EXPECT_EQ(errorDetail(),
            "mimicInit: field 'system.num_devices' is 65, above the limit of 64 devices "
            "(MIMIC_MAX_DEVICES)");
  setenv("MIMIC_NUM_DEVICES", "100000000000", 1);  // beyond int: still this error, not a wrap
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInit(0));
  EXPECT_NE(errorDetail().find("above the limit"), std::string::npos) << errorDetail();
}

TEST_F(InitEnvTest, MimicNumDevicesNotANumberIsInvalid) {
  setenv("MIMIC_PRESET", "tiny", 1);
  setenv("MIMIC_NUM_DEVICES", "two", 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInit(0));
  EXPECT_NE(errorDetail().find("system.num_devices"), std::string::npos) << errorDetail();
}

TEST_F(InitEnvTest, FixingTheEnvironmentAfterFailureLetsInitSucceed) {
  setenv("MIMIC_PRESET", "bogus-env-preset", 1);
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInit(0));
  setenv("MIMIC_PRESET", "tiny", 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInit(0));
  EXPECT_STREQ(propertiesOf(0).preset, "tiny");
}

// ---------------------------------------------------------------------------------------------
// Preset files

TEST_F(InitPresetFileTest, PresetFileInheritingTinyIsLoaded) {
  TempPresetFile file(
      "# a test preset\n"
      "inherit = tiny\n"
      "device.name = file-device   # trailing comment\n"
      "hbm.capacity = 32MiB\n"
      "\n"
      "cp.hw_queues = 3\n");
  ASSERT_OK(mimicInitWithPreset(0, file.path(), nullptr));
  mimicDeviceProperties props = propertiesOf(0);
  EXPECT_STREQ(props.name, "file-device");
  EXPECT_STREQ(props.preset, file.path());
  EXPECT_EQ(props.totalMemory, size_t{32} << 20);
  EXPECT_EQ(props.hardwareQueues, 3);
  EXPECT_EQ(props.computeUnits, 4);  // inherited from tiny
  EXPECT_EQ(props.vectorLanes, 16);  // inherited from tiny
  EXPECT_EQ(props.copyEngines, 2);   // inherited from default, through tiny
  EXPECT_EQ(deviceCount(), 2);
}

TEST_F(InitPresetFileTest, PresetFileFromMimicPreset) {
  TempPresetFile file("inherit = tiny\ncompute.units = 2\n");
  setenv("MIMIC_PRESET", file.path(), 1);
  ASSERT_OK(mimicInit(0));
  EXPECT_EQ(propertiesOf(0).computeUnits, 2);
}

TEST_F(InitPresetFileTest, OverridesApplyOnTopOfPresetFile) {
  TempPresetFile file("inherit = tiny\ncompute.units = 2\n");
  ASSERT_OK(mimicInitWithPreset(0, file.path(), "compute.units=6"));
  EXPECT_EQ(propertiesOf(0).computeUnits, 6);
}

TEST_F(InitPresetFileTest, MissingPresetFileIsUnknownPreset) {
  const char* path = "/nonexistent-dir/missing.preset";
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInitWithPreset(0, path, nullptr));
  EXPECT_NE(errorDetail().find(path), std::string::npos) << errorDetail();
}

TEST_F(InitPresetFileTest, PresetFileWithUnknownFieldIsRejected) {
  TempPresetFile file("inherit = tiny\nhbm.bandwdth = 1\n");
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD, mimicInitWithPreset(0, file.path(), nullptr));
  EXPECT_NE(errorDetail().find("hbm.bandwdth"), std::string::npos) << errorDetail();
}

TEST_F(InitPresetFileTest, PresetFileWithBadLineIsInvalidValue) {
  TempPresetFile file("inherit = tiny\nthis line has no equals sign\n");
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInitWithPreset(0, file.path(), nullptr));
}

TEST_F(InitPresetFileTest, PresetFileWithBadValueIsInvalidValue) {
  TempPresetFile file("inherit = tiny\nhbm.capacity = plenty\n");
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInitWithPreset(0, file.path(), nullptr));
  EXPECT_NE(errorDetail().find("hbm.capacity"), std::string::npos) << errorDetail();
}

TEST_F(InitPresetFileTest, PresetFileInheritingUnknownPresetIsUnknownPreset) {
  TempPresetFile file("inherit = no-such-base\n");
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET, mimicInitWithPreset(0, file.path(), nullptr));
  EXPECT_NE(errorDetail().find("no-such-base"), std::string::npos) << errorDetail();
}

TEST_F(InitPresetFileTest, PresetFileInheritingItselfIsInvalidValue) {
  char name[] = "/tmp/mimic_test_XXXXXX.preset";
  int fd = mkstemps(name, 7);
  ASSERT_GE(fd, 0);
  std::string text = std::string("inherit = ") + name + "\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInitWithPreset(0, name, nullptr));
  std::remove(name);
}
