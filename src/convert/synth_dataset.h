// A generated, labelled image set: real JPEG files whose content depends on the class
// (so a model can learn it), in the folder-per-class layout, at any scale.
#pragma once

#include <cstdint>
#include <string>

#include "image/image.h"

namespace imgpipe {

struct SynthOptions {
  std::string out_dir;
  int classes = 10;
  int per_class = 100;
  int width = 256;
  int height = 256;
  uint64_t seed = 0;
  int threads = 0;   // 0: all available CPUs
  int quality = 90;  // JPEG quality
};

struct SynthResult {
  uint64_t images = 0;
  uint64_t bytes = 0;  // JPEG bytes written
};

// Image `index` of class `class_id`: a deterministic function of all arguments.
// Classes differ in colour and pattern; images within a class differ in position,
// scale, phase and noise.
Image MakeSynthImage(int class_id, int num_classes, int index, int width, int height,
                     uint64_t seed);

// "class_007": the folder of class `class_id`, zero-padded to at least 3 digits (more
// when `classes` needs them, so folders sort in class order).
std::string SynthClassFolderName(int class_id, int classes);
// "img_000042.jpg": the file of image `index`, zero-padded to at least 6 digits.
std::string SynthImageFileName(int index, int per_class);

// Writes OUT/class_XXX/img_YYYYYY.jpg for every class and index. Byte-identical
// output for equal options, whatever the thread count. Files are written atomically.
SynthResult WriteSynthDataset(const SynthOptions& options);

}  // namespace imgpipe
