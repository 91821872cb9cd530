#include "image/webp_anim_decoder.h"

#include "image/byte_order.h"
#include "image/codec_internal.h"
#include "image/decoder_util.h"
#include "image/webp_anim_library.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// A WebPAnimDecoder over `bytes`, deleted with this; nullptr where libwebp refused them.
class AnimDecoder {
 public:
  AnimDecoder(const WebpAnimLibrary& lib, std::string_view bytes) : lib_(lib) {
    data_.bytes = reinterpret_cast<const uint8_t*>(bytes.data());
    data_.size = bytes.size();
    decoder_ = lib_.decoder_new_internal(&data_, nullptr, WEBP_DEMUX_ABI_VERSION);
  }
  ~AnimDecoder() {
    if (decoder_ != nullptr) lib_.decoder_delete(decoder_);
  }
  AnimDecoder(const AnimDecoder&) = delete;
  AnimDecoder& operator=(const AnimDecoder&) = delete;

  WebPAnimDecoder* get() const { return decoder_; }

 private:
  const WebpAnimLibrary& lib_;
  WebPData data_{};
  WebPAnimDecoder* decoder_ = nullptr;
};

}  // namespace

bool IsAnimatedWebp(std::string_view bytes) {
  return HasBytes(bytes, 0, 21) && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP" &&
         bytes.substr(12, 4) == "VP8X" && (LoadU8(bytes, 20) & 0x02) != 0;
}

Image DecodeAnimatedWebp(std::string_view bytes, const std::string& path, const ImageInfo& info,
                         int channels) {
  // 1. The demuxer reads the whole file's chunks (Pillow's WebPAnimDecoder, default options).
  const WebpAnimLibrary& lib = WebpAnim();
  AnimDecoder decoder(lib, bytes);
  if (decoder.get() == nullptr) {
    throw DataError(path, std::nullopt,
                    "corrupt or truncated animated WebP (libwebp's demuxer refuses it)");
  }
  WebPAnimInfo anim{};
  if (!lib.decoder_get_info(decoder.get(), &anim) ||
      anim.canvas_width != static_cast<uint32_t>(info.width) ||
      anim.canvas_height != static_cast<uint32_t>(info.height)) {
    throw DataError(path, std::nullopt,
                    "animated WebP: canvas " + std::to_string(anim.canvas_width) + "x" +
                        std::to_string(anim.canvas_height) + ", but its header says " +
                        std::to_string(info.width) + "x" + std::to_string(info.height));
  }
  // 2. The first frame, on the canvas, RGBA.
  uint8_t* rgba = nullptr;
  int timestamp = 0;
  if (!lib.decoder_get_next(decoder.get(), &rgba, &timestamp) || rgba == nullptr) {
    throw DataError(path, std::nullopt, "corrupt animated WebP: cannot decode its first frame");
  }
  LogAnimationOnce(ImageFormat::kWebp, "WebP", path, static_cast<int>(anim.frame_count));
  // 3. Alpha dropped (Pillow's convert("RGB")); gray by luma.
  Image image = AllocateImage(info.width, info.height, channels, UINT64_MAX, path, "WebP");
  const size_t n = static_cast<size_t>(info.width) * info.height;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = rgba + 4 * i;
    if (channels == 1) {
      image.pixels[i] = Luma(p[0], p[1], p[2]);
    } else {
      image.pixels[3 * i] = p[0];
      image.pixels[3 * i + 1] = p[1];
      image.pixels[3 * i + 2] = p[2];
    }
  }
  return image;
}

}  // namespace imgpipe
