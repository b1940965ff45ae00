// The 16-bit element types the kernels are compiled for (runtime tag for dispatch).
#pragma once

namespace dash {

enum class DType : int { kBF16 = 0, kFP16 = 1 };

}  // namespace dash
