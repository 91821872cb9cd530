// libjpeg-turbo's faster decode settings against today's exact decode, on the real
// photos of ${IMGPIPE_TESTDATA_DIR}: images/hymenoptera (ImageNet, ~500x375) and
// images/photos-by-class (up to 1920 pixels). For each set and each setting (the fast
// integer IDCT, plain upsampling, both) it prints the speed ratio to the exact decode
// and the pixel difference from it (max, mean), for three paths: the full decode
// (TurboJPEG, TJFLAG_FASTDCT / TJFLAG_FASTUPSAMPLE), the train preset's decode (its
// crop windows, DCT-scaled, DecodeJpegRegion) and the whole train preset (float32
// output; the difference on its uint8 output); and the eval preset's exact decode
// against its draft decode and whole decodes. One thread; the settings run in
// alternating rounds, a pass over the set each, and the ratios are of medians.
// Usage: decode_modes_bench [rounds]
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "image/codec.h"
#include "image/image_format.h"
#include "image/jpeg_region_decoder.h"
#include "image/presets.h"
#include "image/transforms.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/median.h"

namespace imgpipe {
namespace {

struct Mode {
  const char* name;
  JpegSpeed speed;
};

const Mode kModes[] = {{"exact (today)", {false, false}},
                       {"fast IDCT", {true, false}},
                       {"plain upsampling", {false, true}},
                       {"both", {true, true}}};

// The JPEG files under `relative` (recursively), read into memory.
void LoadJpegs(const std::string& dir, std::vector<std::string>* out) {
  for (const std::string& name : ListDirectory(dir)) {
    const std::string path = JoinPath(dir, name);
    if (IsDirectory(path)) {
      LoadJpegs(path, out);
      continue;
    }
    std::string bytes = ReadFile(path);
    if (DetectImageFormat(bytes) == ImageFormat::kJpeg) out->push_back(std::move(bytes));
  }
}

// The whole image through TurboJPEG with `speed`'s flags, as DecodeImage's RGB decode.
std::vector<uint8_t> TurboDecode(tjhandle handle, const std::string& jpeg, const JpegSpeed& speed) {
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(jpeg.data());
  if (tjDecompressHeader3(handle, data, jpeg.size(), &width, &height, &subsampling,
                          &colorspace) != 0) {
    throw Error(std::string("TurboJPEG header: ") + tjGetErrorStr2(handle));
  }
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * 3);
  const int flags = (speed.fast_idct ? TJFLAG_FASTDCT : 0) |
                    (speed.fast_upsampling ? TJFLAG_FASTUPSAMPLE : 0);
  if (tjDecompress2(handle, data, jpeg.size(), pixels.data(), width, 0, height, TJPF_RGB,
                    flags) != 0) {
    throw Error(std::string("TurboJPEG decode: ") + tjGetErrorStr2(handle));
  }
  return pixels;
}

// The train preset's window for image i (seed i), as ApplyTrainPreset picks it.
CropWindow TrainWindow(const std::string& jpeg, uint64_t i) {
  const ImageInfo info = ReadDisplayedJpegInfo(jpeg, "photo.jpg");
  SplitMix64 random(i);
  return SampleRandomResizedCrop(info.width, info.height, random);
}

// One way to process image i: timed (`run`) and as bytes to compare (`output`).
struct Variant {
  std::string name;
  std::function<void(size_t i)> run;
  std::function<std::vector<uint8_t>(size_t i)> output;
};

// A function of image i under a decode setting.
using ByMode = std::function<std::vector<uint8_t>(size_t i, const JpegSpeed&)>;

// The variants of `path` under each of kModes; `timed` is run, `compared` output.
std::vector<Variant> ModeVariants(const ByMode& timed, const ByMode& compared) {
  std::vector<Variant> variants;
  for (const Mode& mode : kModes) {
    const JpegSpeed speed = mode.speed;
    variants.push_back({mode.name, [timed, speed](size_t i) { timed(i, speed); },
                        [compared, speed](size_t i) { return compared(i, speed); }});
  }
  return variants;
}

// Max and mean absolute difference of two equally long buffers.
void AddDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int* max_diff,
             double* sum, double* count) {
  if (a.size() != b.size()) throw Error("decode_modes_bench: outputs differ in size");
  for (size_t k = 0; k < a.size(); ++k) {
    const int d = std::abs(a[k] - b[k]);
    *max_diff = std::max(*max_diff, d);
    *sum += d;
  }
  *count += static_cast<double>(a.size());
}

// Prints one table: per variant the median pass's rate, its ratio to the first
// variant's, and the difference from the first variant's output.
void RunTable(const char* title, const std::vector<Variant>& variants, size_t images,
              int rounds) {
  std::vector<std::vector<double>> seconds(variants.size());
  for (int r = 0; r < rounds; ++r) {
    for (size_t v = 0; v < variants.size(); ++v) {
      const auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < images; ++i) variants[v].run(i);
      seconds[v].push_back(SecondsSince(start));
    }
  }
  const double first = Median(seconds[0]);
  std::printf("  %s\n    %-24s %10s %14s %9s %9s\n", title, "setting", "images/s",
              "speed vs 1st", "max diff", "mean diff");
  for (size_t v = 0; v < variants.size(); ++v) {
    int max_diff = 0;
    double sum = 0, count = 0;
    for (size_t i = 0; v > 0 && i < images; ++i) {
      AddDiff(variants[v].output(i), variants[0].output(i), &max_diff, &sum, &count);
    }
    const double median = Median(seconds[v]);
    std::printf("    %-24s %10.1f %13.3fx %9d %9.3f\n", variants[v].name.c_str(),
                images / median, first / median, max_diff, count > 0 ? sum / count : 0.0);
  }
}

// The eval preset: exact with crop-window decode (the default), with draft decode,
// and exact with whole decodes.
std::vector<Variant> EvalVariants(const std::vector<std::string>& jpegs) {
  const auto eval = [&jpegs](EvalPreset preset, OutputLayout layout) {
    preset.layout = layout;
    return [&jpegs, preset](size_t i) {
      std::vector<uint8_t> out(OutputBytes(preset.layout, preset.crop_size));
      ApplyEvalPreset(jpegs[i], "photo.jpg", preset, out.data());
      return out;
    };
  };
  EvalPreset exact, draft, whole;
  draft.draft_decode = true;
  whole.use_region_decode = false;
  std::vector<Variant> variants;
  for (const auto& [name, preset] : {std::pair<const char*, EvalPreset>{"exact (default)", exact},
                                     {"draft decode", draft},
                                     {"exact, whole decode", whole}}) {
    const auto timed = eval(preset, OutputLayout::kFloat32Nchw);
    variants.push_back({name, [timed](size_t i) { timed(i); },
                        eval(preset, OutputLayout::kUint8Nhwc)});
  }
  return variants;
}

void RunSet(const char* name, const std::vector<std::string>& jpegs, int rounds) {
  std::printf("%s: %zu JPEGs, %d alternating rounds\n", name, jpegs.size(), rounds);
  tjhandle handle = tjInitDecompress();
  const auto full = [&](size_t i, const JpegSpeed& speed) {
    return TurboDecode(handle, jpegs[i], speed);
  };
  const auto region = [&](size_t i, const JpegSpeed& speed) {
    JpegRegionOptions options;
    options.crop = TrainWindow(jpegs[i], i);
    options.min_width = options.min_height = 224;
    options.speed = speed;
    return DecodeJpegRegion(jpegs[i], "photo.jpg", options).pixels;
  };
  const auto preset = [&](OutputLayout layout) {
    return [&jpegs, layout](size_t i, const JpegSpeed& speed) {
      TrainPreset train;
      train.decode_speed = speed;
      train.layout = layout;
      std::vector<uint8_t> out(OutputBytes(train.layout, train.size));
      ApplyTrainPreset(jpegs[i], "photo.jpg", train, i, out.data());
      return out;
    };
  };
  RunTable("full decode (TurboJPEG)", ModeVariants(full, full), jpegs.size(), rounds);
  RunTable("train preset's decode (its crop windows, DCT-scaled to >= 224)",
           ModeVariants(region, region), jpegs.size(), rounds);
  RunTable("whole train preset (float32 output timed, uint8 output compared)",
           ModeVariants(preset(OutputLayout::kFloat32Nchw), preset(OutputLayout::kUint8Nhwc)),
           jpegs.size(), rounds);
  RunTable("eval preset (float32 output timed, uint8 output compared)",
           EvalVariants(jpegs), jpegs.size(), rounds);
  tjDestroy(handle);
}

}  // namespace
}  // namespace imgpipe

int main(int argc, char** argv) {
  using namespace imgpipe;
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  try {
    for (const char* set : {"images/hymenoptera", "images/photos-by-class"}) {
      std::vector<std::string> jpegs;
      LoadJpegs(JoinPath(IMGPIPE_TESTDATA_DIR, set), &jpegs);
      RunSet(set, jpegs, rounds);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "decode_modes_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
