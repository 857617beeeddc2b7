// The preset files of sim/presets/, compiled in by CMake (see sim/CMakeLists.txt).
#pragma once

#include <vector>

namespace mimic::sim {

struct EmbeddedPreset {
  const char* name;
  const char* text;
};

const std::vector<EmbeddedPreset>& embeddedPresets();

}  // namespace mimic::sim
