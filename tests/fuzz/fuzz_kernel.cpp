// Kernels built from arbitrary bytes, run on the device: every instruction is decoded through
// the ISA's operand table (sim/isa/mnemonics.h), so each program is valid and loads, yet its
// registers, addresses, counts, strides, shapes and branches are whatever the input makes
// them. The kernel runs on a small grid with arguments pointing at real allocations (and past
// them) plus arbitrary values. Every result must be success or a documented kernel fault, which
// is sticky: mimicDeviceReset clears it. Nothing may crash, hang or upset a sanitizer.
//
// Nothing runs away: the watchdog (compute.watchdog_instructions, set low here) counts every
// instruction, every row of a vector instruction and every element of a DMA, so an input does
// at most kWatchdog of those per workgroup (a row holds at most a scratchpad of elements).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

#include "mimic/mimic.h"
#include "sim/isa/mnemonics.h"
#include "sim/isa/module_image.h"
#include "sim/isa/validate.h"

namespace {

using namespace mimic::isa;

constexpr int kWatchdog = 2048;
constexpr size_t kMaxInstructions = 64;
constexpr int kArgSlots = 8;
constexpr size_t kBufferBytes[] = {256, 4096, 64 * 1024};

// Reads the input a few bytes at a time; past its end, zeros.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  uint64_t word() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= uint64_t(byte()) << (8 * i);
    return value;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// Immediates that make sizes, strides and addresses worth trying, else any 64 bits.
int64_t integer(Input& in) {
  static const int64_t kInteresting[] = {
      0,    1,  2,  3,    4,     7,       8,         16,        64,        256,       1024,
      4096, -1, -4, -256, 65536, 1 << 20, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 1ll << 40};
  const uint8_t choice = in.byte();
  constexpr size_t kCount = sizeof kInteresting / sizeof kInteresting[0];
  if (choice < 128) return choice % 32;
  if (choice < 128 + kCount * 4) return kInteresting[(choice - 128) % kCount];
  return int64_t(in.word());
}

// An immediate of `type`, stored as the ISA stores it (validate.cpp's typedImmFits).
int64_t typedImmediate(Input& in, DType type) {
  const int64_t value = integer(in);
  switch (type) {
    case DType::F32:
      return int64_t(uint32_t(value));
    case DType::F16:
    case DType::BF16:
      return int64_t(uint16_t(value));
    case DType::I32:
      return int64_t(int32_t(value));
    case DType::U8:
      return int64_t(uint8_t(value));
    case DType::I8:
      return int64_t(int8_t(value));
    case DType::I16:
      return int64_t(int16_t(value));
    case DType::I64:
    case DType::F64:
      break;
  }
  return value;
}

DType pickType(Input& in, Opcode op, uint8_t sub) {
  std::vector<DType> allowed;
  for (int t = 0; t < kNumDTypes; ++t)
    if (typeAllowed(op, sub, DType(t))) allowed.push_back(DType(t));
  return allowed[in.byte() % allowed.size()];
}

Instr decodeInstr(Input& in, size_t codeSize) {
  Instr instr;
  instr.op = Opcode(in.byte() % kNumOpcodes);
  const OpFormat& format = opFormat(instr.op);
  if (format.sub != SubKind::None) instr.sub = uint8_t(in.byte() % subCount(format.sub));
  if (format.numTypes > 0) instr.type = pickType(in, instr.op, instr.sub);
  if (format.numTypes > 1) instr.type2 = DType(in.byte() % kNumDTypes);
  if (hasScalarOperand(format) && in.byte() % 2) instr.flags = kImmOperand;
  for (int i = 0; i < format.numOperands; ++i) {
    const Operand& operand = format.operands[i];
    switch (operand.kind) {
      case OperandKind::Reg:
        setRegField(instr, operand.field, uint8_t(in.byte() % kNumScalarRegs));
        break;
      case OperandKind::Desc:
        setRegField(instr, operand.field, uint8_t(in.byte() % kNumDescriptors));
        break;
      case OperandKind::Int:
        instr.imm = integer(in);
        break;
      case OperandKind::ArgIndex:
        instr.imm = in.byte() % kArgSlots;
        break;
      case OperandKind::GridDim:
        instr.imm = in.byte() % 3;
        break;
      case OperandKind::DmaDim:
        instr.imm = in.byte() % kDmaDims;
        break;
      case OperandKind::Target:
        instr.imm = int64_t(in.byte() % codeSize);
        break;
      case OperandKind::RegOrInt:
      case OperandKind::RegOrTyped:
        if (instr.flags & kImmOperand) {
          instr.imm =
              operand.kind == OperandKind::RegOrInt ? integer(in) : typedImmediate(in, instr.type);
        } else {
          setRegField(instr, operand.field, uint8_t(in.byte() % kNumScalarRegs));
        }
        break;
    }
  }
  return instr;
}

[[noreturn]] void failWith(const char* what, mimicResult result) {
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  std::fprintf(stderr, "%s returned %s: %s\n", what, mimicGetErrorName(result), detail);
  std::abort();
}

void expect(const char* what, mimicResult result, std::initializer_list<mimicResult> allowed) {
  if (result == MIMIC_SUCCESS) return;
  for (mimicResult r : allowed)
    if (r == result) return;
  failWith(what, result);  // an answer the documentation does not list
}

// The sticky errors a kernel's own instructions can cause (mimic.h).
const std::initializer_list<mimicResult> kKernelFaults = {
    MIMIC_ERROR_ILLEGAL_ADDRESS, MIMIC_ERROR_MISALIGNED_ADDRESS, MIMIC_ERROR_SCRATCHPAD_HAZARD,
    MIMIC_ERROR_ILLEGAL_INSTRUCTION, MIMIC_ERROR_LAUNCH_TIMEOUT};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool initialised =
      mimicInitWithPreset(0, "tiny",
                          ("compute.watchdog_instructions=" + std::to_string(kWatchdog)).c_str()) ==
      MIMIC_SUCCESS;
  if (!initialised) std::abort();
  Input in(data, size);

  Function fn;
  fn.name = "fuzz";
  fn.argBytes = 8 * kArgSlots;
  const size_t codeSize = 1 + in.byte() % kMaxInstructions;
  while (fn.code.size() < codeSize) fn.code.push_back(decodeInstr(in, codeSize));
  std::vector<uint8_t> image;
  try {
    image = encodeImage(Module{{fn}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the decoder made an invalid program: %s\n", e.what());
    std::abort();
  }
  mimicModule module = nullptr;
  mimicFunction function = nullptr;
  expect("mimicModuleLoad", mimicModuleLoad(0, image.data(), image.size(), &module), {});
  expect("mimicModuleGetFunction", mimicModuleGetFunction(module, "fuzz", &function), {});

  // Arguments: each buffer's start, a pointer somewhere into or past one, and raw values.
  std::vector<void*> buffers;
  int64_t args[kArgSlots] = {};
  for (size_t bytes : kBufferBytes) {
    void* buffer = nullptr;
    expect("mimicMemAlloc", mimicMemAlloc(0, bytes, &buffer), {});
    expect("mimicMemsetAsync", mimicMemsetAsync(buffer, in.byte(), bytes, nullptr), {});
    args[buffers.size()] = int64_t(reinterpret_cast<intptr_t>(buffer));
    buffers.push_back(buffer);
  }
  args[3] = args[in.byte() % 3] + int64_t(in.word() % (2 * 64 * 1024));
  for (int slot = 4; slot < kArgSlots; ++slot) args[slot] = integer(in);
  const mimicDim3 grid = {1u + in.byte() % 3, 1u + in.byte() % 2, 1};

  expect("mimicLaunchKernel", mimicLaunchKernel(function, grid, args, sizeof args, nullptr), {});
  const mimicResult result = mimicDeviceSynchronize(0);
  expect("the kernel", result, kKernelFaults);
  if (result == MIMIC_SUCCESS) {
    for (void* buffer : buffers) expect("mimicMemFree", mimicMemFree(buffer), {});
  } else {
    // Sticky until reset, which frees every allocation and leaves the device healthy.
    expect("mimicDeviceReset", mimicDeviceReset(0), {});
    expect("mimicDeviceSynchronize after reset", mimicDeviceSynchronize(0), {});
  }
  expect("mimicModuleUnload", mimicModuleUnload(module), {});
  return 0;
}
