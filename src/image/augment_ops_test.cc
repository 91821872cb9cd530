#include "image/augment_ops.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "image/augment_policy.h"
#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/pil_test_util.h"
#include "image/resize.h"
#include "image/transforms.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// One comparison with torchvision: an input (by index), an op, its magnitude and a fill
// (nullopt: torchvision's fill=None).
struct OpCase {
  int image;
  AugmentOp op;
  double magnitude;
  std::optional<AugmentFill> fill;
};

// What pil_augment.py printed and wrote.
struct TorchvisionRun {
  std::vector<Image> outputs;           // one per case
  std::vector<std::string> space_lines;  // "space NAME SIGNED V0 V1 ..."
};

// The manifest line of one case.
std::string OpLine(const OpCase& c, int channels) {
  char magnitude[64];
  std::snprintf(magnitude, sizeof magnitude, "%.17g", c.magnitude);
  std::string fill = "none";
  if (c.fill) {
    fill = std::to_string((*c.fill)[0]);
    for (int k = 1; k < channels; ++k) fill += "," + std::to_string((*c.fill)[k]);
  }
  return "op " + std::to_string(c.image) + " " + AugmentOpName(c.op) + " " + magnitude + " " +
         fill + "\n";
}

// Runs pil_augment.py (torchvision's _apply_op on PIL images, through /usr/bin/python3)
// on `cases` over `images`, and its `space` queries ("KIND BINS HEIGHT WIDTH"). Any
// failure of the script fails the test.
TorchvisionRun RunTorchvision(const std::vector<Image>& images, const std::vector<OpCase>& cases,
                              const std::vector<std::string>& space_queries) {
  const std::string dir = TestDir("pil_augment");
  std::string manifest;
  for (size_t i = 0; i < images.size(); ++i) {
    const Image& image = images[i];
    const std::string in = JoinPath(dir, std::to_string(i) + ".in");
    WriteFileAtomic(in, std::string(image.pixels.begin(), image.pixels.end()), false);
    manifest += std::string("image ") + (image.channels == 1 ? "L " : "RGB ") + in + " " +
                std::to_string(image.width) + " " + std::to_string(image.height) + "\n";
  }
  for (const OpCase& c : cases) manifest += OpLine(c, images[c.image].channels);
  for (const std::string& q : space_queries) manifest += "space " + q + "\n";
  const std::string manifest_path = JoinPath(dir, "manifest.txt");
  const std::string out_path = JoinPath(dir, "out.raw"), text_path = JoinPath(dir, "spaces.txt");
  WriteFileAtomic(manifest_path, manifest, false);
  const std::string command = "/usr/bin/python3 " + IMGPIPE_SOURCE_DIR + "/src/image/pil_augment.py " +
                              manifest_path + " " + out_path + " > " + text_path;
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command;
  TorchvisionRun run;
  const std::string raw = status == 0 ? ReadFile(out_path) : std::string();
  size_t at = 0;
  for (const OpCase& c : cases) {
    Image out = images[c.image];
    if (at + out.pixels.size() <= raw.size()) {
      std::copy_n(raw.data() + at, out.pixels.size(), out.pixels.begin());
    }
    at += out.pixels.size();
    run.outputs.push_back(std::move(out));
  }
  std::istringstream text(status == 0 ? ReadFile(text_path) : std::string());
  for (std::string line; std::getline(text, line);) run.space_lines.push_back(line);
  for (size_t i = 0; i < images.size(); ++i) RemoveFile(JoinPath(dir, std::to_string(i) + ".in"));
  for (const std::string& path : {manifest_path, out_path, text_path}) RemoveFile(path);
  return run;
}

// A photo from the test data, decoded (RGB or grey) and resized to width x height.
Image Photo(const std::string& dir, size_t index, int width, int height, int channels = 3) {
  const std::string path = ImageFilesIn(dir).at(index);
  DecodeOptions options;
  options.channels = channels;
  return Resize(DecodeImage(ReadFile(path), path, options), width, height);
}

// `image` with its samples squeezed into [70, 165]: autocontrast and equalize have work.
Image Dim(Image image) {
  for (uint8_t& v : image.pixels) v = static_cast<uint8_t>(70 + v * 3 / 8);
  return image;
}

// A width x height image of the values `values` in turn.
Image Pattern(int width, int height, int channels, std::vector<uint8_t> values) {
  Image image = GradientImage(width, height, channels);
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = values[i % values.size()];
  return image;
}

// The inputs: photos at several sizes (odd ones, portrait, grey), a gradient, a dim photo
// and small, few-valued or very wide images for the edge cases.
std::vector<Image> TestImages() {
  return {Photo("images/hymenoptera/train/ants", 0, 224, 224),
          Photo("images/hymenoptera/train/bees", 3, 223, 151),
          Photo("images/photos-by-class/100", 0, 151, 223),
          Photo("images/hymenoptera/val/bees", 1, 97, 131),
          Photo("images/hymenoptera/val/ants", 2, 101, 77, 1),
          GradientImage(64, 48, 3),
          Dim(Photo("images/photos-by-class/134", 0, 120, 90)),
          Pattern(2, 2, 3, {0, 255, 7, 100, 3}),
          Pattern(5, 1, 1, {9}),
          Pattern(33, 17, 3, {40, 40, 40, 200, 200, 200, 40}),
          // Past 32768 pixels Pillow maps positions in doubles, not 16.16 fixed point.
          Resize(Photo("images/hymenoptera/val/ants", 3, 300, 3, 1), 40000, 3)};
}

// Magnitudes per op: torchvision's policy values (float32 widened), negative ones and
// extremes beyond the policies' ranges.
std::vector<std::pair<AugmentOp, double>> OpMagnitudes() {
  using Op = AugmentOp;
  std::vector<std::pair<Op, double>> list;
  auto add = [&](Op op, std::vector<double> magnitudes) {
    for (double m : magnitudes) list.emplace_back(op, m);
  };
  const double f099 = 0.99f, f03 = 0.3f, f0627 = 0.627000033855438232;
  add(Op::kIdentity, {0});
  for (Op op : {Op::kShearX, Op::kShearY}) add(op, {0, f03, -f03, f099, -f099, 0.0123, 5.0, -1.7});
  for (Op op : {Op::kTranslateX, Op::kTranslateY}) {
    add(op, {0, 14.7, -14.7, 32, -13.866666793823242, 67.67371368408203, -100, 300});
  }
  add(Op::kRotate, {0, 9, -9, 30, -30, 90, -90, 180, 270, 135, -135, 26.666666030883789, 360,
                    720.5, 45, -0.25});
  for (Op op : {Op::kBrightness, Op::kColor, Op::kContrast, Op::kSharpness}) {
    add(op, {0, 0.5, -0.5, f099, -f099, -1, 0.9, f0627, -f0627, 0.123456, 3.0, -2.5});
  }
  add(Op::kPosterize, {0, 1, 2, 3, 4, 5, 6, 7, 8, 4.9});
  add(Op::kSolarize, {0, 8.5, 127.5, 128, 255, 256, -1, 246.5});
  add(Op::kAutoContrast, {0});
  add(Op::kEqualize, {0});
  add(Op::kInvert, {0});
  return list;
}

// Every op at every magnitude on every image, and the geometric ones with a fill too,
// equals torchvision's _apply_op on the PIL image: byte for byte. Prints each op's largest
// difference.
TEST(AugmentOpsTest, MatchesTorchvisionOnPhotos) {
  const std::vector<Image> images = TestImages();
  std::vector<OpCase> cases;
  for (int i = 0; i < static_cast<int>(images.size()); ++i) {
    for (const auto& [op, magnitude] : OpMagnitudes()) {
      cases.push_back({i, op, magnitude, std::nullopt});
      if (op <= AugmentOp::kRotate && op != AugmentOp::kIdentity) {
        cases.push_back({i, op, magnitude, AugmentFill{17, 200, 96}});
      }
    }
  }
  const TorchvisionRun run = RunTorchvision(images, cases, {});
  std::map<AugmentOp, std::pair<int, int>> per_op;  // op -> (cases, largest difference)
  for (size_t i = 0; i < cases.size(); ++i) {
    const OpCase& c = cases[i];
    Image ours = images[c.image];
    ApplyAugmentOp(&ours, c.op, c.magnitude, c.fill.value_or(AugmentFill{}));
    SCOPED_TRACE(std::string(AugmentOpName(c.op)) + " " + std::to_string(c.magnitude) +
                 " on image " + std::to_string(c.image) + (c.fill ? " with a fill" : ""));
    ASSERT_EQ(ours.pixels.size(), run.outputs[i].pixels.size());
    const int diff = MaxAbsDiff(ours, run.outputs[i]);
    EXPECT_EQ(diff, 0);
    auto& [count, most] = per_op[c.op];
    ++count;
    most = std::max(most, diff);
  }
  std::printf("%-13s %6s %s\n", "op", "cases", "max |ours - torchvision|");
  for (const auto& [op, stats] : per_op) {
    std::printf("%-13s %6d %d\n", AugmentOpName(op), stats.first, stats.second);
  }
}

// The augmentation spaces equal torchvision's _augmentation_space: the ops in order,
// their signs and every magnitude as float32, bit for bit.
TEST(AugmentOpsTest, SpacesMatchTorchvision) {
  struct Query {
    AugmentPolicyKind kind;
    int bins, height, width;
  };
  const std::vector<Query> queries = {
      {AugmentPolicyKind::kTrivialAugmentWide, 31, 224, 224},
      {AugmentPolicyKind::kTrivialAugmentWide, 50, 64, 64},
      {AugmentPolicyKind::kTrivialAugmentWide, 10, 224, 224},
      {AugmentPolicyKind::kRandAugment, 31, 224, 224},
      {AugmentPolicyKind::kRandAugment, 31, 151, 223},
      {AugmentPolicyKind::kRandAugment, 31, 375, 500},
      {AugmentPolicyKind::kRandAugment, 47, 300, 200},
      {AugmentPolicyKind::kRandAugment, 10, 333, 517},
      {AugmentPolicyKind::kAutoAugmentImageNet, 31, 224, 224},
      {AugmentPolicyKind::kAutoAugmentImageNet, 10, 151, 223}};
  std::vector<std::string> lines;
  for (const Query& q : queries) {
    lines.push_back(std::string(AugmentPolicyName(q.kind)) + " " + std::to_string(q.bins) + " " +
                    std::to_string(q.height) + " " + std::to_string(q.width));
  }
  const TorchvisionRun run = RunTorchvision({}, {}, lines);
  size_t at = 0;
  for (size_t i = 0; i < queries.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const Query& q = queries[i];
    for (const AugmentSpaceOp& op : AugmentationSpace(q.kind, q.bins, q.height, q.width)) {
      ASSERT_LT(at, run.space_lines.size());
      std::istringstream fields(run.space_lines[at++]);
      std::string tag, name;
      int is_signed = -1;
      fields >> tag >> name >> is_signed;
      EXPECT_EQ(name, AugmentOpName(op.op));
      EXPECT_EQ(is_signed == 1, op.is_signed) << name;
      std::vector<float> theirs;
      for (std::string v; fields >> v;) theirs.push_back(static_cast<float>(std::stod(v)));
      EXPECT_EQ(theirs, op.magnitudes) << name;
    }
  }
  EXPECT_EQ(at, run.space_lines.size());
}

// Grey images, fills and odd sizes aside: the checks every op makes.
TEST(AugmentOpsTest, BadArgumentsThrow) {
  Image rgba = GradientImage(8, 8, 4);
  EXPECT_THROW(ApplyAugmentOp(&rgba, AugmentOp::kInvert, 0), InvalidArgument);
  Image rgb = GradientImage(8, 8, 3);
  EXPECT_THROW(Posterize(&rgb, 9), InvalidArgument);
  EXPECT_THROW(ApplyAugmentOp(&rgb, AugmentOp::kPosterize, -1.5), InvalidArgument);
  EXPECT_THROW(RotateNearest(rgb, 10, {}, &rgb), InvalidArgument);
  EXPECT_THROW(EnhanceSharpness(rgb, 2, &rgb), InvalidArgument);
  EXPECT_EQ(ParseAugmentOp("ShearX"), AugmentOp::kShearX);
  EXPECT_EQ(ParseAugmentOp("AutoContrast"), AugmentOp::kAutoContrast);
  try {
    ParseAugmentOp("shearx");
    FAIL() << "no throw";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'shearx'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ShearX"), std::string::npos) << e.what();
  }
}

// The ops IsGeometricAugmentOp calls non-geometric commute with a horizontal flip, byte for
// byte, on every test image at every magnitude (the train preset flips after them); the
// geometric ones do not, on a photo.
TEST(AugmentOpsTest, NonGeometricOpsCommuteWithTheFlip) {
  const std::vector<Image> images = TestImages();
  std::map<AugmentOp, bool> some_differ;
  for (size_t i = 0; i < images.size(); ++i) {
    for (const auto& [op, magnitude] : OpMagnitudes()) {
      SCOPED_TRACE(std::string(AugmentOpName(op)) + " " + std::to_string(magnitude) + " on image " +
                   std::to_string(i));
      Image op_then_flip = images[i];
      ApplyAugmentOp(&op_then_flip, op, magnitude);
      HorizontalFlip(&op_then_flip);
      Image flip_then_op = images[i];
      HorizontalFlip(&flip_then_op);
      ApplyAugmentOp(&flip_then_op, op, magnitude);
      if (!IsGeometricAugmentOp(op)) {
        EXPECT_EQ(op_then_flip.pixels, flip_then_op.pixels);
      } else if (i == 0) {
        some_differ[op] = some_differ[op] || op_then_flip.pixels != flip_then_op.pixels;
      }
    }
  }
  for (AugmentOp op : {AugmentOp::kShearX, AugmentOp::kShearY, AugmentOp::kTranslateX,
                       AugmentOp::kRotate}) {
    EXPECT_TRUE(some_differ[op]) << AugmentOpName(op);
  }
}

}  // namespace
}  // namespace imgpipe
