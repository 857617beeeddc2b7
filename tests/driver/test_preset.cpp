// mimicPreset*: listing the built-in presets and describing a configuration, without mimicInit.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "driver_test.h"

namespace {

std::vector<mimicPresetParam> describe(const char* preset, const char* overrides) {
  int count = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicPresetDescribe(preset, overrides, nullptr, 0, &count));
  std::vector<mimicPresetParam> params(count);
  int again = 0;
  EXPECT_RESULT(MIMIC_SUCCESS,
                mimicPresetDescribe(preset, overrides, params.data(), count, &again));
  EXPECT_EQ(again, count);
  return params;
}

const mimicPresetParam* find(const std::vector<mimicPresetParam>& params, const char* field) {
  for (const auto& p : params) {
    if (std::strcmp(p.field, field) == 0) return &p;
  }
  ADD_FAILURE() << "no parameter " << field;
  return nullptr;
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

std::string detail() {
  const char* text = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetErrorDetail(&text));
  return text ? text : "";
}

TEST(Preset, ListsTheBuiltInPresetsInNameOrderWithoutInit) {
  int count = 0;
  ASSERT_OK(mimicPresetGetCount(&count));
  ASSERT_GE(count, 3);
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    const char* name = nullptr;
    ASSERT_OK(mimicPresetGetName(i, &name));
    names.push_back(name);
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "tiny"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "default"), names.end());
  int devices = 0;  // listing presets built no simulation
  EXPECT_RESULT(MIMIC_ERROR_NOT_INITIALIZED, mimicDeviceGetCount(&devices));
}

TEST(Preset, GetNameRejectsNullAndIndicesOutOfRange) {
  int count = 0;
  ASSERT_OK(mimicPresetGetCount(&count));
  const char* name = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPresetGetCount(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPresetGetName(0, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicPresetGetName(-1, &name));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicPresetGetName(count, &name));
  EXPECT_EQ(name, nullptr);
}

TEST(Preset, DescribesEveryParameterWithPresetValueDefaultAndDescription) {
  auto params = describe("tiny", nullptr);
  ASSERT_GT(params.size(), 20u);
  for (const auto& p : params) {
    EXPECT_GT(std::strlen(p.description), 0u) << p.field;
    EXPECT_EQ(p.overridden, 0) << p.field;
    EXPECT_STREQ(p.value, p.presetValue) << p.field;
  }
  const mimicPresetParam* units = find(params, "compute.units");
  ASSERT_NE(units, nullptr);
  EXPECT_STREQ(units->value, "4");  // tiny sets it
  EXPECT_EQ(units->setByPreset, 1);
  const mimicPresetParam* clock = find(params, "compute.clock_mhz");
  ASSERT_NE(clock, nullptr);
  EXPECT_STREQ(clock->value, "1500");  // inherited from default
  EXPECT_EQ(clock->setByPreset, 1);
  const mimicPresetParam* sload = find(params, "isa.sload_cycles");
  ASSERT_NE(sload, nullptr);
  EXPECT_EQ(sload->setByPreset, 0);  // no preset sets it: the default is in effect
  EXPECT_STREQ(sload->value, sload->defaultValue);
}

TEST(Preset, MarksWhatTheOverridesChanged) {
  auto params = describe("tiny", "hbm.bandwidth_gbps=400, compute.units=4");
  const mimicPresetParam* hbm = find(params, "hbm.bandwidth_gbps");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->overridden, 1);
  EXPECT_STREQ(hbm->presetValue, "100");
  EXPECT_STREQ(hbm->value, "400");
  const mimicPresetParam* units = find(params, "compute.units");
  ASSERT_NE(units, nullptr);
  EXPECT_EQ(units->overridden, 1);  // named by an override, even with the same value
  EXPECT_STREQ(units->value, units->presetValue);
  const mimicPresetParam* lanes = find(params, "compute.lanes");
  ASSERT_NE(lanes, nullptr);
  EXPECT_EQ(lanes->overridden, 0);
}

TEST(Preset, CapacityBelowTheCountWritesOnlyThatMany) {
  int count = 0;
  mimicPresetParam params[3] = {};
  std::strcpy(params[2].field, "untouched");
  ASSERT_OK(mimicPresetDescribe("default", "", params, 2, &count));
  EXPECT_GT(count, 2);
  EXPECT_GT(std::strlen(params[1].field), 0u);
  EXPECT_STREQ(params[2].field, "untouched");
}

TEST(Preset, DescribeRejectsNullArgumentsAndNegativeCapacity) {
  int count = 0;
  mimicPresetParam param{};
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPresetDescribe(nullptr, nullptr, &param, 1, &count));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPresetDescribe("tiny", nullptr, &param, 1, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPresetDescribe("tiny", nullptr, nullptr, 1, &count));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE,
                mimicPresetDescribe("tiny", nullptr, &param, -1, &count));
}

TEST(Preset, DescribeNamesAnUnknownPreset) {
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET,
                mimicPresetDescribe("h200", nullptr, nullptr, 0, &count));
  EXPECT_NE(detail().find("h200"), std::string::npos);
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_PRESET,
                mimicPresetDescribe("/nonexistent/x.preset", nullptr, nullptr, 0, &count));
}

TEST(Preset, DescribeNamesAnUnknownField) {
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_UNKNOWN_CONFIG_FIELD,
                mimicPresetDescribe("tiny", "hbm.bandwith_gbps=2", nullptr, 0, &count));
  EXPECT_NE(detail().find("hbm.bandwith_gbps"), std::string::npos);
}

TEST(Preset, DescribeRejectsBadValuesAndMalformedOverrides) {
  int count = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE,
                mimicPresetDescribe("tiny", "hbm.bandwidth_gbps=fast", nullptr, 0, &count));
  EXPECT_NE(detail().find("hbm.bandwidth_gbps"), std::string::npos);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE,
                mimicPresetDescribe("tiny", "hbm.bandwidth_gbps", nullptr, 0, &count));
  const std::string longName = "device.name=" + std::string(MIMIC_PRESET_VALUE_CHARS, 'x');
  mimicPresetParam params[64];
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE,
                mimicPresetDescribe("tiny", longName.c_str(), params, 64, &count));
}

TEST(Preset, TheCommentAtTheEndOfAValuesLineIsItsSource) {
  TempPresetFile parent(
      "# a whole-line comment is no field's source\n"
      "inherit = tiny\n"
      "hbm.bandwidth_gbps = 123   #  A datasheet, table 2  \n"
      "hbm.latency_ns = 300       # a paper\n"
      "compute.units = 8\n");
  TempPresetFile child(std::string("inherit = ") + parent.path() +
                       "  # not a source: inherit is no field\n"
                       "hbm.latency_ns = 400\n");
  auto params = describe(child.path(), "compute.lanes=32");
  const mimicPresetParam* hbm = find(params, "hbm.bandwidth_gbps");
  ASSERT_NE(hbm, nullptr);
  EXPECT_STREQ(hbm->value, "123");
  EXPECT_STREQ(hbm->source, "A datasheet, table 2");  // inherited, with the parent's source
  const mimicPresetParam* latency = find(params, "hbm.latency_ns");
  ASSERT_NE(latency, nullptr);
  EXPECT_STREQ(latency->value, "400");
  EXPECT_STREQ(latency->source, "");  // the child set it again without one
  const mimicPresetParam* units = find(params, "compute.units");
  ASSERT_NE(units, nullptr);
  EXPECT_STREQ(units->source, "");  // a value without a trailing comment
  const mimicPresetParam* lanes = find(params, "compute.lanes");
  ASSERT_NE(lanes, nullptr);
  EXPECT_STREQ(lanes->source, "override");
  const mimicPresetParam* sload = find(params, "isa.sload_cycles");
  ASSERT_NE(sload, nullptr);
  EXPECT_STREQ(sload->source, "");  // the default is in effect
}

TEST(Preset, AHashEndsTheValueAndStartsItsSource) {
  TempPresetFile file("inherit = tiny\ndevice.name = mimic#2\n");
  auto params = describe(file.path(), nullptr);
  const mimicPresetParam* name = find(params, "device.name");
  ASSERT_NE(name, nullptr);
  EXPECT_STREQ(name->value, "mimic");
  EXPECT_STREQ(name->source, "2");
}

TEST(Preset, DescribeRejectsASourceTooLongForItsField) {
  TempPresetFile file("inherit = tiny\nhbm.latency_ns = 300 # " +
                      std::string(MIMIC_PRESET_SOURCE_CHARS, 's') + "\n");
  int count = 0;
  ASSERT_OK(mimicPresetDescribe(file.path(), nullptr, nullptr, 0, &count));  // only the count
  std::vector<mimicPresetParam> params(count);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE,
                mimicPresetDescribe(file.path(), nullptr, params.data(), count, &count));
  EXPECT_NE(detail().find("source of field 'hbm.latency_ns'"), std::string::npos) << detail();
}

TEST(Preset, EveryBuiltInPresetDescribesWithItsSources) {
  int count = 0;
  ASSERT_OK(mimicPresetGetCount(&count));
  for (int i = 0; i < count; ++i) {
    const char* name = nullptr;
    ASSERT_OK(mimicPresetGetName(i, &name));
    int params = 0;
    EXPECT_RESULT(MIMIC_SUCCESS, mimicPresetDescribe(name, nullptr, nullptr, 0, &params));
    std::vector<mimicPresetParam> all(params);
    const mimicResult result = mimicPresetDescribe(name, nullptr, all.data(), params, &params);
    EXPECT_EQ(result, MIMIC_SUCCESS) << name << ": " << detail();
  }
}

}  // namespace
