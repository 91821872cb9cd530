#include "convert/image_example.h"

#include <algorithm>
#include <optional>

#include "image/jpeg_transcode.h"
#include "image/resize.h"
#include "io/storage.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {

VerifyMode ParseVerifyMode(const std::string& name) {
  if (name == "header") return VerifyMode::kHeader;
  if (name == "decode") return VerifyMode::kDecode;
  throw InvalidArgument("--verify: expected header or decode, got '" + name + "'");
}

const char* VerifyModeName(VerifyMode mode) {
  return mode == VerifyMode::kHeader ? "header" : "decode";
}

NonJpegPolicy ParseNonJpegPolicy(const std::string& name) {
  if (name == "reencode") return NonJpegPolicy::kReencode;
  if (name == "reject") return NonJpegPolicy::kReject;
  throw InvalidArgument("--non-jpeg: expected reencode or reject, got '" + name + "'");
}

const char* NonJpegPolicyName(NonJpegPolicy policy) {
  return policy == NonJpegPolicy::kReencode ? "reencode" : "reject";
}

ImageSize StoredSize(int width, int height, int max_resolution) {
  int longer = std::max(width, height);
  if (max_resolution <= 0 || longer <= max_resolution) return {width, height};
  auto scaled = [&](int side) {
    return std::max(1, static_cast<int>((static_cast<int64_t>(side) * max_resolution * 2 + longer) /
                                        (2 * static_cast<int64_t>(longer))));
  };
  return width >= height ? ImageSize{max_resolution, scaled(height)}
                         : ImageSize{scaled(width), max_resolution};
}

namespace {

// Checks `bytes` (`path` names them in errors); keeps a JPEG within
// options.max_resolution as it is and re-encodes the rest (other formats; larger JPEGs,
// resized). Throws as MakeImageExample.
StoredImage CheckOrReencodeImage(std::string bytes, const std::string& path,
                                 const ImageExampleOptions& options) {
  StoredImage out;
  out.bytes = std::move(bytes);
  out.info = ReadImageInfo(out.bytes, path, options.max_pixels);
  out.original = {out.info.width, out.info.height};
  const bool jpeg = out.info.format == ImageFormat::kJpeg;
  const bool resize = StoredSize(out.info.width, out.info.height, options.max_resolution) !=
                      out.original;
  if (!jpeg && options.non_jpeg == NonJpegPolicy::kReject) {
    throw DataError(path, std::nullopt,
                    std::string("not a JPEG (") + ImageFormatName(out.info.format) +
                        ") and --non-jpeg=reject");
  }
  if (jpeg && !resize && options.verify == VerifyMode::kHeader) return out;
  DecodeOptions decode;
  decode.channels = out.info.channels == 1 ? 1 : 3;
  decode.max_pixels = options.max_pixels;
  Image image = DecodeImage(out.bytes, path, decode);  // EXIF orientation applied
  if (jpeg && !resize) return out;                     // --verify decode: it decodes
  out.original = {image.width, image.height};
  ImageSize size = StoredSize(image.width, image.height, options.max_resolution);
  if (size != out.original) image = Resize(image, size.width, size.height);
  out.bytes = EncodeJpeg(image, options.jpeg_quality);
  out.info.format = ImageFormat::kJpeg;
  out.info.width = image.width;
  out.info.height = image.height;
  out.info.orientation = 1;  // applied by the decode: the new JPEG has no EXIF
  out.info.channels = image.channels;
  out.info.colorspace = image.channels == 1 ? "Grayscale" : "RGB";
  return out;
}

}  // namespace

StoredImage StoreImage(std::string bytes, const std::string& path,
                       const ImageExampleOptions& options) {
  StoredImage out = CheckOrReencodeImage(std::move(bytes), path, options);
  if (options.jpeg_restart_interval <= 0) return out;
  JpegRestartRewrite marked =
      AddJpegRestartMarkers(out.bytes, path, options.jpeg_restart_interval, options.max_pixels);
  if (marked.jpeg) {
    out.bytes = std::move(*marked.jpeg);
    out.restart_markers_added = true;
  }
  out.restart_failure = std::move(marked.failure);
  return out;
}

void SetImageFeatures(Features* f, const StoredImage& image, int label,
                      const std::string& class_text, const ImageExampleOptions& options) {
  auto& map = *f->mutable_feature();
  for (const char* key : {image_keys::kEncoded, image_keys::kFormat, image_keys::kLabel,
                          image_keys::kClassText, image_keys::kHeight, image_keys::kWidth,
                          image_keys::kChannels, image_keys::kColorspace,
                          image_keys::kOriginalHeight, image_keys::kOriginalWidth}) {
    map.erase(key);
  }
  AddBytesFeature(f, image_keys::kEncoded, image.bytes);
  AddBytesFeature(f, image_keys::kFormat, "JPEG");
  AddInt64Feature(f, image_keys::kLabel, label);
  AddBytesFeature(f, image_keys::kClassText, class_text);
  AddInt64Feature(f, image_keys::kHeight, image.info.height);
  AddInt64Feature(f, image_keys::kWidth, image.info.width);
  AddInt64Feature(f, image_keys::kChannels, image.info.channels);
  AddBytesFeature(f, image_keys::kColorspace, image.info.colorspace);
  if (options.max_resolution > 0) {
    AddInt64Feature(f, image_keys::kOriginalHeight, image.original.height);
    AddInt64Feature(f, image_keys::kOriginalWidth, image.original.width);
  }
}

ImageExample MakeImageExample(const InputImage& input, const std::string& class_text,
                              const ImageExampleOptions& options) {
  StoredImage image = StoreImage(ReadStorageFile(input.path), input.path, options);
  Example example;
  Features* f = example.mutable_features();
  SetImageFeatures(f, image, input.label, class_text, options);
  AddBytesFeature(f, image_keys::kFilename, input.name);
  return {SerializeExample(example), image.restart_markers_added, image.restart_failure};
}

std::string RejectReason(const std::exception& error, const std::string& path) {
  if (auto* data = dynamic_cast<const DataError*>(&error)) {
    std::string reason = data->reason();
    if (data->offset()) reason = "offset " + std::to_string(*data->offset()) + ": " + reason;
    return reason;
  }
  std::string message = error.what();
  std::string prefix = path + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
  return message;
}

}  // namespace imgpipe
