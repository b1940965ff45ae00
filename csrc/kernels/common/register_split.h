// How a warp-specialized CTA of one producer warpgroup and kMmaWarpGroups MMA warpgroups
// shares its register file (forward and backward kernels alike).
//
// setmaxnreg only moves registers within the CTA's pool, which the launch bound fixes at
// (65536 / threads, rounded down to 8) per thread: 168 x 384 with two MMA warpgroups, 128 x
// 512 with three. An increase that the pool cannot cover waits forever, so the split must
// fit: 24 x 128 + 240 x 256, or 32 x 128 + 160 x 384.
#pragma once

namespace dash {

template <int kMmaWarpGroups>
struct RegisterSplit {
  static_assert(kMmaWarpGroups == 2 || kMmaWarpGroups == 3, "register split for two or three MMA warpgroups");
  static constexpr int kThreads = (kMmaWarpGroups + 1) * 128;
  static constexpr int kLaunch = (65536 / kThreads) / 8 * 8;
  static constexpr int kProducer = kMmaWarpGroups == 3 ? 32 : 24;
  static constexpr int kMma = kMmaWarpGroups == 3 ? 160 : 240;
  static_assert(kProducer * 128 + kMma * kMmaWarpGroups * 128 <= kLaunch * kThreads,
                "setmaxnreg split exceeds the CTA's register pool");
};

}  // namespace dash
