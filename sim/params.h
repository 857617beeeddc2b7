// Named, documented parameters that configure the device model.
//
// Every unit of the model declares the parameters it uses, where it uses them, through a
// ParamReader: name, default and description. A preset supplies values; whatever a preset sets
// that no unit declared is an error naming the field, so typos never pass silently.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimic::sim {

class Preset;

// Raised for any configuration problem; `kind` lets the driver map it to a distinct result code.
class ConfigError : public std::runtime_error {
 public:
  enum class Kind { UnknownPreset, UnknownField, InvalidValue };
  ConfigError(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct ParamSpec {
  std::string name;
  std::string defaultValue;
  std::string description;
};

// Parses "64", "64KiB", "16 GiB", "1.5e9" and the like into a byte or plain count.
uint64_t parseSize(const std::string& text, const std::string& fieldName);
double parseNumber(const std::string& text, const std::string& fieldName);
// Throws ConfigError(InvalidValue) naming the field when `value` is not above zero.
void requirePositive(const std::string& fieldName, double value);

class ParamReader {
 public:
  explicit ParamReader(const Preset& preset);

  uint64_t size(const std::string& name, uint64_t defaultValue, const std::string& description);
  double number(const std::string& name, double defaultValue, const std::string& description);
  std::string choice(const std::string& name, const std::string& defaultValue,
                     const std::vector<std::string>& allowed, const std::string& description);
  std::string text(const std::string& name, const std::string& defaultValue,
                   const std::string& description);
  // The share of a peak bandwidth that transfers reach (protocol and refresh overheads):
  // above 0, at most 1; 1 by default.
  double efficiency(const std::string& name, const std::string& description);

  // Throws ConfigError(UnknownField) naming the first field the preset set that no unit read.
  void rejectUnknownFields() const;
  const std::vector<ParamSpec>& specs() const { return specs_; }

 private:
  const std::string* lookup(const std::string& name, const std::string& defaultValue,
                            const std::string& description);

  const Preset& preset_;
  std::vector<ParamSpec> specs_;
  std::map<std::string, bool> used_;
};

}  // namespace mimic::sim
