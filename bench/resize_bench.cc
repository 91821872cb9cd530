// The resize kernels side by side in one run: portable (the scalar loops, as before the
// SIMD kernels), SSE4.1, AVX2 and AVX-512 VNNI (those the CPU has), on 500x375 -> 224x224 (a crop of a real photo) and on
// real photographs -> 224x224 (hymenoptera: 397 ImageNet photos; photos-by-class: 47
// photos of 640 to 1920 pixels). Rounds alternate the kernels; prints each kernel's
// median rate and its ratio to portable. Rates are per second of this thread's CPU
// time, so that time spent descheduled on a busy machine does not count. Usage:
// resize_bench [ROUNDS] (default 7).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "image/codec.h"
#include "image/resize.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/median.h"

namespace imgpipe {
namespace {

// Decodes every image under `dir` (recursively); skips what does not decode.
void DecodeAll(const std::string& dir, std::vector<Image>& out) {
  for (const std::string& name : ListDirectory(dir)) {
    const std::string path = JoinPath(dir, name);
    if (IsDirectory(path)) {
      DecodeAll(path, out);
      continue;
    }
    try {
      out.push_back(DecodeImage(ReadFile(path), path));
    } catch (const Error&) {
      // Not an image (a list file, a placeholder): not part of the set.
    }
  }
}

// One workload: the images resized to 224x224, `repeat` times each per round.
struct Workload {
  std::string name;
  std::vector<Image> images;
  int repeat = 1;
};

// Returns images per CPU second of one round of `w` under `kernel`.
double RoundRate(const Workload& w, ResizeKernel kernel, std::vector<uint8_t>& out) {
  SetResizeKernel(kernel);
  const double start = ThreadCpuSeconds();
  for (int r = 0; r < w.repeat; ++r) {
    for (const Image& image : w.images) {
      ResizeInto(image.pixels.data(), image.width, image.height, image.row_bytes(), 3,
                 out.data(), 224, 224, 224 * 3);
    }
  }
  const double seconds = ThreadCpuSeconds() - start;
  return static_cast<double>(w.repeat) * w.images.size() / seconds;
}

// Runs `rounds` rounds of every kernel, in a rotating order; prints medians and ratios.
void Run(const Workload& w, int rounds) {
  const std::vector<ResizeKernel> kernels = AvailableResizeKernels();
  std::vector<uint8_t> out(224 * 224 * 3);
  std::vector<std::vector<double>> rates(kernels.size());
  RoundRate(w, kernels.back(), out);  // warm-up: page faults, coefficient cache
  for (int round = 0; round < rounds; ++round) {
    for (size_t j = 0; j < kernels.size(); ++j) {
      const size_t k = (j + round) % kernels.size();
      rates[k].push_back(RoundRate(w, kernels[k], out));
    }
  }
  std::printf("%s (%zu images, median of %d rounds)\n", w.name.c_str(), w.images.size(),
              rounds);
  const double base = Median(rates[0]);
  for (size_t k = 0; k < kernels.size(); ++k) {
    const double median = Median(rates[k]);
    std::printf("  %-9s %9.0f images per CPU second  %5.2fx portable\n",
                ResizeKernelName(kernels[k]), median, median / base);
  }
  SetResizeKernel(ResizeKernel::kAuto);
}

int Main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::string images = JoinPath(IMGPIPE_TESTDATA_DIR, "images");
  Workload by_class{"photos-by-class -> 224x224", {}, 1};
  DecodeAll(JoinPath(images, "photos-by-class"), by_class.images);
  Workload hymenoptera{"hymenoptera -> 224x224", {}, 1};
  DecodeAll(JoinPath(images, "hymenoptera"), hymenoptera.images);
  // 500x375: the top-left of the first photo at least that large.
  Workload imagenet{"500x375 -> 224x224 (a crop of a photos-by-class photo)", {}, 200};
  for (const Image& p : by_class.images) {
    if (p.width < 500 || p.height < 375) continue;
    Image crop;
    crop.width = 500;
    crop.height = 375;
    crop.channels = 3;
    for (int y = 0; y < 375; ++y) {
      crop.pixels.insert(crop.pixels.end(), p.row(y), p.row(y) + 500 * 3);
    }
    imagenet.images.push_back(std::move(crop));
    break;
  }
  for (const Workload* w : {&imagenet, &hymenoptera, &by_class}) {
    if (w->images.empty()) {
      std::fprintf(stderr, "%s: no images under %s\n", w->name.c_str(), images.c_str());
      return 1;
    }
    Run(*w, rounds);
  }
  return 0;
}

}  // namespace
}  // namespace imgpipe

int main(int argc, char** argv) { return imgpipe::Main(argc, argv); }
