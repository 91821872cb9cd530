#include "convert/synth_dataset.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include "image/codec.h"
#include "util/error.h"
#include "util/file.h"
#include "util/thread_pool.h"

// Everything below uses integer arithmetic and IEEE +, -, *, /, sqrt and floor only
// (no libm transcendental functions, no std:: distributions), so an image is the same
// on every platform and standard library, provided each operation is rounded as
// written: no contraction into fused multiply-adds (GCC contracts only in GNU modes;
// the project builds in ISO C++20).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace imgpipe {
namespace {

uint64_t SplitMix64Hash(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t Mix(uint64_t a, uint64_t b) { return SplitMix64Hash(a ^ SplitMix64Hash(b)); }

// A counter-based random stream: the n-th draw depends only on (key, n).
class Stream {
 public:
  explicit Stream(uint64_t key) : key_(key) {}
  uint64_t Next() { return Mix(key_, ++counter_); }
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(Next() >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// sin(2 pi i / kSineSize), from a Taylor series on [-pi, pi].
constexpr int kSineBits = 12;
constexpr int kSineSize = 1 << kSineBits;

const std::array<float, kSineSize>& SineTable() {
  static const std::array<float, kSineSize> table = [] {
    std::array<float, kSineSize> t{};
    const double pi = 3.14159265358979323846;
    for (int i = 0; i < kSineSize; ++i) {
      double x = 2 * pi * (i < kSineSize / 2 ? i : i - kSineSize) / kSineSize;
      double term = x, sum = x;
      for (int k = 1; k < 14; ++k) {
        term *= -x * x / ((2 * k) * (2 * k + 1));
        sum += term;
      }
      t[i] = static_cast<float>(sum);
    }
    return t;
  }();
  return table;
}

// sin(2 pi turns).
inline float SinTurns(double turns) {
  auto index = static_cast<int64_t>(std::floor(turns * kSineSize));
  return SineTable()[static_cast<size_t>(index & (kSineSize - 1))];
}

struct Rgb {
  double r, g, b;
};

// HSV (all in [0, 1]) to RGB in [0, 255].
Rgb HsvToRgb(double h, double s, double v) {
  h = (h - std::floor(h)) * 6;
  int sector = std::min(5, static_cast<int>(h));
  double f = h - sector;
  double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r, g, b;
  switch (sector) {
    case 0: r = v; g = t; b = p; break;
    case 1: r = q; g = v; b = p; break;
    case 2: r = p; g = v; b = t; break;
    case 3: r = p; g = q; b = v; break;
    case 4: r = t; g = p; b = v; break;
    default: r = v; g = p; b = q; break;
  }
  return {255 * r, 255 * g, 255 * b};
}

enum class Pattern { kStripes, kChecker, kRings, kWaves };
constexpr int kPatterns = 4;

// What a class looks like: a hue of its own, and a pattern with its own angle and
// frequency, all jittered per image.
struct ClassLook {
  double hue;        // of the foreground; the background takes the opposite hue
  Pattern pattern;
  double angle;      // turns
  double frequency;  // cycles across the image's shorter side
};

ClassLook LookOf(int class_id, int num_classes, uint64_t seed) {
  Stream stream(Mix(Mix(seed, 0x5EED0C1A55ull), static_cast<uint64_t>(class_id)));
  ClassLook look;
  look.hue = (class_id + 0.5) / std::max(1, num_classes);
  look.pattern = static_cast<Pattern>(class_id % kPatterns);
  // Golden-ratio steps keep neighbouring classes' angles far apart.
  double golden = 0.6180339887498949 * class_id + stream.Uniform(0, 0.1);
  look.angle = (golden - std::floor(golden)) * 0.5;
  look.frequency = stream.Uniform(2.0, 5.0);
  return look;
}

uint8_t ToByte(double v) {
  return static_cast<uint8_t>(std::clamp(v, 0.0, 255.0) + 0.5);
}

int DigitsFor(int max_value, int min_digits) {
  int digits = 1;
  for (int v = max_value; v >= 10; v /= 10) ++digits;
  return std::max(digits, min_digits);
}

std::string ZeroPadded(int value, int digits) {
  std::string text = std::to_string(value);
  return std::string(std::max(0, digits - static_cast<int>(text.size())), '0') + text;
}

void CheckOptions(const SynthOptions& o) {
  auto fail = [](const std::string& what) { throw Error("synthetic data set: " + what); };
  if (o.out_dir.empty()) fail("no output folder");
  if (o.classes < 1) fail("classes must be at least 1, not " + std::to_string(o.classes));
  if (o.per_class < 0) fail("per_class must not be negative: " + std::to_string(o.per_class));
  if (o.width < 1 || o.height < 1 || o.width > 65500 || o.height > 65500) {
    fail("size must be 1..65500 pixels a side, not " + std::to_string(o.width) + "x" +
         std::to_string(o.height));
  }
  if (o.quality < 1 || o.quality > 100) fail("quality must be 1..100");
}

}  // namespace

Image MakeSynthImage(int class_id, int num_classes, int index, int width, int height,
                     uint64_t seed) {
  // 1. The class's look, then this image's variation of it.
  const ClassLook look = LookOf(class_id, num_classes, seed);
  const uint64_t image_key =
      Mix(Mix(Mix(seed, 0x1AA6Eull), static_cast<uint64_t>(class_id)), static_cast<uint64_t>(index));
  Stream stream(image_key);
  const double hue_jitter = stream.Uniform(-0.15, 0.15) / std::max(1, num_classes);
  const double shift_x = stream.Uniform(-0.25, 0.25), shift_y = stream.Uniform(-0.25, 0.25);
  const double scale = stream.Uniform(0.8, 1.25);
  const double phase = stream.Uniform(0, 1), phase2 = stream.Uniform(0, 1);
  const double angle = look.angle + stream.Uniform(-0.01, 0.01);
  const double brightness = stream.Uniform(0.75, 1.1);
  // (One draw per statement: the order of evaluation of arguments is unspecified.)
  const double fg_saturation = stream.Uniform(0.7, 0.95);
  const double bg_saturation = stream.Uniform(0.2, 0.4);
  const double bg_value = stream.Uniform(0.15, 0.35);
  const Rgb fg = HsvToRgb(look.hue + hue_jitter, fg_saturation, 1.0);
  const Rgb bg = HsvToRgb(look.hue + hue_jitter + 0.5, bg_saturation, bg_value);
  constexpr int kNoise = 6;  // +-6 levels per sample

  // 2. Pattern coordinates: (u, v) is the pixel's position rotated by `angle`, in
  //    cycles; both advance by a constant step per pixel.
  const double cos_a = SinTurns(angle + 0.25), sin_a = SinTurns(angle);
  const double cycles_per_pixel = look.frequency * scale / std::min(width, height);
  const double cx = width * (0.5 + shift_x), cy = height * (0.5 + shift_y);
  const double du_dx = cos_a * cycles_per_pixel, dv_dx = -sin_a * cycles_per_pixel;

  Image image;
  image.width = width;
  image.height = height;
  image.channels = 3;
  image.pixels.resize(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    double u = ((0 - cx) * cos_a + (y - cy) * sin_a) * cycles_per_pixel;
    double v = (-(0 - cx) * sin_a + (y - cy) * cos_a) * cycles_per_pixel;
    uint8_t* out = image.row(y);
    for (int x = 0; x < width; ++x, u += du_dx, v += dv_dx, out += 3) {
      // 3. Pattern value in [-1, 1].
      double p;
      switch (look.pattern) {
        case Pattern::kStripes:
          p = SinTurns(u + phase);
          break;
        case Pattern::kChecker:
          p = std::clamp(2.5 * SinTurns(u + phase) * SinTurns(v + phase2), -1.0, 1.0);
          break;
        case Pattern::kRings:
          p = SinTurns(std::sqrt(u * u + v * v) + phase);
          break;
        default:  // kWaves: two crossing waves at different frequencies
          p = 0.5 * (SinTurns(u + phase) + SinTurns(1.7 * v + phase2));
          break;
      }
      // 4. Colour between background and foreground, brightness, noise.
      const double t = 0.5 + 0.5 * p;
      const uint64_t noise = SplitMix64Hash(image_key + static_cast<uint64_t>(y) * width + x);
      const double rgb[3] = {bg.r + t * (fg.r - bg.r), bg.g + t * (fg.g - bg.g),
                             bg.b + t * (fg.b - bg.b)};
      for (int c = 0; c < 3; ++c) {
        int n = static_cast<int>((noise >> (16 * c)) % (2 * kNoise + 1)) - kNoise;
        out[c] = ToByte(rgb[c] * brightness + n);
      }
    }
  }
  return image;
}

std::string SynthClassFolderName(int class_id, int classes) {
  return "class_" + ZeroPadded(class_id, DigitsFor(classes - 1, 3));
}

std::string SynthImageFileName(int index, int per_class) {
  return "img_" + ZeroPadded(index, DigitsFor(per_class - 1, 6)) + ".jpg";
}

SynthResult WriteSynthDataset(const SynthOptions& options) {
  CheckOptions(options);
  // 1. Class folders, before any image.
  std::vector<std::string> folders;
  for (int c = 0; c < options.classes; ++c) {
    folders.push_back(JoinPath(options.out_dir, SynthClassFolderName(c, options.classes)));
    MakeDirectories(folders.back());
  }
  // 2. Images, class-major, each worker taking the next unwritten one. Every file is a
  //    function of its (class, index) alone, so the thread count changes nothing.
  const uint64_t total = static_cast<uint64_t>(options.classes) * options.per_class;
  int threads = options.threads > 0 ? options.threads : AvailableCpus();
  threads = static_cast<int>(std::min<uint64_t>(threads, std::max<uint64_t>(total, 1)));
  std::atomic<uint64_t> next{0}, bytes{0};
  std::atomic<bool> failed{false};
  ThreadPool pool(threads);
  ParallelFor(pool, pool.size(), [&](size_t) {
    try {
      for (uint64_t i = next++; i < total && !failed; i = next++) {
        int class_id = static_cast<int>(i / options.per_class);
        int index = static_cast<int>(i % options.per_class);
        std::string jpeg =
            EncodeJpeg(MakeSynthImage(class_id, options.classes, index, options.width,
                                      options.height, options.seed),
                       options.quality);
        // No fsync per file: generated data can be made again.
        WriteFileAtomic(
            JoinPath(folders[class_id], SynthImageFileName(index, options.per_class)), jpeg,
            /*sync=*/false);
        bytes += jpeg.size();
      }
    } catch (...) {
      failed = true;
      throw;
    }
  });
  SynthResult result;
  result.images = total;
  result.bytes = bytes;
  return result;
}

}  // namespace imgpipe
