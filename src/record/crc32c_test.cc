#include "record/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "record/record_test_util.h"
#include "record/tfrecord_format.h"
#include "util/file.h"

namespace imgpipe::crc32c {
namespace {

using Implementation = uint32_t (*)(uint32_t, const void*, size_t);

std::vector<std::pair<const char*, Implementation>> Implementations() {
  std::vector<std::pair<const char*, Implementation>> out = {{"portable", &ExtendPortable},
                                                             {"dispatch", &Extend}};
  if (HardwareAvailable()) out.push_back({"hardware", &ExtendHardware});
  return out;
}

// Check values from RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32cTest, KnownValues) {
  for (auto [name, extend] : Implementations()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(extend(0, "123456789", 9), 0xE3069283u);
    EXPECT_EQ(extend(0, "", 0), 0u);
    std::string zeros(32, '\0');
    EXPECT_EQ(extend(0, zeros.data(), zeros.size()), 0x8A9136AAu);
    std::string ones(32, '\xff');
    EXPECT_EQ(extend(0, ones.data(), ones.size()), 0x62A8AB43u);
    std::string ascending(32, '\0');
    for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
    EXPECT_EQ(extend(0, ascending.data(), ascending.size()), 0x46DD794Eu);
    std::string descending(32, '\0');
    for (int i = 0; i < 32; ++i) descending[i] = static_cast<char>(31 - i);
    EXPECT_EQ(extend(0, descending.data(), descending.size()), 0x113FDB5Cu);
  }
}

TEST(Crc32cTest, HardwareIsAvailableOnX86) {
#if defined(__x86_64__)
  // Every x86-64 CPU this project targets has SSE4.2; without it the hardware path
  // would go untested.
  EXPECT_TRUE(HardwareAvailable());
#else
  GTEST_SKIP() << "not an x86-64 build";
#endif
}

// The implementations agree on many lengths (around the three-stream block sizes too)
// at every alignment.
TEST(Crc32cTest, ImplementationsAgree) {
  std::string data = testing::RandomBytes(3 * 8192 * 3 + 3 * 256 * 2 + 64, 7);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 100; ++n) lengths.push_back(n);
  for (size_t block : {size_t{256}, size_t{8192}}) {
    for (size_t k : {1, 2, 3, 4, 6, 7}) {
      for (int delta : {-9, -8, -1, 0, 1, 7, 8, 15}) lengths.push_back(k * block + delta);
    }
  }
  lengths.push_back(data.size() - 8);
  for (size_t n : lengths) {
    for (size_t align = 0; align < 8; ++align) {
      SCOPED_TRACE("length " + std::to_string(n) + " align " + std::to_string(align));
      uint32_t expected = ExtendPortable(0, data.data() + align, n);
      EXPECT_EQ(Extend(0, data.data() + align, n), expected);
      if (HardwareAvailable()) {
        EXPECT_EQ(ExtendHardware(0, data.data() + align, n), expected);
      }
      EXPECT_EQ(ExtendPortable(0x12345678u, data.data() + align, n),
                Extend(0x12345678u, data.data() + align, n));
    }
  }
}

TEST(Crc32cTest, ExtendEqualsOneShot) {
  std::string data = testing::RandomBytes(100000, 11);
  uint32_t whole = Value(data.data(), data.size());
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8191}, size_t{50000}, data.size()}) {
    for (auto [name, extend] : Implementations()) {
      SCOPED_TRACE(std::string(name) + " split " + std::to_string(split));
      uint32_t first = extend(0, data.data(), split);
      EXPECT_EQ(extend(first, data.data() + split, data.size() - split), whole);
    }
  }
  EXPECT_EQ(Extend(Value("hello ", 6), "world", 5), Value("hello world", 11));
}

TEST(Crc32cTest, MaskRoundTrips) {
  uint32_t crc = Value("foo", 3);
  EXPECT_NE(crc, Mask(crc));
  EXPECT_NE(crc, Mask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Unmask(Mask(Mask(crc)))));
  for (uint32_t v : {0u, 1u, 0x80000000u, 0xffffffffu, 0xE3069283u}) EXPECT_EQ(Unmask(Mask(v)), v);
  // Rotated right by 15 bits (0x2507C60D), plus 0xa282ead8.
  EXPECT_EQ(Mask(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(Unmask(0xC78AB0E5u), 0xE3069283u);
}

// Masked values written by TensorFlow: every record header and footer of a real file.
TEST(Crc32cTest, MatchesMaskedValuesInTensorFlowFile) {
  std::string file = ReadFile(testing::TestdataPath("tfrecord/pytorch-data/example.tfrecord"));
  size_t offset = 0;
  int records = 0;
  while (offset < file.size()) {
    const char* header = file.data() + offset;
    uint64_t length = tfrecord::DecodeFixed64(header);
    ASSERT_LE(offset + 16 + length, file.size());
    EXPECT_EQ(Mask(Value(header, 8)), tfrecord::DecodeFixed32(header + 8));
    EXPECT_EQ(Mask(ExtendPortable(0, header + 12, length)),
              tfrecord::DecodeFixed32(header + 12 + length));
    offset += 16 + length;
    ++records;
  }
  EXPECT_EQ(records, 4);
}

}  // namespace
}  // namespace imgpipe::crc32c
