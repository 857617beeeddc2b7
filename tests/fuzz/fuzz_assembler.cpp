// The assembler on arbitrary text: it either returns a module, which then validates, encodes
// and decodes back to the same image, or throws std::exception. Never anything else.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "sim/isa/assembler.h"
#include "sim/isa/module_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mimic::isa::Module module;
  try {
    module = mimic::isa::assemble(text);
  } catch (const std::exception&) {
    return 0;  // a rejected program: the message names the line
  }
  const std::vector<uint8_t> image = mimic::isa::encodeImage(module);
  const std::vector<uint8_t> again =
      mimic::isa::encodeImage(mimic::isa::decodeImage(image.data(), image.size()));
  if (again != image) std::abort();  // an image must survive a round trip
  return 0;
}
