// mimic-asm: the command-line assembler and disassembler of the mimic ISA.
//
//   mimic-asm KERNELS.s [-o KERNELS.mimod]   assemble text into a module image
//   mimic-asm -d KERNELS.mimod               print an image as assembly text
//
// Errors are one line on stderr, naming the file and what is wrong; the exit code is 1.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/isa/assembler.h"
#include "sim/isa/disassembler.h"
#include "sim/isa/module_image.h"
#include "sim/isa/validate.h"

namespace {

int usage() {
  std::cerr << "usage: mimic-asm KERNELS.s [-o KERNELS.mimod]\n"
               "       mimic-asm -d KERNELS.mimod\n";
  return 2;
}

bool readFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  *contents = buffer.str();
  return true;
}

std::string withoutExtension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  return dot != std::string::npos && (slash == std::string::npos || dot > slash)
             ? path.substr(0, dot)
             : path;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool disassemble = false;
  std::string input, output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-d") {
      disassemble = true;
    } else if (args[i] == "-o" && i + 1 < args.size()) {
      output = args[++i];
    } else if (!args[i].empty() && args[i][0] == '-') {
      return usage();
    } else if (input.empty()) {
      input = args[i];
    } else {
      return usage();
    }
  }
  if (input.empty() || (disassemble && !output.empty())) return usage();

  std::string contents;
  if (!readFile(input, &contents)) {
    std::cerr << "mimic-asm: cannot read '" << input << "'\n";
    return 1;
  }
  try {
    if (disassemble) {
      mimic::isa::Module module = mimic::isa::decodeImage(contents.data(), contents.size());
      std::string text = mimic::isa::disassemble(module);
      std::cout << text << (text.empty() || text.back() != '\n' ? "\n" : "");
      return 0;
    }
    std::vector<uint8_t> image = mimic::isa::encodeImage(mimic::isa::assemble(contents));
    if (output.empty()) output = withoutExtension(input) + ".mimod";
    std::ofstream out(output, std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.data()), std::streamsize(image.size()));
    if (!out) {
      std::cerr << "mimic-asm: cannot write '" << output << "'\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "mimic-asm: " << input << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
