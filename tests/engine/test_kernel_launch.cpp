// Module loading, kernel launch arguments and results, and the faults kernels raise.
#include <cstring>

#include "engine_test.h"
#include "scale_kernels.h"

namespace {

struct Buffers {
  explicit Buffers(size_t floats) : host(floats), bytes(floats * sizeof(float)) {
    for (size_t i = 0; i < floats; ++i) host[i] = float(i) * 0.5f;
    dst = deviceAlloc(bytes);
    src = deviceAlloc(bytes);
    EXPECT_EQ(mimicMemcpy(src, host.data(), bytes), MIMIC_SUCCESS);
  }
  std::vector<float> readDst() {
    std::vector<float> out(host.size());
    EXPECT_EQ(mimicMemcpy(out.data(), dst, bytes), MIMIC_SUCCESS);
    return out;
  }
  std::vector<float> host;
  size_t bytes;
  void* dst;
  void* src;
};

struct Args {
  void* dst;
  void* src;
};

TEST_F(DriverTest, KernelComputesOnEveryWorkgroup) {
  mimicFunction fn = assembleFunction(kScaleKernels, "scale2");
  Buffers buffers(256 * 8);
  Args args{buffers.dst, buffers.src};
  ASSERT_OK(mimicLaunchKernel(fn, {8, 1, 1}, &args, sizeof args, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(0));
  std::vector<float> out = buffers.readDst();
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], buffers.host[i] * 2) << i;
}

TEST_F(DriverTest, KernelCountersReportTheWork) {
  mimicFunction fn = assembleFunction(kScaleKernels, "scale2");
  Buffers buffers(256 * 8);
  Args args{buffers.dst, buffers.src};
  mimicQueue q = newQueue();
  ASSERT_OK(mimicLaunchKernel(fn, {8, 1, 1}, &args, sizeof args, q));
  mimicKernelCounters c{};
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueGetKernelCounters(q, &c));
  ASSERT_OK(mimicQueueSynchronize(q));
  ASSERT_OK(mimicQueueGetKernelCounters(q, &c));
  EXPECT_EQ(c.workgroups, 8u);
  EXPECT_EQ(c.flops, 8u * 256);
  EXPECT_EQ(c.hbmBytesRead, 8u * 1024);
  EXPECT_EQ(c.hbmBytesWritten, 8u * 1024);
  EXPECT_EQ(c.instructions[MIMIC_PIPE_VECTOR], 8u);
  EXPECT_EQ(c.instructions[MIMIC_PIPE_DMA], 8u * 5);  // desc, load, wait, store, wait
  EXPECT_GT(c.endNs, c.startNs);
  EXPECT_GT(c.cycles, 0u);
  for (double busy : c.busy) {
    EXPECT_GE(busy, 0.0);
    EXPECT_LE(busy, 1.0);
  }
  EXPECT_GT(c.busy[MIMIC_PIPE_VECTOR], 0.0);
}

TEST_F(DriverTest, EmptyKernelCompletesAfterTheLaunchLatency) {
  mimicFunction fn = assembleFunction(kScaleKernels, "empty");
  mimicEvent start = newEvent(), end = newEvent();
  ASSERT_OK(mimicEventRecord(start, nullptr));
  ASSERT_OK(mimicLaunchKernel(fn, {1, 1, 1}, nullptr, 0, nullptr));
  ASSERT_OK(mimicEventRecord(end, nullptr));
  uint64_t elapsed = timestampOf(end) - timestampOf(start);
  EXPECT_GE(elapsed, propertiesOf().commandLatencyNs);
  EXPECT_LT(elapsed, propertiesOf().commandLatencyNs + 100);
}

TEST_F(DriverTest, ModuleLoadRejectsBadImages) {
  mimicModule m = nullptr;
  std::vector<uint8_t> image = imageOf(mimic::isa::assemble(kScaleKernels));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicModuleLoad(0, nullptr, 10, &m));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicModuleLoad(0, image.data(), image.size(), nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicModuleLoad(0, image.data(), 0, &m));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicModuleLoad(5, image.data(), image.size(), &m));
  const char garbage[] = "this is not a module image at all";
  EXPECT_RESULT(MIMIC_ERROR_INVALID_IMAGE, mimicModuleLoad(0, garbage, sizeof garbage, &m));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_IMAGE, mimicModuleLoad(0, image.data(), image.size() / 2, &m));
  std::vector<uint8_t> future = image;
  future[8] = 99;  // the version follows the 8-byte magic
  EXPECT_RESULT(MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION,
                mimicModuleLoad(0, future.data(), future.size(), &m));
  EXPECT_EQ(m, nullptr);
}

TEST_F(DriverTest, FunctionsAreFoundByName) {
  std::vector<uint8_t> image = imageOf(mimic::isa::assemble(kScaleKernels));
  mimicModule m = nullptr;
  ASSERT_OK(mimicModuleLoad(0, image.data(), image.size(), &m));
  mimicFunction fn = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicModuleGetFunction(m, "empty", &fn));
  EXPECT_RESULT(MIMIC_ERROR_FUNCTION_NOT_FOUND, mimicModuleGetFunction(m, "scale3", &fn));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicModuleGetFunction(m, nullptr, &fn));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicModuleGetFunction(m, "empty", nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_MODULE, mimicModuleGetFunction(nullptr, "empty", &fn));
  ASSERT_OK(mimicModuleUnload(m));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_MODULE, mimicModuleUnload(m));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_MODULE, mimicModuleGetFunction(m, "empty", &fn));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FUNCTION,
                mimicLaunchKernel(fn, {1, 1, 1}, nullptr, 0, nullptr));
}

TEST_F(DriverTest, LaunchValidatesGridArgumentsAndQueue) {
  mimicFunction fn = assembleFunction(kScaleKernels, "scale2");
  Buffers buffers(256);
  Args args{buffers.dst, buffers.src};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FUNCTION,
                mimicLaunchKernel(nullptr, {1, 1, 1}, &args, sizeof args, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_GRID,
                mimicLaunchKernel(fn, {0, 1, 1}, &args, sizeof args, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_GRID,
                mimicLaunchKernel(fn, {65536, 65536, 2}, &args, sizeof args, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_ARGUMENT_SIZE,
                mimicLaunchKernel(fn, {1, 1, 1}, &args, 8, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER,
                mimicLaunchKernel(fn, {1, 1, 1}, nullptr, sizeof args, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE,
                mimicLaunchKernel(fn, {1, 1, 1}, &args, sizeof args, newQueue(1)));
  mimicQueue destroyed = newQueue();
  ASSERT_OK(mimicQueueDestroy(destroyed));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE,
                mimicLaunchKernel(fn, {1, 1, 1}, &args, sizeof args, destroyed));
  mimicKernelCounters c;
  EXPECT_RESULT(MIMIC_ERROR_NO_KERNEL, mimicQueueGetKernelCounters(newQueue(), &c));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicQueueGetKernelCounters(nullptr, nullptr));
}

// Launches `text`'s kernel "k" with (dst, src) of 256 floats each and synchronizes.
mimicResult launchFaulty(const std::string& text, mimicDim3 grid = {1, 1, 1}) {
  mimicFunction fn = assembleFunction(text, "k");
  Buffers buffers(256);
  Args args{buffers.dst, buffers.src};
  EXPECT_EQ(mimicLaunchKernel(fn, grid, &args, sizeof args, nullptr), MIMIC_SUCCESS);
  return mimicDeviceSynchronize(0);
}

std::string withBody(const std::string& body) {
  return ".kernel k 16\n  arg s1, 0\n  arg s2, 1\n  li s7, 256\n  li s8, 4\n"
         "  dma.desc.f32 d0, 0, s7, s8, s8\n  li s9, 0\n" +
         body + "  exit\n.end\n";
}

void expectStickyDetail(mimicResult code, const char* fragment) {
  std::string detail = errorDetail();
  EXPECT_NE(detail.find("kernel 'k'"), std::string::npos) << detail;
  EXPECT_NE(detail.find("workgroup (0,0,0)"), std::string::npos) << detail;
  EXPECT_NE(detail.find(fragment), std::string::npos) << detail;
  // Sticky: every later call on the device fails the same way, the other device works.
  void* p = nullptr;
  EXPECT_RESULT(code, mimicMemAlloc(0, 64, &p));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(1, 64, &p));
  ASSERT_OK(mimicDeviceReset(0));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, 64, &p));
}

TEST_F(DriverTest, OutOfBoundsDmaIsAnIllegalAddress) {
  // The second workgroup reads past the end of the 1 KiB source.
  EXPECT_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS,
                launchFaulty(withBody("  wgid s3, 0\n  salu.mul s3, s3, #1024\n"
                                      "  salu.add s2, s2, s3\n  dma.load s10, s9, s2, d0\n"
                                      "  wait s10\n"),
                             {2, 1, 1}));
  std::string detail = errorDetail();
  EXPECT_NE(detail.find("workgroup (1,0,0)"), std::string::npos) << detail;
  EXPECT_NE(detail.find("dma.load"), std::string::npos) << detail;
  EXPECT_NE(detail.find("HBM range [0x"), std::string::npos) << detail;
}

TEST_F(DriverTest, ScratchpadOutsideItsSizeIsAnIllegalAddress) {
  EXPECT_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS,
                launchFaulty(withBody("  li s9, 65280\n  dma.load s10, s9, s2, d0\n")));
  expectStickyDetail(MIMIC_ERROR_ILLEGAL_ADDRESS, "outside the 65536-byte scratchpad");
}

TEST_F(DriverTest, ReadingScratchpadWhileADmaFillsItIsAHazard) {
  EXPECT_RESULT(MIMIC_ERROR_SCRATCHPAD_HAZARD,
                launchFaulty(withBody("  dma.load s10, s9, s2, d0\n"
                                      "  vbins.mul.f32 s9, s9, #2.0, s7\n")));
  expectStickyDetail(MIMIC_ERROR_SCRATCHPAD_HAZARD, "in flight");
}

TEST_F(DriverTest, MisalignedOperandsFault) {
  EXPECT_RESULT(MIMIC_ERROR_MISALIGNED_ADDRESS,
                launchFaulty(withBody("  salu.add s2, s2, #2\n  dma.load s10, s9, s2, d0\n")));
  expectStickyDetail(MIMIC_ERROR_MISALIGNED_ADDRESS, "not aligned");
}

TEST(EngineWatchdogTest, RunawayKernelIsStoppedByTheWatchdog) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "compute.watchdog_instructions=10000"));
  EXPECT_RESULT(MIMIC_ERROR_LAUNCH_TIMEOUT, launchFaulty(".kernel k 16\ntop:\n  br top\n.end\n"));
  EXPECT_NE(errorDetail().find("watchdog"), std::string::npos) << errorDetail();
}

}  // namespace
