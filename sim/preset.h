// A preset: a named set of parameter values that describes a whole simulated system.
//
// Presets are small text files ("field = value", '#' comments, "inherit = other" to start from
// another preset). A comment at the end of a value's line is that value's source
// ("hbm.bandwidth_gbps = 2039   # NVIDIA A100 datasheet"); since '#' starts a comment, a value
// cannot hold one. The files in sim/presets/ are compiled into the library, so a preset can be
// named anywhere; a path (anything containing '/' or ending in ".preset") loads a file instead.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace mimic::sim {

class Preset {
 public:
  // Loads a built-in preset by name or a preset file by path; throws ConfigError naming it.
  static Preset load(const std::string& nameOrPath);
  static std::vector<std::string> builtinNames();

  // Applies "field=value,field=value" on top of the preset; throws ConfigError on bad syntax.
  void applyOverrides(const std::string& overrides);
  // source: where the value comes from (a datasheet, a paper), "" if not given.
  void set(const std::string& field, const std::string& value, const std::string& origin,
           const std::string& source = "");

  const std::string& name() const { return name_; }
  const std::map<std::string, std::string>& values() const { return values_; }
  // Where a field's value came from ("preset 'a100'", "override"), for error messages.
  std::string originOf(const std::string& field) const;
  // The source of a field's value: the trailing comment of the line that set it (a field a
  // parent preset set keeps the parent's), "override" for an override, "" if none was given.
  std::string sourceOf(const std::string& field) const;

 private:
  void parse(const std::string& text, const std::string& source, int depth);

  std::string name_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> origins_;
  std::map<std::string, std::string> sources_;
};

}  // namespace mimic::sim
