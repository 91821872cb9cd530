#include "image/gif_decoder.h"

#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "image/codec_internal.h"
#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// The bytes giflib reads through its input callback.
struct MemoryInput {
  std::string_view bytes;
  size_t position = 0;
};

// giflib's input callback: copies up to `length` bytes from the MemoryInput in
// UserData; returns how many (fewer at the end of the bytes).
int ReadMemory(GifFileType* gif, GifByteType* out, int length) {
  auto* input = static_cast<MemoryInput*>(gif->UserData);
  size_t n = std::min(static_cast<size_t>(std::max(length, 0)),
                      input->bytes.size() - input->position);
  std::memcpy(out, input->bytes.data() + input->position, n);
  input->position += n;
  return static_cast<int>(n);
}

// An open giflib decoder over `bytes`, closed with it. Every failed call goes through
// Fail, which throws DataError naming what was being read and where.
class GifReader {
 public:
  GifReader(std::string_view bytes, const std::string& path) : path_(path) {
    input_.bytes = bytes;
    int error = 0;
    gif_ = DGifOpen(&input_, ReadMemory, &error);
    if (gif_ == nullptr) Fail("the header and global colour table", error);
  }
  ~GifReader() {
    int error = 0;
    DGifCloseFile(gif_, &error);
  }
  GifReader(const GifReader&) = delete;
  GifReader& operator=(const GifReader&) = delete;

  GifFileType* get() const { return gif_; }

  // Throws DataError unless `status` is GIF_OK.
  void Check(int status, const std::string& what) const {
    if (status != GIF_OK) Fail(what, gif_->Error);
  }

  [[noreturn]] void Fail(const std::string& what, int error) const {
    const char* message = GifErrorString(error);
    Invalid("cannot read " + what + " (giflib: " + (message ? message : "unknown error") + ")");
  }

  // Throws DataError "corrupt GIF data: <reason>" at the current read position.
  [[noreturn]] void Invalid(const std::string& reason) const {
    throw DataError(path_, input_.position, "corrupt GIF data: " + reason);
  }

 private:
  const std::string& path_;
  MemoryInput input_;
  GifFileType* gif_ = nullptr;
};

// Reads an extension's blocks; returns the transparent index of a graphics control
// extension (-1 for none or another extension).
int ReadExtension(GifReader& reader, int frame) {
  GifFileType* gif = reader.get();
  const std::string what = "an extension before frame " + std::to_string(frame);
  int code = 0;
  GifByteType* block = nullptr;
  reader.Check(DGifGetExtension(gif, &code, &block), what);
  int transparent = NO_TRANSPARENT_COLOR;
  if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr) {
    GraphicsControlBlock gcb;
    if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK) transparent = gcb.TransparentColor;
  }
  while (block != nullptr) reader.Check(DGifGetExtensionNext(gif, &block), what);
  return transparent;
}

// Reads the first frame's indices onto a screen-sized canvas filled with `fill`; a frame
// of no pixels or over `max_pixels` is corrupt.
std::vector<uint8_t> ReadFirstFrame(GifReader& reader, int width, int height, uint8_t fill,
                                    uint64_t max_pixels) {
  GifFileType* gif = reader.get();
  reader.Check(DGifGetImageDesc(gif), "the descriptor of frame 1");
  const GifImageDesc& desc = gif->Image;
  const uint64_t frame_pixels = static_cast<uint64_t>(desc.Width) * static_cast<uint64_t>(desc.Height);
  if (desc.Width <= 0 || desc.Height <= 0 || frame_pixels > max_pixels) {
    reader.Invalid("frame 1 is " + std::to_string(desc.Width) + "x" + std::to_string(desc.Height) +
                   " pixels (the limit is " + std::to_string(max_pixels) + ")");
  }
  std::vector<uint8_t> canvas(static_cast<size_t>(width) * height, fill);
  std::vector<GifPixelType> line(static_cast<size_t>(desc.Width));
  // Interlaced frames store rows in four passes: every 8th from 0, every 8th from 4,
  // every 4th from 2, every 2nd from 1.
  static const int kStart[] = {0, 4, 2, 1}, kStep[] = {8, 8, 4, 2};
  const int passes = desc.Interlace ? 4 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    const int start = desc.Interlace ? kStart[pass] : 0, step = desc.Interlace ? kStep[pass] : 1;
    for (int row = start; row < desc.Height; row += step) {
      reader.Check(DGifGetLine(gif, line.data(), desc.Width),
                   "the pixels of frame 1 (row " + std::to_string(row) + ")");
      const int y = desc.Top + row;
      if (y < 0 || y >= height || desc.Left >= width) continue;
      const int n = std::min(desc.Width, width - desc.Left);
      std::memcpy(canvas.data() + static_cast<size_t>(y) * width + desc.Left, line.data(), n);
    }
  }
  return canvas;
}

// Whether another frame follows the first: the records after it are read up to the next
// image descriptor (extensions passed over), the trailer or damage, and no further. A
// later frame is never read, so damage there costs nothing.
bool AnotherFrameFollows(GifReader& reader) {
  GifFileType* gif = reader.get();
  try {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    while (true) {
      reader.Check(DGifGetRecordType(gif, &type), "a record type");
      if (type != EXTENSION_RECORD_TYPE) return type == IMAGE_DESC_RECORD_TYPE;
      ReadExtension(reader, 2);
    }
  } catch (const DataError&) {
  }
  return false;
}

// RGB (or luma) of each of the 256 indices: the colour table's, black past its end, or
// the index as a gray level when the file has no colour table.
std::vector<uint8_t> Palette(const ColorMapObject* map, int channels) {
  std::vector<uint8_t> palette(256 * static_cast<size_t>(channels), 0);
  for (int i = 0; i < 256; ++i) {
    uint8_t r = static_cast<uint8_t>(i), g = r, b = r;
    if (map != nullptr) {
      if (i >= map->ColorCount || map->Colors == nullptr) continue;
      r = map->Colors[i].Red;
      g = map->Colors[i].Green;
      b = map->Colors[i].Blue;
    }
    if (channels == 1) {
      palette[i] = Luma(r, g, b);
    } else {
      palette[3 * i] = r;
      palette[3 * i + 1] = g;
      palette[3 * i + 2] = b;
    }
  }
  return palette;
}

}  // namespace

Image DecodeGif(std::string_view bytes, const std::string& path, const ImageInfo& info,
                int channels, uint64_t max_pixels) {
  GifReader reader(bytes, path);
  GifFileType* gif = reader.get();
  // 1. Records up to the first frame; a graphics control extension sets its
  // transparent index, which fills the canvas outside the frame.
  int transparent = NO_TRANSPARENT_COLOR;
  GifRecordType type = UNDEFINED_RECORD_TYPE;
  while (true) {
    reader.Check(DGifGetRecordType(gif, &type), "a record type before frame 1");
    if (type == IMAGE_DESC_RECORD_TYPE) break;
    if (type == TERMINATE_RECORD_TYPE) reader.Invalid("no frame before the trailer");
    if (type == EXTENSION_RECORD_TYPE) {
      int t = ReadExtension(reader, 1);
      if (t != NO_TRANSPARENT_COLOR) transparent = t;
    }
  }
  // 2. The first frame, and its colour table (local, else global).
  const uint8_t fill = transparent >= 0 && transparent < 256 ? static_cast<uint8_t>(transparent) : 0;
  std::vector<uint8_t> indices = ReadFirstFrame(reader, info.width, info.height, fill, max_pixels);
  const ColorMapObject* map = gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap;
  std::vector<uint8_t> palette = Palette(map, channels);
  // 3. Whether it is an animation, for the log.
  if (AnotherFrameFollows(reader)) LogAnimationOnce(ImageFormat::kGif, "GIF", path, 0);
  // 4. Indices to pixels.
  Image image;
  image.width = info.width;
  image.height = info.height;
  image.channels = channels;
  image.pixels.resize(indices.size() * channels);
  for (size_t i = 0; i < indices.size(); ++i) {
    std::memcpy(&image.pixels[i * channels], &palette[indices[i] * static_cast<size_t>(channels)],
                channels);
  }
  return image;
}

}  // namespace imgpipe
