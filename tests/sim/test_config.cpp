// Presets, overrides and parameter declarations.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "sim/params.h"
#include "sim/preset.h"
#include "sim/system_config.h"

namespace mimic::sim {
namespace {

template <typename F>
std::string configErrorOf(F&& f, ConfigError::Kind expectedKind) {
  try {
    f();
  } catch (const ConfigError& e) {
    EXPECT_EQ(int(e.kind()), int(expectedKind)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return "";
}

TEST(ConfigTest, SizesAcceptBinaryAndDecimalSuffixes) {
  EXPECT_EQ(parseSize("64", "f"), 64u);
  EXPECT_EQ(parseSize("64KiB", "f"), 65536u);
  EXPECT_EQ(parseSize(" 16 GiB ", "f"), 16ull << 30);
  EXPECT_EQ(parseSize("2MB", "f"), 2000000u);
  EXPECT_EQ(parseSize("1.5KiB", "f"), 1536u);
}

TEST(ConfigTest, BadNumbersNameTheField) {
  std::string message = configErrorOf([] { parseSize("12 apples", "hbm.capacity"); },
                                      ConfigError::Kind::InvalidValue);
  EXPECT_NE(message.find("hbm.capacity"), std::string::npos) << message;
  configErrorOf([] { parseSize("0.5", "f"); }, ConfigError::Kind::InvalidValue);
  configErrorOf([] { parseNumber("-3", "f"); }, ConfigError::Kind::InvalidValue);
  configErrorOf([] { parseNumber("nan", "f"); }, ConfigError::Kind::InvalidValue);
}

TEST(ConfigTest, EveryBuiltinPresetIsValid) {
  std::vector<std::string> names = Preset::builtinNames();
  for (const char* expected : {"tiny", "default", "a100", "h100", "mi300x"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const std::string& name : names) {
    SystemConfig c = SystemConfig::load(name, "");
    EXPECT_EQ(c.presetName, name);
    EXPECT_GT(c.numDevices, 0) << name;
    EXPECT_GT(c.hbm.bandwidthGBps, 0) << name;
  }
}

TEST(ConfigTest, PresetsCarryTheirPublishedFigures) {
  SystemConfig a100 = SystemConfig::load("a100", "");
  EXPECT_EQ(a100.hbm.bandwidthGBps, 2039);
  EXPECT_EQ(a100.hbm.capacityBytes, 80ull << 30);
  EXPECT_EQ(a100.deviceLink.topology, "switch");
  SystemConfig mi300x = SystemConfig::load("mi300x", "");
  EXPECT_EQ(mi300x.deviceLink.topology, "full_mesh");
  EXPECT_EQ(mi300x.hbm.capacityBytes, 192ull << 30);
}

TEST(ConfigTest, InheritedPresetKeepsParentFields) {
  SystemConfig tiny = SystemConfig::load("tiny", "");
  SystemConfig def = SystemConfig::load("default", "");
  EXPECT_EQ(tiny.deviceName, "mimic-tiny");
  EXPECT_EQ(tiny.numDevices, def.numDevices);
  EXPECT_EQ(tiny.deviceLink.topology, def.deviceLink.topology);
  EXPECT_LT(tiny.hbm.capacityBytes, def.hbm.capacityBytes);
}

TEST(ConfigTest, OverridesReplaceSingleFields) {
  SystemConfig c = SystemConfig::load("tiny", "hbm.bandwidth_gbps=200, system.num_devices=4");
  EXPECT_EQ(c.hbm.bandwidthGBps, 200);
  EXPECT_EQ(c.numDevices, 4);
  EXPECT_EQ(c.hostLink.bandwidthGBps, SystemConfig::load("tiny", "").hostLink.bandwidthGBps);
}

TEST(ConfigTest, UnknownPresetIsNamedWithTheKnownOnes) {
  std::string message =
      configErrorOf([] { Preset::load("tpu9000"); }, ConfigError::Kind::UnknownPreset);
  EXPECT_NE(message.find("'tpu9000'"), std::string::npos) << message;
  EXPECT_NE(message.find("tiny"), std::string::npos) << message;
  configErrorOf([] { Preset::load("/nonexistent/x.preset"); }, ConfigError::Kind::UnknownPreset);
}

TEST(ConfigTest, UnknownFieldIsNamedWithWhereItCameFrom) {
  std::string message = configErrorOf([] { SystemConfig::load("tiny", "hbm.bandwdth=5"); },
                                      ConfigError::Kind::UnknownField);
  EXPECT_NE(message.find("'hbm.bandwdth'"), std::string::npos) << message;
  EXPECT_NE(message.find("override"), std::string::npos) << message;
}

TEST(ConfigTest, InvalidValuesAreNamed) {
  std::string message =
      configErrorOf([] { SystemConfig::load("tiny", "device_link.topology=torus"); },
                    ConfigError::Kind::InvalidValue);
  EXPECT_NE(message.find("device_link.topology"), std::string::npos) << message;
  configErrorOf([] { SystemConfig::load("tiny", "hbm.bandwidth_gbps=0"); },
                ConfigError::Kind::InvalidValue);
  configErrorOf([] { SystemConfig::load("tiny", "memory.alignment=100"); },
                ConfigError::Kind::InvalidValue);
  configErrorOf([] { SystemConfig::load("tiny", "no_equals_sign"); },
                ConfigError::Kind::InvalidValue);
}

TEST(ConfigTest, PresetFilesLoadByPathAndMayInherit) {
  std::string path = ::testing::TempDir() + "mine.preset";
  {
    std::ofstream out(path);
    out << "# my device\ninherit = tiny\nhbm.bandwidth_gbps = 321  # faster\n";
  }
  SystemConfig c = SystemConfig::load(path, "");
  EXPECT_EQ(c.hbm.bandwidthGBps, 321);
  EXPECT_EQ(c.deviceName, "mimic-tiny");
  {
    std::ofstream out(path);
    out << "inherit = tiny\nthis line is wrong\n";
  }
  std::string message =
      configErrorOf([&] { SystemConfig::load(path, ""); }, ConfigError::Kind::InvalidValue);
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;
  std::remove(path.c_str());
}

TEST(ConfigTest, EveryParameterIsDescribedWithADefault) {
  std::vector<ParamSpec> specs = SystemConfig::describe();
  EXPECT_GE(specs.size(), 20u);
  for (const ParamSpec& spec : specs) {
    EXPECT_FALSE(spec.description.empty()) << spec.name;
    EXPECT_FALSE(spec.defaultValue.empty()) << spec.name;
  }
  // Every field a built-in preset sets is one that some unit declares.
  Preset preset = Preset::load("default");
  for (const auto& [field, value] : preset.values()) {
    bool declared = std::any_of(specs.begin(), specs.end(),
                                [&](const ParamSpec& s) { return s.name == field; });
    EXPECT_TRUE(declared) << field;
  }
}

}  // namespace
}  // namespace mimic::sim
