// Turns one input image file into a serialized tf.train.Example with TensorFlow's
// ImageNet feature keys (record/image_feature_keys.h), validating it on the way.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/input_list.h"
#include "image/codec.h"

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
  VerifyMode verify = VerifyMode::kHeader;
  NonJpegPolicy non_jpeg = NonJpegPolicy::kReencode;
  int jpeg_quality = 95;  // for re-encoded images
  uint64_t max_pixels = kDefaultMaxPixels;
};

// Reads `input.path` and returns the Example's bytes. Throws Error (DataError for bad
// image data, IoError for unreadable files) when the image must be rejected.
std::string MakeImageExample(const InputImage& input, const std::string& class_text,
                             const ImageExampleOptions& options);

// The reason to write into rejects.csv for an exception thrown by MakeImageExample:
// its message without the leading path.
std::string RejectReason(const std::exception& error, const std::string& path);

}  // namespace imgpipe
