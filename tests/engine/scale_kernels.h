// Two small kernels in assembler text, shared by the engine tests and the stress program:
//   scale2 (16 bytes of arguments: dst, src): each workgroup doubles 256 floats,
//          dst[wg * 256 + i] = 2 * src[wg * 256 + i];
//   empty  (no arguments): exits at once.
#pragma once

inline constexpr const char* kScaleKernels = R"(
.kernel scale2 16
  arg s1, 0
  arg s2, 1
  wgid s3, 0
  salu.mul s4, s3, #1024
  salu.add s5, s2, s4
  salu.add s6, s1, s4
  li s7, 256
  li s8, 4
  dma.desc.f32 d0, 0, s7, s8, s8
  li s9, 0
  dma.load s10, s9, s5, d0
  wait s10
  vbins.mul.f32 s9, s9, #2.0, s7
  dma.store s11, s6, s9, d0
  wait s11
  exit
.end
.kernel empty 0
  exit
.end
)";
