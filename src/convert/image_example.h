// Turns one input image file into a serialized tf.train.Example with TensorFlow's
// ImageNet feature keys (record/image_feature_keys.h), validating it on the way.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/input_list.h"
#include "image/codec.h"
#include "record/example.h"

namespace imgpipe {

enum class VerifyMode {
  kHeader,  // parse the header: format known, JPEG process supported, sane size
  kDecode,  // decode every pixel (catches truncated and corrupt data)
};
VerifyMode ParseVerifyMode(const std::string& name);
const char* VerifyModeName(VerifyMode mode);

enum class NonJpegPolicy {
  kReencode,  // decode and store as JPEG
  kReject,    // list in rejects.csv
};
NonJpegPolicy ParseNonJpegPolicy(const std::string& name);
const char* NonJpegPolicyName(NonJpegPolicy policy);

struct ImageExampleOptions {
  VerifyMode verify = VerifyMode::kDecode;  // shards hold only images the pipeline decodes
  NonJpegPolicy non_jpeg = NonJpegPolicy::kReencode;
  int jpeg_quality = 95;  // for re-encoded (and resized) images
  uint64_t max_pixels = kDefaultMaxPixels;
  // > 0: an image whose longer side exceeds it is decoded (EXIF orientation applied),
  // resized so that its longer side is max_resolution (StoredSize) and re-encoded, as
  // FFCV's max_resolution; the others are stored as they are. Each record then also
  // holds image/original_height and image/original_width. 0: no resizing.
  int max_resolution = 0;
  // > 0: every stored JPEG (kept as it is or re-encoded) is rewritten losslessly (the
  // same pixels) with a restart marker every jpeg_restart_interval MCUs
  // (AddJpegRestartMarkers, at most kMaxJpegRestartInterval), so that the train and eval
  // presets' crop decodes entropy-decode only the crop's MCUs; 1 is the fastest for
  // crops. A JPEG that already has that interval, a CMYK or YCCK one and an
  // arithmetic-coded one stay as they are. 0: JPEGs are stored as given. The default,
  // 1: the train preset reads such shards 1.27-1.35x faster and the exact eval preset
  // 1.07-1.17x, for files ~8% larger and a conversion 3-6x slower (docs/data.md).
  int jpeg_restart_interval = 1;
};

struct ImageSize {
  int width = 0;
  int height = 0;
  bool operator==(const ImageSize&) const = default;
};

// The size a width x height image is stored at: unchanged when max_resolution is 0 or
// the longer side is at most max_resolution; else the longer side is max_resolution and
// the shorter one is scaled by the same factor, rounded to the nearest integer (at
// least 1).
ImageSize StoredSize(int width, int height, int max_resolution);

// An image as it goes into a record: the encoded bytes, what its header says, the
// input's size in the same orientation, and whether restart markers were added.
struct StoredImage {
  std::string bytes;
  ImageInfo info;
  ImageSize original;
  bool restart_markers_added = false;
  std::string restart_failure;  // why a JPEG that needed restart markers is stored as
                                // given (JpegRestartRewrite::failure); empty otherwise
};

// The image `bytes` (read from `path`, which names them in errors) as a record stores
// them: kept when a JPEG within options.max_resolution, else re-encoded at
// options.jpeg_quality (resized to it); either then given restart markers when
// options.jpeg_restart_interval > 0. Throws as MakeImageExample.
StoredImage StoreImage(std::string bytes, const std::string& path,
                       const ImageExampleOptions& options);

// Sets imgpipe's image features of `f` (encoded, format, label, class text, height,
// width, channels, colorspace, and the original size when options.max_resolution > 0),
// replacing those keys' values and leaving every other feature as it is.
void SetImageFeatures(Features* f, const StoredImage& image, int label,
                      const std::string& class_text, const ImageExampleOptions& options);

// A record for one input, and whether its JPEG was rewritten with restart markers.
struct ImageExample {
  std::string record;                  // the serialized tf.train.Example
  bool restart_markers_added = false;  // by options.jpeg_restart_interval
  std::string restart_failure;         // StoredImage::restart_failure
};

// Reads `input.path` (a file, or an object of a URL manifest) and returns its Example:
// the image stored is the file's own bytes when it is a JPEG within
// options.max_resolution, else a JPEG re-encoded at options.jpeg_quality; either is then
// given restart markers when options.jpeg_restart_interval > 0. Throws Error (DataError
// for bad image data, IoError for unreadable files, HttpError for unreadable objects)
// when the image must be rejected.
ImageExample MakeImageExample(const InputImage& input, const std::string& class_text,
                              const ImageExampleOptions& options);

// The reason to write into rejects.csv for an exception thrown by MakeImageExample:
// its message without the leading path.
std::string RejectReason(const std::exception& error, const std::string& path);

}  // namespace imgpipe
