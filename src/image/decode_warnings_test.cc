// Images with warnings imgpipe accepts decode to exactly Pillow's pixels under every
// decode path, and count in DecodeWarningCount; truncated ones stay DataErrors.
// Pillow's decodes come from pil_decode.py through /usr/bin/python3.
#include "image/decode_warnings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/pil_test_util.h"
#include "image/jpeg_region_decoder.h"
#include "image/jpeg_transcode.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using namespace std::string_literals;

// `jpeg` with `pad` inserted before the first marker `code` found at or after `from`.
std::string PadBefore(const std::string& jpeg, int code, const std::string& pad,
                      size_t from = 0) {
  const size_t at = jpeg.find("\xFF"s + static_cast<char>(code), from);
  EXPECT_NE(at, std::string::npos) << "no marker " << code;
  return jpeg.substr(0, at) + pad + jpeg.substr(at);
}

// DecodeWarningCount's growth while `run` runs.
uint64_t WarningsDuring(const std::function<void()>& run) {
  const uint64_t before = DecodeWarningCount();
  run();
  return DecodeWarningCount() - before;
}

// A crop window of a width x height image away from its edges, for the region paths.
CropWindow InnerWindow(int width, int height) {
  return CropWindow{width / 5, height / 3, width / 2, height / 3};
}

// Checks every JPEG decode path on `jpeg`, a file with a warning imgpipe accepts, against
// Pillow's pixels `pil` and the decodes of `clean`, the same image without the warning:
// DecodeImage (TurboJPEG, then libjpeg), the region decoder's crop (spliced where the
// file has restart markers) and DCT-scaled crop, and the restart-marker rewrite. Each
// decode counts one warning; the clean file's count none.
// `in_header`: the warning is in the header, which every crop reads; a crop reads only
// part of the rest, so elsewhere its count is not checked.
void ExpectAcceptedEverywhere(const std::string& jpeg, const std::string& clean,
                              const Image& pil, const std::string& path, bool in_header) {
  SCOPED_TRACE(path);
  // 1. The whole image.
  Image whole;
  EXPECT_EQ(WarningsDuring([&] { whole = DecodeImage(jpeg, path); }), 1u);
  EXPECT_TRUE(SameImage(whole, pil));
  EXPECT_EQ(WarningsDuring([&] { DecodeImage(clean, path + " (clean)"); }), 0u);
  DecodeOptions gray;
  gray.channels = 1;
  EXPECT_TRUE(SameImage(DecodeImage(jpeg, path, gray), DecodeImage(clean, path, gray)));
  // 2. A crop, unscaled: Pillow's pixels there.
  JpegRegionOptions crop;
  crop.crop = InnerWindow(pil.width, pil.height);
  Image region;
  const uint64_t crop_warnings = WarningsDuring([&] { region = DecodeJpegRegion(jpeg, path, crop); });
  if (in_header) {
    EXPECT_EQ(crop_warnings, 1u);
  }
  const CropWindow& w = *crop.crop;
  EXPECT_TRUE(SameImage(region, CropImage(pil, w.x, w.y, w.width, w.height)));
  // 3. The whole image and the crop, DCT-scaled: as the clean file's.
  for (bool cropped : {false, true}) {
    JpegRegionOptions scaled = cropped ? crop : JpegRegionOptions{};
    scaled.scale = 4;
    EXPECT_TRUE(SameImage(DecodeJpegRegion(jpeg, path, scaled),
                          DecodeJpegRegion(clean, path, scaled)))
        << (cropped ? "scaled crop" : "scaled whole");
  }
  EXPECT_NO_THROW(EntropyDecodeJpeg(jpeg, path, crop));
  // 4. The restart-marker rewrite (imgpipe convert --jpeg-restart-interval 1): it
  //    converts, to Pillow's pixels, without the warning.
  std::optional<std::string> marked = AddJpegRestartMarkers(jpeg, path, 1).jpeg;
  if (marked) {
    EXPECT_EQ(WarningsDuring([&] { EXPECT_TRUE(SameImage(DecodeImage(*marked, path), pil)); }), 0u);
  } else {  // already marked every MCU: kept as it is
    EXPECT_TRUE(SameImage(whole, pil));
  }
}

// Every decode path refuses `jpeg` with a DataError naming `path`, whatever part of it
// the path reads.
void ExpectRefusedEverywhere(const std::string& jpeg, const std::string& path) {
  SCOPED_TRACE(path);
  const ImageInfo info = ReadImageInfo(jpeg, path);
  JpegRegionOptions top;  // a window above any cut
  top.crop = CropWindow{0, 0, info.width / 2, 8};
  JpegRegionOptions scaled;
  scaled.scale = 2;
  const std::vector<std::pair<const char*, std::function<void()>>> paths = {
      {"DecodeImage", [&] { DecodeImage(jpeg, path); }},
      {"DecodeJpegRegion(whole)", [&] { DecodeJpegRegion(jpeg, path, JpegRegionOptions{}); }},
      {"DecodeJpegRegion(top)", [&] { DecodeJpegRegion(jpeg, path, top); }},
      {"DecodeJpegRegion(scaled)", [&] { DecodeJpegRegion(jpeg, path, scaled); }},
      {"EntropyDecodeJpeg(top)", [&] { EntropyDecodeJpeg(jpeg, path, top); }},
      {"AddJpegRestartMarkers", [&] { AddJpegRestartMarkers(jpeg, path, 1); }},
  };
  for (const auto& [name, decode] : paths) {
    try {
      decode();
      ADD_FAILURE() << name << ": no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), path) << name;
      EXPECT_NE(e.reason().find("truncated"), std::string::npos) << name << ": " << e.what();
    }
  }
}

const char kAnt[] = "images/hymenoptera/train/ants/0013035.jpg";

// Padding before a marker, as cameras write it ("Corrupt JPEG data: 2 extraneous bytes
// before marker 0xdb"): Pillow and imgpipe decode the whole image.
TEST(DecodeWarningsTest, ExtraneousBytesBeforeMarkersDecodeAsPillowDoes) {
  const std::string clean = ReadFile(TestDataPath(kAnt));
  const size_t sos = clean.find("\xFF\xDA"s);
  std::map<std::string, std::string> files = {
      {"dqt.jpg", PadBefore(clean, 0xDB, "\0\0"s)},
      {"dht.jpg", PadBefore(clean, 0xC4, "\x12\x34\x56"s)},
      {"sof.jpg", PadBefore(clean, 0xC0, "\0\0\0\0\0"s)},
      {"sos.jpg", PadBefore(clean, 0xDA, "\x01\x02\x03\x04"s)},
      {"eoi.jpg", PadBefore(clean, 0xD9, "\x5A\x5A\x5A"s, sos)},
      {"clean.jpg", clean},
  };
  const auto pil = PillowDecodes(TestDir("extraneous"), files);
  ASSERT_TRUE(pil.at("clean.jpg"));
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(pil.at(name)) << "Pillow refused " << name;
    ASSERT_TRUE(SameImage(*pil.at(name), *pil.at("clean.jpg"))) << name;
    if (name != "clean.jpg") {
      ExpectAcceptedEverywhere(bytes, clean, *pil.at(name), name, name != "eoi.jpg");
    }
  }
}

// The same in a file with a restart marker every MCU, where a crop is decoded from the
// MCUs under it spliced together (jpeg_restart_splice.h): padding before a restart
// marker in the middle of the scan, and before EOI (enough bytes there that the entropy
// decoder's read-ahead, which libjpeg does not count, leaves some: 2 do not warn).
TEST(DecodeWarningsTest, ExtraneousBytesInRestartMarkedFilesDecodeAsPillowDoes) {
  const std::optional<std::string> marked =
      AddJpegRestartMarkers(ReadFile(TestDataPath(kAnt)), kAnt, 1).jpeg;
  ASSERT_TRUE(marked);
  const size_t middle = marked->find("\xFF\xDA"s) + (marked->size() - marked->find("\xFF\xDA"s)) / 2;
  std::map<std::string, std::string> files = {
      {"rst.jpg", PadBefore(*marked, 0xD3, "\0\0\0"s, middle)},
      {"eoi.jpg", PadBefore(*marked, 0xD9, std::string(40, '\x7F'), middle)},
  };
  const auto pil = PillowDecodes(TestDir("extraneous_rst"), files);
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(pil.at(name)) << "Pillow refused " << name;
    ExpectAcceptedEverywhere(bytes, *marked, *pil.at(name), name, /*in_header=*/false);
  }
}

// Another warning IsFatalJpegWarning accepts, about metadata: an unknown JFIF major
// version (JWRN_JFIF_MAJOR). (libjpeg-turbo 2.1.5 emits neither JWRN_NOT_SEQUENTIAL for
// a baseline scan with Se = 0 nor JWRN_ADOBE_XFORM for an Adobe segment with transform 7
// in a file with or without JFIF: tried, no warning, so they are not tested here.)
TEST(DecodeWarningsTest, UnknownJfifVersionDecodesAsPillowDoes) {
  const std::string clean = ReadFile(TestDataPath(kAnt));
  std::string jfif2 = clean;
  const size_t jfif = jfif2.find("JFIF\0"s);
  ASSERT_NE(jfif, std::string::npos);
  jfif2[jfif + 5] = 2;  // version 2.x
  std::map<std::string, std::string> files = {{"jfif2.jpg", jfif2}};
  const auto pil = PillowDecodes(TestDir("other_warnings"), files);
  for (const auto& [name, bytes] : files) {
    ASSERT_TRUE(pil.at(name)) << "Pillow refused " << name;
    ExpectAcceptedEverywhere(bytes, clean, *pil.at(name), name, /*in_header=*/true);
  }
}

// Damaged entropy-coded data in a whole file: libjpeg warns and fills what it cannot
// decode with grey, and Pillow (like djpeg and tf.io.decode_jpeg) hands that image over;
// so does imgpipe, counting the warning (IsFatalJpegWarning). A bad Huffman code
// (JWRN_HUFF_BAD_CODE), a marker inside the scan's data (JWRN_HIT_MARKER), and in a
// restart-marked file a restart marker out of order (JWRN_MUST_RESYNC). Checked: the
// whole decode, a crop, and the restart-marker rewrite, each against Pillow.
TEST(DecodeWarningsTest, DamagedEntropyDataDecodesAsPillowDoes) {
  const std::string clean = ReadFile(TestDataPath(kAnt));
  ASSERT_EQ(clean.substr(clean.size() - 2), "\xFF\xD9"s);
  const size_t sos = clean.find("\xFF\xDA"s);
  const size_t middle = sos + (clean.size() - sos) / 2;
  std::string bad_code = clean;  // sixteen 1 bits are no code of any Huffman table
  bad_code.replace(middle, 8, "\xFF\x00\xFF\x00\xFF\x00\xFF\x00"s);
  std::string hit_marker = clean;
  hit_marker.replace(middle, 2, "\xFF\xD5"s);
  const std::string marked = *AddJpegRestartMarkers(clean, kAnt, 1).jpeg;
  std::string resync = marked;
  const size_t rst = resync.find("\xFF\xD3"s, resync.find("\xFF\xDA"s) + (resync.size() - sos) / 2);
  ASSERT_NE(rst, std::string::npos);
  resync[rst + 1] = '\xD6';  // RST6 where RST3 belongs
  std::map<std::string, std::string> files = {
      {"bad_code.jpg", bad_code}, {"hit_marker.jpg", hit_marker}, {"resync.jpg", resync}};
  const auto pil = PillowDecodes(TestDir("damaged_entropy"), files);
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(pil.at(name)) << "Pillow refused " << name;
    Image whole;
    EXPECT_EQ(WarningsDuring([&] { whole = DecodeImage(bytes, name); }), 1u);
    EXPECT_TRUE(SameImage(whole, *pil.at(name)));
    JpegRegionOptions crop;
    crop.crop = InnerWindow(whole.width, whole.height);
    const CropWindow& w = *crop.crop;
    EXPECT_TRUE(SameImage(DecodeJpegRegion(bytes, name, crop), CropImage(*pil.at(name), w.x, w.y, w.width, w.height)));
    std::optional<std::string> rewritten = AddJpegRestartMarkers(bytes, name, 1).jpeg;
    if (rewritten) {
      EXPECT_TRUE(SameImage(DecodeImage(*rewritten, name), *pil.at(name)));
    }
  }
}

// A truncated file (a padded one too) is refused by Pillow ("image file is truncated")
// and by every imgpipe path, even a crop above the cut, and without only its EOI.
TEST(DecodeWarningsTest, TruncatedJpegsStayErrorsEverywhere) {
  const std::string clean = ReadFile(TestDataPath(kAnt));
  const std::string padded = PadBefore(clean, 0xDB, "\0\0"s);
  const std::string marked = *AddJpegRestartMarkers(clean, kAnt, 1).jpeg;
  std::map<std::string, std::string> files = {
      {"half.jpg", clean.substr(0, clean.size() / 2)},
      {"no_eoi.jpg", clean.substr(0, clean.size() - 2)},
      {"padded_half.jpg", padded.substr(0, padded.size() / 2)},
      {"marked_half.jpg", marked.substr(0, marked.size() / 2)},
      {"marked_no_eoi.jpg", marked.substr(0, marked.size() - 2)},
  };
  const auto pil = PillowDecodes(TestDir("truncated"), files);
  for (const auto& [name, bytes] : files) {
    EXPECT_FALSE(pil.at(name)) << "Pillow decoded " << name;
    ExpectRefusedEverywhere(bytes, name);
  }
}

// A PNG chunk: length, type, data, CRC-32 (flipped in its last bit when `bad_crc`).
std::string PngChunk(const std::string& type, const std::string& data, bool bad_crc) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : type + data) {
    crc ^= static_cast<uint8_t>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc = ~crc ^ (bad_crc ? 1u : 0u);
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  return be32(static_cast<uint32_t>(data.size())) + type + data + be32(crc);
}

// A bad CRC in an ancillary chunk after the image data (libpng: a benign error,
// "tEXt: CRC error", the chunk dropped): Pillow 9.4 decodes the file, and so does
// imgpipe, to the same pixels. (Before IDAT Pillow refuses it, "broken PNG file";
// imgpipe, through OpenCV's libpng, decodes it.) A truncated PNG stays an error.
TEST(DecodeWarningsTest, PngWithABadAncillaryChunkDecodesAsPillowDoes) {
  const std::string png =
      ReadFile(TestDataPath("images/mixed-formats/1/auto-union-3579207_640.png"));
  const size_t iend = png.rfind("IEND") - 4;
  const std::string bad_text = png.substr(0, iend) +
                               PngChunk("tEXt", "Comment\0hello"s, /*bad_crc=*/true) +
                               png.substr(iend);
  const auto pil =
      PillowDecodes(TestDir("png_crc"), {{"bad_text.png", bad_text}, {"clean.png", png}});
  ASSERT_TRUE(pil.at("bad_text.png"));
  EXPECT_TRUE(SameImage(DecodeImage(bad_text, "bad_text.png"), *pil.at("bad_text.png")));
  EXPECT_TRUE(SameImage(DecodeImage(png, "clean.png"), *pil.at("clean.png")));
  EXPECT_THROW(DecodeImage(png.substr(0, png.size() / 2), "cut.png"), DataError);
}

// Each decode with warnings counts once; each path is logged once (checked by eye in
// the test log: ReportDecodeWarnings has no other output).
TEST(DecodeWarningsTest, ReportsCountEveryDecode) {
  const uint64_t before = DecodeWarningCount();
  ReportDecodeWarnings("a.jpg", 2, "corrupt JPEG data: 2 extraneous bytes before marker 0xdb");
  ReportDecodeWarnings("a.jpg", 1, "corrupt JPEG data: 2 extraneous bytes before marker 0xdb");
  ReportDecodeWarnings("b.png", 1, "tEXt: CRC error");
  EXPECT_EQ(DecodeWarningCount() - before, 3u);
}

}  // namespace
}  // namespace imgpipe
