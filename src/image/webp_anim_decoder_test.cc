#include "image/webp_anim_decoder.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "image/codec.h"
#include "image/decoder_test_util.h"
#include "image/pil_test_util.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// Animated WebPs Pillow writes (save_all=True, two frames): lossy and lossless, RGB and
// RGBA with a varying alpha, one with a background colour; written into `dir`.
std::vector<std::string> WriteAnimatedWebps(const std::string& dir) {
  const std::string script = JoinPath(dir, "write.py");
  WriteFileAtomic(script,
                  "import sys, numpy as np\n"
                  "from PIL import Image\n"
                  "rs = np.random.RandomState(1)\n"
                  "a = Image.fromarray((rs.rand(23, 37, 3) * 255).astype(np.uint8))\n"
                  "b = Image.fromarray((rs.rand(23, 37, 3) * 255).astype(np.uint8))\n"
                  "ra = a.convert('RGBA')\n"
                  "ra.putalpha(Image.fromarray((rs.rand(23, 37) * 255).astype(np.uint8)))\n"
                  "for name, frames, options in [('lossy', [a, b], {}),\n"
                  "    ('lossless', [a, b], {'lossless': True}), ('rgba', [ra, b], {}),\n"
                  "    ('rgba_lossless', [ra, b], {'lossless': True}),\n"
                  "    ('background', [a, b], {'background': (255, 0, 0, 255)})]:\n"
                  "  frames[0].save(sys.argv[1] + '/' + name + '.webp', 'WEBP', save_all=True,\n"
                  "                 append_images=frames[1:], duration=100, **options)\n",
                  /*sync=*/false);
  const std::string command = "/usr/bin/python3 " + script + " " + dir;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return {"lossy.webp", "lossless.webp", "rgba.webp", "rgba_lossless.webp", "background.webp"};
}

// The first frame, as Pillow 9.4 composites it (its WebPAnimDecoder), alpha dropped.
TEST(WebpAnimDecoderTest, FirstFrameMatchesPillow) {
  const std::string dir = TestDir("webp_anim");
  std::map<std::string, std::string> files;
  for (const std::string& name : WriteAnimatedWebps(dir)) files[name] = ReadFile(JoinPath(dir, name));
  const auto pil = PillowDecodes(dir, files);
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(IsAnimatedWebp(bytes));
    ASSERT_TRUE(pil.at(name).has_value());
    const ImageInfo info = ReadImageInfo(bytes, name);
    EXPECT_EQ(info.format, ImageFormat::kWebp);
    EXPECT_EQ(info.width, 37);
    EXPECT_EQ(info.height, 23);
    EXPECT_TRUE(SameImage(DecodeImage(bytes, name), *pil.at(name)));
  }
}

// A cut file: libwebp's demuxer refuses it, as it refuses it to Pillow.
TEST(WebpAnimDecoderTest, TruncatedIsADataError) {
  const std::string dir = TestDir("webp_anim_cut");
  const std::string bytes = ReadFile(JoinPath(dir, WriteAnimatedWebps(dir)[0]));
  EXPECT_EQ(FailureOf(bytes.substr(0, bytes.size() - 50)).reason,
            "corrupt or truncated animated WebP (libwebp's demuxer refuses it)");
}

}  // namespace
}  // namespace imgpipe
