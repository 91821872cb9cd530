#include "image/gif_decoder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/pil_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using namespace std::string_literals;

const char kAntsGif[] = "images/hymenoptera/train/ants/imageNotFound.gif";

// Pillow's decode of a GIF's first frame, and its frame count.
struct PilGif {
  Image rgb;
  int frames = 0;
};

// Runs pil_gif.py into a fresh folder: it writes its own test GIFs there and Pillow's
// decodes of those and of `given`. Returns the folder.
std::string RunPilGif(const std::vector<std::string>& given) {
  const std::string dir = ::testing::TempDir() + "/pil_gif_" + std::to_string(getpid());
  MakeDirectories(dir);
  std::string command = "/usr/bin/python3 " + IMGPIPE_SOURCE_DIR + "/src/image/pil_gif.py " + dir;
  for (const std::string& path : given) command += " " + path;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return dir;
}

PilGif ReadPilGif(const std::string& dir, const std::string& stem) {
  PilGif out;
  std::ifstream txt(JoinPath(dir, stem + ".txt"));
  txt >> out.rgb.width >> out.rgb.height >> out.frames;
  out.rgb.channels = 3;
  std::string bytes = ReadFile(JoinPath(dir, stem + ".rgb"));
  out.rgb.pixels.assign(bytes.begin(), bytes.end());
  return out;
}

// DecodeImage's DataError reason for `bytes` ("(no error)" when it decodes).
std::string GifReason(const std::string& bytes, std::optional<uint64_t>* offset = nullptr) {
  try {
    DecodeImage(bytes, "x.gif");
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "x.gif");
    if (offset) *offset = e.offset();
    return e.reason();
  }
  return "(no error)";
}

// The first frame equals Pillow's Image.open(path).convert("RGB"), byte for byte: the
// photograph-set GIF, an animated one (frames after the first smaller than the screen),
// an interlaced one, one with a transparent index and a grayscale one.
TEST(GifDecoderTest, FirstFrameMatchesPillow) {
  const std::string dir = RunPilGif({TestDataPath(kAntsGif)});
  for (const char* stem : {"imageNotFound", "animated", "interlaced", "transparent", "gray"}) {
    SCOPED_TRACE(stem);
    const std::string path = std::string(stem) == "imageNotFound" ? TestDataPath(kAntsGif)
                                                                   : JoinPath(dir, std::string(stem) + ".gif");
    PilGif pil = ReadPilGif(dir, stem);
    Image ours = DecodeImage(ReadFile(path), path);
    ASSERT_EQ(ours.width, pil.rgb.width);
    ASSERT_EQ(ours.height, pil.rgb.height);
    ASSERT_EQ(ours.channels, 3);
    EXPECT_EQ(MaxAbsDiff(ours, pil.rgb), 0);
    EXPECT_EQ(pil.frames, std::string(stem) == "animated" ? 3 : 1);
  }
}

TEST(GifDecoderTest, GrayIsTheLumaOfRgb) {
  const std::string bytes = ReadFile(TestDataPath(kAntsGif));
  Image rgb = DecodeImage(bytes, "a.gif");
  DecodeOptions gray_options;
  gray_options.channels = 1;
  Image gray = DecodeImage(bytes, "a.gif", gray_options);
  ASSERT_EQ(gray.pixels.size(), rgb.pixels.size() / 3);
  for (size_t i = 0; i < gray.pixels.size(); i += 997) {
    const uint32_t r = rgb.pixels[3 * i], g = rgb.pixels[3 * i + 1], b = rgb.pixels[3 * i + 2];
    EXPECT_EQ(gray.pixels[i], (299 * r + 587 * g + 114 * b + 500) / 1000);
  }
}

TEST(GifDecoderTest, ReadImageInfoAcceptsGif) {
  ImageInfo info = ReadImageInfo(ReadFile(TestDataPath(kAntsGif)), "a.gif");
  EXPECT_EQ(info.format, ImageFormat::kGif);
  EXPECT_EQ(info.width, 300);
  EXPECT_EQ(info.height, 300);
}

// Truncated or damaged data up to the end of the first frame is a DataError naming what
// failed and where; damage after the first frame is not.
TEST(GifDecoderTest, CorruptDataIsADataError) {
  const std::string gif = ReadFile(TestDataPath(kAntsGif));
  std::optional<uint64_t> offset;
  std::string reason = GifReason(gif.substr(0, gif.size() / 2), &offset);
  EXPECT_EQ(reason.rfind("corrupt GIF data: cannot read the pixels of frame 1 (row ", 0), 0) << reason;
  ASSERT_TRUE(offset.has_value());
  EXPECT_LE(*offset, gif.size() / 2);
  // Header only: no frame.
  reason = GifReason(gif.substr(0, 13));
  EXPECT_EQ(reason.rfind("corrupt GIF data: cannot read ", 0), 0) << reason;
  // A trailer straight after the screen descriptor (no global colour table).
  std::string no_frame = "GIF89a\x02\0\x02\0\0\0\0;"s;
  EXPECT_EQ(GifReason(no_frame), "corrupt GIF data: no frame before the trailer");
  // Garbage where the first record should be.
  std::string garbage = gif.substr(0, 13 + 3 * 256) + std::string(64, '\x99');
  reason = GifReason(garbage);
  EXPECT_EQ(reason.rfind("corrupt GIF data: cannot read ", 0), 0) << reason;
}

TEST(GifDecoderTest, DamageAfterTheFirstFrameOnlyEndsTheCount) {
  const std::string dir = RunPilGif({});
  const std::string animated = ReadFile(JoinPath(dir, "animated.gif"));
  PilGif pil = ReadPilGif(dir, "animated");
  // Cut in the middle of the last frame: the first frame still decodes.
  Image ours = DecodeImage(animated.substr(0, animated.size() - 40), "cut.gif");
  EXPECT_EQ(MaxAbsDiff(ours, pil.rgb), 0);
}

// Where the second image descriptor of `gif` starts (its 0x2C), walking the blocks.
size_t SecondDescriptor(const std::string& gif) {
  auto byte = [&](size_t at) { return static_cast<uint8_t>(gif.at(at)); };
  auto skip_sub_blocks = [&](size_t at) {
    while (byte(at) != 0) at += 1 + byte(at);
    return at + 1;
  };
  size_t at = 13 + ((byte(10) & 0x80) ? 3 * (2 << (byte(10) & 7)) : 0);
  for (int images = 0;;) {
    if (byte(at) == 0x21) {
      at = skip_sub_blocks(at + 2);
    } else if (byte(at) == 0x2C) {
      if (++images == 2) return at;
      const uint8_t flags = byte(at + 9);
      at += 10 + ((flags & 0x80) ? 3 * (2 << (flags & 7)) : 0);
      at = skip_sub_blocks(at + 1);
    } else {
      ADD_FAILURE() << "no second frame";
      return 0;
    }
  }
}

// A damaged second frame's descriptor (cut inside it, garbage in its fields, a local
// colour table that is not there, a record type that is no record) costs nothing: the
// first frame decodes to Pillow's pixels, as Pillow (which reads no later frame) shows
// each file.
TEST(GifDecoderTest, DamagedLaterFrameCostsNothing) {
  const std::string animated = ReadFile(JoinPath(RunPilGif({}), "animated.gif"));
  const size_t second = SecondDescriptor(animated);
  ASSERT_GT(second, 0u);
  std::string garbage = animated, table = animated, record = animated;
  for (size_t i = 1; i < 9; ++i) garbage[second + i] = '\xFF';
  table[second + 9] = '\x87';
  table.resize(second + 40);
  record[second] = '\x99';
  const std::map<std::string, std::string> files = {{"cut_descriptor.gif", animated.substr(0, second + 5)},
                                                    {"garbage_descriptor.gif", garbage},
                                                    {"missing_table.gif", table},
                                                    {"bad_record.gif", record}};
  const auto pil = PillowDecodes(TestDir("gif_damaged"), files);
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(pil.at(name).has_value());
    EXPECT_TRUE(SameImage(DecodeImage(bytes, name), *pil.at(name)));
  }
}

}  // namespace
}  // namespace imgpipe
