#include "sim/preset.h"

#include <fstream>
#include <sstream>

#include "sim/params.h"
#include "sim/presets_embedded.h"

namespace mimic::sim {
namespace {

constexpr int kMaxInheritDepth = 8;

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool isPath(const std::string& s) {
  return s.find('/') != std::string::npos ||
         (s.size() > 7 && s.compare(s.size() - 7, 7, ".preset") == 0);
}

std::string readPresetText(const std::string& nameOrPath) {
  if (isPath(nameOrPath)) {
    std::ifstream in(nameOrPath);
    if (!in) {
      throw ConfigError(ConfigError::Kind::UnknownPreset,
                        "preset file '" + nameOrPath + "' cannot be read");
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }
  for (const auto& p : embeddedPresets()) {
    if (nameOrPath == p.name) return p.text;
  }
  std::string known;
  for (const auto& name : Preset::builtinNames()) known += (known.empty() ? "" : ", ") + name;
  throw ConfigError(ConfigError::Kind::UnknownPreset,
                    "unknown preset '" + nameOrPath + "' (known presets: " + known + ")");
}

}  // namespace

Preset Preset::load(const std::string& nameOrPath) {
  Preset preset;
  preset.name_ = nameOrPath;
  preset.parse(readPresetText(nameOrPath), nameOrPath, 0);
  return preset;
}

std::vector<std::string> Preset::builtinNames() {
  std::vector<std::string> names;
  for (const auto& p : embeddedPresets()) names.push_back(p.name);
  return names;
}

void Preset::parse(const std::string& text, const std::string& source, int depth) {
  if (depth > kMaxInheritDepth) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "preset '" + source + "' inherits too deeply (a cycle?)");
  }
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    const size_t hash = line.find('#');
    const std::string comment = hash == std::string::npos ? "" : trim(line.substr(hash + 1));
    line = trim(line.substr(0, hash));
    if (line.empty()) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) {
      throw ConfigError(
          ConfigError::Kind::InvalidValue,
          "preset '" + source + "' line " + std::to_string(lineNo) + ": expected 'field = value'");
    }
    std::string field = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (field == "inherit") {
      parse(readPresetText(value), value, depth + 1);
    } else {
      set(field, value, "preset '" + source + "'", comment);
    }
  }
}

void Preset::applyOverrides(const std::string& overrides) {
  std::istringstream in(overrides);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || trim(item.substr(0, eq)).empty()) {
      throw ConfigError(ConfigError::Kind::InvalidValue,
                        "override '" + item + "' is not of the form field=value");
    }
    set(trim(item.substr(0, eq)), trim(item.substr(eq + 1)), "override", "override");
  }
}

void Preset::set(const std::string& field, const std::string& value, const std::string& origin,
                 const std::string& source) {
  values_[field] = value;
  origins_[field] = origin;
  sources_[field] = source;
}

std::string Preset::originOf(const std::string& field) const {
  auto it = origins_.find(field);
  return it == origins_.end() ? "default" : it->second;
}

std::string Preset::sourceOf(const std::string& field) const {
  auto it = sources_.find(field);
  return it == sources_.end() ? "" : it->second;
}

}  // namespace mimic::sim
