#include "image/format_decoders.h"

#include "image/decoder_util.h"
#include "image/dib_decoder.h"
#include "image/heif_decoder.h"
#include "image/ico_decoder.h"
#include "image/pcx_decoder.h"
#include "image/sgi_decoder.h"
#include "image/stb_decoder.h"
#include "image/sun_raster_decoder.h"
#include "image/tiff_decoder.h"
#include "image/xbm_decoder.h"
#include "image/xpm_decoder.h"
#include "util/error.h"

namespace imgpipe {

bool HasFormatDecoder(ImageFormat format) {
  switch (format) {
    case ImageFormat::kTga: case ImageFormat::kPsd: case ImageFormat::kIco:
    case ImageFormat::kPcx: case ImageFormat::kSgi: case ImageFormat::kSunRaster:
    case ImageFormat::kXbm: case ImageFormat::kHeif: case ImageFormat::kAvif:
    case ImageFormat::kTiff:
    case ImageFormat::kDib: case ImageFormat::kXpm:
      return true;
    default:
      return false;
  }
}

ImageInfo ReadFormatDecoderInfo(ImageFormat format, std::string_view bytes,
                                const std::string& path) {
  switch (format) {
    case ImageFormat::kTga: case ImageFormat::kPsd: return ReadStbInfo(format, bytes, path);
    case ImageFormat::kIco: return ReadIcoInfo(bytes, path);
    case ImageFormat::kPcx: return ReadPcxInfo(bytes, path);
    case ImageFormat::kSgi: return ReadSgiInfo(bytes, path);
    case ImageFormat::kSunRaster: return ReadSunRasterInfo(bytes, path);
    case ImageFormat::kXbm: return ReadXbmInfo(bytes, path);
    case ImageFormat::kHeif: case ImageFormat::kAvif: return ReadHeifInfo(format, bytes, path);
    case ImageFormat::kTiff: return ReadTiffInfo(bytes, path);
    case ImageFormat::kDib: return ReadDibInfo(bytes, path);
    case ImageFormat::kXpm: return ReadXpmInfo(bytes, path);
    default: break;
  }
  throw Error(std::string("ReadFormatDecoderInfo: no decoder for ") + ImageFormatName(format));
}

Image DecodeWithFormatDecoder(ImageFormat format, std::string_view bytes,
                              const std::string& path, int channels, uint64_t max_pixels) {
  switch (format) {
    case ImageFormat::kTga: case ImageFormat::kPsd:
      return RgbToChannels(DecodeStb(format, bytes, path, max_pixels), channels);
    case ImageFormat::kIco: return DecodeIco(bytes, path, channels, max_pixels);
    case ImageFormat::kPcx: return RgbToChannels(DecodePcx(bytes, path, max_pixels), channels);
    case ImageFormat::kSgi: return RgbToChannels(DecodeSgi(bytes, path, max_pixels), channels);
    case ImageFormat::kSunRaster:
      return RgbToChannels(DecodeSunRaster(bytes, path, max_pixels), channels);
    case ImageFormat::kXbm: return RgbToChannels(DecodeXbm(bytes, path, max_pixels), channels);
    case ImageFormat::kHeif: case ImageFormat::kAvif:
      return RgbToChannels(DecodeHeif(format, bytes, path, max_pixels), channels);
    case ImageFormat::kTiff: return RgbToChannels(DecodeTiff(bytes, path, max_pixels), channels);
    case ImageFormat::kDib: return DecodeDib(bytes, path, channels, max_pixels);
    case ImageFormat::kXpm: return RgbToChannels(DecodeXpm(bytes, path, max_pixels), channels);
    default: break;
  }
  throw Error(std::string("DecodeWithFormatDecoder: no decoder for ") + ImageFormatName(format));
}

}  // namespace imgpipe
