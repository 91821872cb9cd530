#include "image/stb_decoder.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "image/byte_order.h"
#include "image/decoder_util.h"
#include "util/error.h"

// stb_image's implementation, with only the TGA and PSD loaders, no stdio, no float
// output, and no image over 2^24 pixels a side whatever the header says.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_TGA
#define STBI_ONLY_PSD
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS (1 << 24)
#define STB_IMAGE_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace imgpipe {
namespace {

const char* StbName(ImageFormat format) { return format == ImageFormat::kPsd ? "PSD" : "TGA"; }

// Throws DataError for stb's last failure on this thread.
[[noreturn]] void StbFail(ImageFormat format, const std::string& path, const char* action) {
  const char* reason = stbi_failure_reason();
  throw DataError(path, std::nullopt,
                  std::string(action) + " " + StbName(format) + ": " +
                      (reason ? reason : "unknown stb_image error"));
}

// stb's input through callbacks, to see what stb's memory reader hides: a loader that
// reads past the end gets zeros from it and carries on, so a truncated uncompressed TGA
// or PSD would decode to an image with black rows. Here a read or skip past the end
// sets `overrun`.
struct StbInput {
  std::string_view bytes;
  size_t position = 0;
  bool overrun = false;

  static int Read(void* user, char* data, int size) {
    auto* in = static_cast<StbInput*>(user);
    size_t n = std::min(static_cast<size_t>(std::max(size, 0)), in->bytes.size() - in->position);
    if (n == 0 && size > 0) in->overrun = true;
    std::memcpy(data, in->bytes.data() + in->position, n);
    in->position += n;
    return static_cast<int>(n);
  }
  static void Skip(void* user, int n) {
    auto* in = static_cast<StbInput*>(user);
    // stb skips backwards (n < 0) only to rewind within what it has read.
    int64_t to = static_cast<int64_t>(in->position) + n;
    if (to > static_cast<int64_t>(in->bytes.size())) in->overrun = true;
    in->position = static_cast<size_t>(std::clamp<int64_t>(to, 0, in->bytes.size()));
  }
  static int Eof(void* user) {
    auto* in = static_cast<StbInput*>(user);
    return in->position >= in->bytes.size();
  }
  static constexpr stbi_io_callbacks kCallbacks = {&Read, &Skip, &Eof};
};

// stb reads PSDs of colour mode RGB only: name the others.
void CheckPsdMode(std::string_view bytes, const std::string& path) {
  if (bytes.size() < 26) return;  // stb reports the truncation
  const uint32_t mode = LoadU16(bytes, 24, true);
  static const char* const kModes[] = {"bitmap", "grayscale", "indexed", "RGB", "CMYK",
                                       "5", "6", "multichannel", "duotone", "Lab"};
  if (mode != 3) {
    throw DataError(path, 24, std::string("unsupported PSD: colour mode ") +
                                  (mode < 10 ? kModes[mode] : std::to_string(mode).c_str()) +
                                  " (imgpipe reads RGB PSDs)");
  }
}

// `psd` with its composite image cut to its first 3 channels (RGB) when it has more
// (alpha, spot channels): stb_image would divide the colour by the alpha ("remove weird
// white matte"), where Pillow's convert("RGB") keeps the colour as stored and drops the
// alpha, and stb's float-to-byte conversion there overflows for some values (undefined
// behaviour, found by image_decode_fuzzer). The header's channel count becomes 3 and a
// PackBits image loses the row lengths of the channels past 3; planes past 3 stay unread.
// nullopt, to read `psd` as it is, when it has at most 3 channels or its sections do not
// fit (stb then says what is wrong).
std::optional<std::string> PsdFirstThreeChannels(std::string_view psd) {
  // 1. The header's channels and height, then past the colour mode data, the image
  //    resources and the layer and mask information, each a 32-bit length and its bytes.
  if (psd.size() < 26 || LoadU16(psd, 12, true) <= 3) return std::nullopt;
  const uint64_t channels = LoadU16(psd, 12, true), height = LoadU32(psd, 14, true);
  uint64_t at = 26;
  for (int section = 0; section < 3; ++section) {
    if (!HasBytes(psd, at, 4)) return std::nullopt;
    at += 4 + LoadU32(psd, at, true);
  }
  if (!HasBytes(psd, at, 2)) return std::nullopt;
  const bool packbits = LoadU16(psd, at, true) == 1;
  at += 2;
  // 2. Three channels; for PackBits, the row lengths of the first three only.
  std::string out(psd);
  out[12] = 0;
  out[13] = 3;
  if (packbits) {
    const uint64_t kept = at + 3 * height * 2, table_end = at + channels * height * 2;
    if (!HasBytes(psd, at, table_end - at)) return std::nullopt;
    out.erase(kept, table_end - kept);
  }
  return out;
}

}  // namespace

ImageInfo ReadStbInfo(ImageFormat format, std::string_view bytes, const std::string& path) {
  if (format == ImageFormat::kPsd) CheckPsdMode(bytes, path);
  int width = 0, height = 0, channels = 0;
  StbInput input{bytes};
  if (!stbi_info_from_callbacks(&StbInput::kCallbacks, &input, &width, &height, &channels)) {
    if (input.overrun) {
      throw DataError(path, bytes.size(), std::string("truncated ") + StbName(format) + " header");
    }
    StbFail(format, path, "invalid");
  }
  return MakeHeaderInfo(format, width, height, channels, path);
}

Image DecodeStb(ImageFormat format, std::string_view bytes, const std::string& path,
                uint64_t max_pixels) {
  // 1. The header's size, against the budget, before stb allocates anything.
  ImageInfo info = ReadStbInfo(format, bytes, path);
  Image image = AllocateImage(info.width, info.height, 3, max_pixels, path, StbName(format));
  // 2. The pixels, as RGB; the size stb decodes must be the header's.
  int width = 0, height = 0, channels = 0;
  const std::optional<std::string> psd_rgb =
      format == ImageFormat::kPsd ? PsdFirstThreeChannels(bytes) : std::nullopt;
  StbInput input{psd_rgb ? std::string_view(*psd_rgb) : bytes};
  std::unique_ptr<stbi_uc, void (*)(void*)> pixels(
      stbi_load_from_callbacks(&StbInput::kCallbacks, &input, &width, &height, &channels, 3),
      stbi_image_free);
  if (input.overrun) {
    throw DataError(path, bytes.size(),
                    std::string("truncated ") + StbName(format) +
                        " data (the pixels run past the end)");
  }
  if (!pixels) StbFail(format, path, "cannot decode");
  if (width != info.width || height != info.height) {
    throw DataError(path, std::nullopt, std::string(StbName(format)) + " decoded to " +
                                            std::to_string(width) + "x" + std::to_string(height) +
                                            ", but its header says " + std::to_string(info.width) +
                                            "x" + std::to_string(info.height));
  }
  std::memcpy(image.pixels.data(), pixels.get(), image.pixels.size());
  return image;
}

}  // namespace imgpipe
