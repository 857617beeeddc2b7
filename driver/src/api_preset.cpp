// mimicPreset*: the built-in presets and every parameter of a configuration, for listings such
// as `mimic presets show`. No simulation is built, so unlike guarded() these need no mimicInit.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "runtime.h"
#include "sim/preset.h"
#include "sim/presets_embedded.h"
#include "sim/system_config.h"

using namespace mimic::driver;

namespace {

// Sorted once: the embedded table follows the build's file order, which callers must not see.
const std::vector<const char*>& presetNames() {
  static const std::vector<const char*> names = [] {
    std::vector<const char*> sorted;
    for (const auto& p : mimic::sim::embeddedPresets()) sorted.push_back(p.name);
    std::sort(sorted.begin(), sorted.end(),
              [](const char* a, const char* b) { return std::strcmp(a, b) < 0; });
    return sorted;
  }();
  return names;
}

// Copies text into a fixed field; a value too long for it is the caller's configuration error,
// since a silently cut value would describe a configuration that is not the one in effect.
template <size_t N>
void copyField(char (&out)[N], const std::string& text, const std::string& field,
               const char* what = "value") {
  if (text.size() >= N) {
    fail(MIMIC_ERROR_INVALID_CONFIG_VALUE, std::string("the ") + what + " of field '" + field +
                                               "' is longer than " + std::to_string(N - 1) +
                                               " characters");
  }
  std::memcpy(out, text.c_str(), text.size() + 1);
}

std::string valueOr(const mimic::sim::Preset& preset, const std::string& field,
                    const std::string& fallback) {
  auto it = preset.values().find(field);
  return it == preset.values().end() ? fallback : it->second;
}

template <typename Body>
mimicResult presetCall(const char* function, Body&& body) {
  try {
    return body();
  } catch (const ApiError& e) {
    return recordFailure(function, e.result(), e.message());
  } catch (const mimic::sim::ConfigError& e) {
    return recordFailure(function, configErrorResult(e), e.what());
  } catch (const std::bad_alloc&) {
    return recordFailure(function, MIMIC_ERROR_HOST_OUT_OF_MEMORY, "host memory exhausted");
  }
}

}  // namespace

extern "C" {

mimicResult mimicPresetGetCount(int* count) {
  return presetCall(__func__, [&] {
    requireNotNull(count, "count");
    *count = static_cast<int>(presetNames().size());
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicPresetGetName(int index, const char** name) {
  return presetCall(__func__, [&] {
    requireNotNull(name, "name");
    const auto& names = presetNames();
    if (index < 0 || index >= static_cast<int>(names.size())) {
      fail(MIMIC_ERROR_INVALID_VALUE,
           "index " + std::to_string(index) + " is outside 0.." + std::to_string(names.size() - 1));
    }
    *name = names[index];
    return MIMIC_SUCCESS;
  });
}

mimicResult mimicPresetDescribe(const char* preset, const char* overrides, mimicPresetParam* params,
                                int capacity, int* count) {
  return presetCall(__func__, [&] {
    requireNotNull(preset, "preset");
    requireNotNull(count, "count");
    if (capacity < 0) fail(MIMIC_ERROR_INVALID_VALUE, "capacity is negative");
    if (capacity > 0) requireNotNull(params, "params");

    const mimic::sim::Preset base = mimic::sim::Preset::load(preset);
    mimic::sim::Preset chosen = base;
    mimic::sim::Preset onlyOverrides;  // which fields the overrides name, whatever their value
    if (overrides) {
      chosen.applyOverrides(overrides);
      onlyOverrides.applyOverrides(overrides);
    }
    mimic::sim::SystemConfig::read(chosen);  // the same checks as mimicInit

    const std::vector<mimic::sim::ParamSpec> specs = mimic::sim::SystemConfig::describe();
    const int written = std::min(capacity, static_cast<int>(specs.size()));
    for (int i = 0; i < written; ++i) {
      const mimic::sim::ParamSpec& spec = specs[i];
      mimicPresetParam p{};
      const std::string presetValue = valueOr(base, spec.name, spec.defaultValue);
      copyField(p.field, spec.name, spec.name);
      copyField(p.value, valueOr(chosen, spec.name, presetValue), spec.name);
      copyField(p.presetValue, presetValue, spec.name);
      copyField(p.defaultValue, spec.defaultValue, spec.name);
      copyField(p.description, spec.description, spec.name);
      copyField(p.source, chosen.sourceOf(spec.name), spec.name, "source");
      p.setByPreset = base.values().count(spec.name) ? 1 : 0;
      p.overridden = onlyOverrides.values().count(spec.name) ? 1 : 0;
      params[i] = p;
    }
    *count = static_cast<int>(specs.size());
    return MIMIC_SUCCESS;
  });
}

}  // extern "C"
