// How a warp-specialized CTA of one producer warpgroup and kMmaWarpGroups MMA warpgroups
// shares its register file (forward and backward kernels alike).
//
// setmaxnreg only moves registers within the CTA's pool, which the launch bound fixes at
// (65536 / threads, rounded down to 8) per thread: 168 x 384 with two MMA warpgroups, 128 x
// 512 with three. An increase that the pool cannot cover waits forever, so the split must
// fit: 24 x 128 + 240 x 256, or 32 x 128 + 160 x 384 (the defaults). A kernel may give its
// producer warpgroup more (kProducerRegisters, a multiple of 8); its MMA warpgroups then get
// what is left of the pool, rounded down to 8 (40 x 128 + 232 x 256).
#pragma once

namespace dash {

template <int kMmaWarpGroups, int kProducerRegisters = 0>
struct RegisterSplit {
  static_assert(kMmaWarpGroups == 2 || kMmaWarpGroups == 3, "register split for two or three MMA warpgroups");
  static_assert(kProducerRegisters == 0 || (kProducerRegisters % 8 == 0 && kProducerRegisters >= 24),
                "setmaxnreg takes multiples of 8 from 24");
  static constexpr int kThreads = (kMmaWarpGroups + 1) * 128;
  static constexpr int kLaunch = (65536 / kThreads) / 8 * 8;
  static constexpr int kProducer = kProducerRegisters > 0 ? kProducerRegisters : kMmaWarpGroups == 3 ? 32 : 24;
  static constexpr int kMmaPool = (kLaunch * kThreads - kProducer * 128) / (kMmaWarpGroups * 128) / 8 * 8;
  static constexpr int kMma = kMmaPool < 256 ? kMmaPool : 256;
  static_assert(kProducer * 128 + kMma * kMmaWarpGroups * 128 <= kLaunch * kThreads,
                "setmaxnreg split exceeds the CTA's register pool");
};

}  // namespace dash
