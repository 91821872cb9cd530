// Feature keys of image records, as TensorFlow's ImageNet conversion
// (models/research/inception/inception/data/build_imagenet_data.py) writes them, so
// TensorFlow users read imgpipe shards unchanged.
#pragma once

namespace imgpipe::image_keys {

inline constexpr char kEncoded[] = "image/encoded";        // bytes: the JPEG file
inline constexpr char kFormat[] = "image/format";          // bytes: "JPEG"
inline constexpr char kLabel[] = "image/class/label";      // int64: class index, 0-based
inline constexpr char kClassText[] = "image/class/text";   // bytes: class name
inline constexpr char kHeight[] = "image/height";          // int64
inline constexpr char kWidth[] = "image/width";            // int64
inline constexpr char kChannels[] = "image/channels";      // int64: 1, 3 or 4 (CMYK)
inline constexpr char kColorspace[] = "image/colorspace";  // bytes: "RGB", "Grayscale", "CMYK"
inline constexpr char kFilename[] = "image/filename";      // bytes: path relative to the input
// imgpipe's own, written by `convert --max-resolution`: the input's size before the
// resize, in the orientation of the stored image (image/height and image/width).
inline constexpr char kOriginalHeight[] = "image/original_height";  // int64
inline constexpr char kOriginalWidth[] = "image/original_width";    // int64

}  // namespace imgpipe::image_keys
