#include "image/heif_decoder.h"

#include <climits>
#include <cstring>
#include <memory>

#include "image/decoder_util.h"
#include "image/heif_library.h"
#include "util/error.h"

namespace imgpipe {
namespace {

const char* HeifName(ImageFormat format) { return format == ImageFormat::kAvif ? "AVIF" : "HEIF"; }

void Check(heif_error error, ImageFormat format, const std::string& path, const char* action) {
  if (error.code == heif_error_Ok) return;
  throw DataError(path, std::nullopt,
                  std::string(action) + " " + HeifName(format) + ": " + error.message);
}

// A libheif context holding `bytes` (not copied) and its primary image's handle.
struct HeifPrimary {
  std::unique_ptr<heif_context, void (*)(heif_context*)> context{nullptr, Heif().context_free};
  std::unique_ptr<heif_image_handle, void (*)(const heif_image_handle*)> handle{
      nullptr, Heif().image_handle_release};
  int width = 0, height = 0;

  HeifPrimary(ImageFormat format, std::string_view bytes, const std::string& path) {
    context.reset(Heif().context_alloc());
    if (!context) throw DataError(path, std::nullopt, "out of memory opening HEIF");
    Check(Heif().context_read_from_memory_without_copy(context.get(), bytes.data(), bytes.size(),
                                                     nullptr),
          format, path, "invalid");
    heif_image_handle* h = nullptr;
    Check(Heif().context_get_primary_image_handle(context.get(), &h), format, path, "invalid");
    handle.reset(h);
    width = Heif().image_handle_get_width(h);
    height = Heif().image_handle_get_height(h);
  }
};

}  // namespace

ImageInfo ReadHeifInfo(ImageFormat format, std::string_view bytes, const std::string& path) {
  HeifPrimary primary(format, bytes, path);
  return MakeHeaderInfo(format, primary.width, primary.height,
                        Heif().image_handle_has_alpha_channel(primary.handle.get()) ? 4 : 3, path);
}

Image DecodeHeif(ImageFormat format, std::string_view bytes, const std::string& path,
                 uint64_t max_pixels) {
  // 1. The container, and the budget before any pixel is decoded.
  HeifPrimary primary(format, bytes, path);
  Image image = AllocateImage(primary.width, primary.height, 3, max_pixels, path, HeifName(format));
  // 2. The pixels, 8-bit interleaved RGB, transformations applied.
  heif_image* decoded = nullptr;
  Check(Heif().decode_image(primary.handle.get(), &decoded, heif_colorspace_RGB,
                          heif_chroma_interleaved_RGB, nullptr),
        format, path, "cannot decode");
  std::unique_ptr<heif_image, void (*)(const heif_image*)> owned(decoded, Heif().image_release);
  int stride = 0;
  const uint8_t* plane = Heif().image_get_plane_readonly(decoded, heif_channel_interleaved, &stride);
  const int width = Heif().image_get_width(decoded, heif_channel_interleaved);
  const int height = Heif().image_get_height(decoded, heif_channel_interleaved);
  if (plane == nullptr || width != image.width || height != image.height) {
    throw DataError(path, std::nullopt,
                    std::string(HeifName(format)) + " decoded to " + std::to_string(width) + "x" +
                        std::to_string(height) + ", but its container says " +
                        std::to_string(image.width) + "x" + std::to_string(image.height));
  }
  for (int y = 0; y < height; ++y) {
    std::memcpy(image.row(y), plane + static_cast<size_t>(stride) * y, image.row_bytes());
  }
  return image;
}

}  // namespace imgpipe
