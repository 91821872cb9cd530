#include "convert/image_example.h"

#include "record/example.h"
#include "record/image_feature_keys.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {

VerifyMode ParseVerifyMode(const std::string& name) {
  if (name == "header") return VerifyMode::kHeader;
  if (name == "decode") return VerifyMode::kDecode;
  throw Error("--verify: expected header or decode, got '" + name + "'");
}

const char* VerifyModeName(VerifyMode mode) {
  return mode == VerifyMode::kHeader ? "header" : "decode";
}

NonJpegPolicy ParseNonJpegPolicy(const std::string& name) {
  if (name == "reencode") return NonJpegPolicy::kReencode;
  if (name == "reject") return NonJpegPolicy::kReject;
  throw Error("--non-jpeg: expected reencode or reject, got '" + name + "'");
}

const char* NonJpegPolicyName(NonJpegPolicy policy) {
  return policy == NonJpegPolicy::kReencode ? "reencode" : "reject";
}

std::string MakeImageExample(const InputImage& input, const std::string& class_text,
                             const ImageExampleOptions& options) {
  std::string bytes = ReadFile(input.path);
  ImageInfo info = ReadImageInfo(bytes, input.path, options.max_pixels);
  if (info.format == ImageFormat::kJpeg) {
    if (options.verify == VerifyMode::kDecode) {
      DecodeOptions decode;
      decode.channels = info.channels == 1 ? 1 : 3;
      decode.max_pixels = options.max_pixels;
      DecodeImage(bytes, input.path, decode);
    }
  } else {
    if (options.non_jpeg == NonJpegPolicy::kReject) {
      throw DataError(input.path, std::nullopt,
                      std::string("not a JPEG (") + ImageFormatName(info.format) +
                          ") and --non-jpeg=reject");
    }
    DecodeOptions decode;
    decode.channels = info.channels == 1 ? 1 : 3;
    decode.max_pixels = options.max_pixels;
    Image image = DecodeImage(bytes, input.path, decode);
    bytes = EncodeJpeg(image, options.jpeg_quality);
    info.format = ImageFormat::kJpeg;
    info.width = image.width;
    info.height = image.height;
    info.channels = image.channels;
    info.colorspace = image.channels == 1 ? "Grayscale" : "RGB";
  }

  Example example;
  Features* f = example.mutable_features();
  AddBytesFeature(f, image_keys::kEncoded, bytes);
  AddBytesFeature(f, image_keys::kFormat, "JPEG");
  AddInt64Feature(f, image_keys::kLabel, input.label);
  AddBytesFeature(f, image_keys::kClassText, class_text);
  AddInt64Feature(f, image_keys::kHeight, info.height);
  AddInt64Feature(f, image_keys::kWidth, info.width);
  AddInt64Feature(f, image_keys::kChannels, info.channels);
  AddBytesFeature(f, image_keys::kColorspace, info.colorspace);
  AddBytesFeature(f, image_keys::kFilename, input.name);
  return SerializeExample(example);
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
