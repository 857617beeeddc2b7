#include "sim/params.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "sim/preset.h"

namespace mimic::sim {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

[[noreturn]] void invalid(const std::string& field, const std::string& text,
                          const std::string& expected) {
  throw ConfigError(ConfigError::Kind::InvalidValue,
                    "invalid value '" + text + "' for field '" + field + "': expected " + expected);
}

}  // namespace

double parseNumber(const std::string& text, const std::string& fieldName) {
  std::string t = trim(text);
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(t, &used);
  } catch (const std::exception&) {
    invalid(fieldName, text, "a number");
  }
  if (used != t.size() || !std::isfinite(value) || value < 0) {
    invalid(fieldName, text, "a non-negative number");
  }
  return value;
}

void requirePositive(const std::string& fieldName, double value) {
  if (!(value > 0)) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "field '" + fieldName + "' must be greater than zero");
  }
}

uint64_t parseSize(const std::string& text, const std::string& fieldName) {
  static const std::pair<const char*, double> kSuffixes[] = {
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
      {"K", 1024.0},   {"M", 1048576.0},   {"G", 1073741824.0},   {"B", 1.0}};
  std::string t = trim(text);
  double scale = 1.0;
  for (const auto& [suffix, factor] : kSuffixes) {
    std::string s(suffix);
    if (t.size() > s.size() && t.compare(t.size() - s.size(), s.size(), s) == 0) {
      scale = factor;
      t = trim(t.substr(0, t.size() - s.size()));
      break;
    }
  }
  double value = parseNumber(t, fieldName) * scale;
  if (value != std::floor(value) || value > 1.8e19) {
    invalid(fieldName, text, "a whole number (suffixes KiB, MiB, GiB, TiB allowed)");
  }
  return static_cast<uint64_t>(value);
}

ParamReader::ParamReader(const Preset& preset) : preset_(preset) {
  for (const auto& [name, value] : preset.values()) used_[name] = false;
}

const std::string* ParamReader::lookup(const std::string& name, const std::string& defaultValue,
                                       const std::string& description) {
  specs_.push_back({name, defaultValue, description});
  auto it = preset_.values().find(name);
  if (it == preset_.values().end()) return nullptr;
  used_[name] = true;
  return &it->second;
}

uint64_t ParamReader::size(const std::string& name, uint64_t defaultValue,
                           const std::string& description) {
  const std::string* v = lookup(name, std::to_string(defaultValue), description);
  return v ? parseSize(*v, name) : defaultValue;
}

double ParamReader::number(const std::string& name, double defaultValue,
                           const std::string& description) {
  std::ostringstream def;
  def << defaultValue;
  const std::string* v = lookup(name, def.str(), description);
  return v ? parseNumber(*v, name) : defaultValue;
}

double ParamReader::efficiency(const std::string& name, const std::string& description) {
  const double e = number(name, 1.0, description);
  if (!(e > 0 && e <= 1)) {
    throw ConfigError(
        ConfigError::Kind::InvalidValue,
        "field '" + name + "' is an efficiency: above 0 and at most 1, not " + std::to_string(e));
  }
  return e;
}

std::string ParamReader::choice(const std::string& name, const std::string& defaultValue,
                                const std::vector<std::string>& allowed,
                                const std::string& description) {
  std::string options;
  for (const auto& a : allowed) options += (options.empty() ? "" : "|") + a;
  const std::string* v = lookup(name, defaultValue, description + " (" + options + ")");
  if (!v) return defaultValue;
  std::string value = trim(*v);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    invalid(name, value, "one of " + options);
  }
  return value;
}

std::string ParamReader::text(const std::string& name, const std::string& defaultValue,
                              const std::string& description) {
  const std::string* v = lookup(name, defaultValue, description);
  return v ? trim(*v) : defaultValue;
}

void ParamReader::rejectUnknownFields() const {
  for (const auto& [name, wasUsed] : used_) {
    if (!wasUsed) {
      throw ConfigError(ConfigError::Kind::UnknownField,
                        "unknown field '" + name + "' (set by " + preset_.originOf(name) + ")");
    }
  }
}

}  // namespace mimic::sim
