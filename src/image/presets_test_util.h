// Test helpers for the presets: their outputs as images.
#pragma once

#include <cstdint>
#include <string>

#include "image/image.h"
#include "image/presets.h"

namespace imgpipe {

// The train preset's uint8 output for `bytes` and `seed`, as a size x size RGB image.
inline Image TrainPresetUint8(const std::string& bytes, TrainPreset preset, uint64_t seed) {
  preset.layout = OutputLayout::kUint8Nhwc;
  Image out;
  out.width = out.height = preset.size;
  out.channels = 3;
  out.pixels.resize(OutputBytes(preset.layout, preset.size));
  ApplyTrainPreset(bytes, "train.jpg", preset, seed, out.pixels.data());
  return out;
}

}  // namespace imgpipe
