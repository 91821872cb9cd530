// TIFF (and BigTIFF) through libtiff (Debian's libtiff6 4.5, the library Pillow 9.4
// reads TIFF with; loaded at the first TIFF file: tiff_library.h), to the pixels of
// Pillow's Image.open(path).convert("RGB"), Orientation tag applied as Pillow applies it
// on load. The first image (IFD0) only.
//
// How each layout is read:
// - Most layouts: TIFFReadEncodedStrip/Tile (libtiff decompresses, undoes the predictor
//   and FillOrder 2, and gives 16/32/64-bit samples in host order), strips or tiles,
//   one plane or one per sample, then unpacked here by the rules of
//   docs/image-formats.md: samples of 1-7 bits scaled to 0..255 (MinIsWhite inverted),
//   8 kept, more than 8 (12, 16, 32) their top 8 bits (signed: negatives 0), float
//   clipped to 0..255 and truncated; palette entries' high bytes; CMYK as libjpeg's users
//   convert it (codec_internal.h); associated alpha divided out as Pillow's "RGBa"
//   unpacker does, other extra samples dropped (unassociated alpha: colour as stored).
// - JPEG-compressed YCbCr: libjpeg converts to RGB (JPEGCOLORMODE_RGB), as Pillow asks.
// - Other YCbCr (subsampled, old-style JPEG): libtiff's RGBA interface
//   (TIFFRGBAImageGet), as Pillow reads them.
// libtiff's errors throw DataError naming the path and libtiff's message; its warnings
// are counted (decode_warnings.h). Width x height is checked against max_pixels before
// any pixel buffer is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "image/image.h"

namespace imgpipe {

// The first image's size, samples, colour space and orientation (no pixels decoded).
// Throws DataError where libtiff cannot read the header or first directory.
ImageInfo ReadTiffInfo(std::string_view bytes, const std::string& path);

// Decodes the first image to RGB, oriented. Throws DataError for bad or truncated data,
// a layout it does not read (e.g. CIELab), or more than `max_pixels` pixels.
Image DecodeTiff(std::string_view bytes, const std::string& path, uint64_t max_pixels);

}  // namespace imgpipe
