#include "extract/npy_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "extract/extract_test_util.h"
#include "extract/npy_format.h"
#include "record/crc32c_file.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::npy {
namespace {

TEST(NpyHeader, MatchesNumPysLayout) {
  std::string header = EncodeHeader("<f4", {3, 512});
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.substr(0, 6), std::string("\x93NUMPY"));
  EXPECT_EQ(header[6], 1);
  EXPECT_EQ(header[7], 0);
  const size_t header_len = static_cast<uint8_t>(header[8]) | (static_cast<uint8_t>(header[9]) << 8);
  EXPECT_EQ(header_len + kPreambleBytes, header.size());
  EXPECT_EQ(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 512), }"), 10u);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_NE(EncodeHeader("<i8", {7}).find("'shape': (7,)"), std::string::npos);
  EXPECT_NE(EncodeHeader("<i8", {0, 4}).find("'shape': (0, 4)"), std::string::npos);
}

TEST(NpyHeader, ParsesWhatItWritesAndNumPyStyleVariants) {
  for (auto shape : std::vector<std::vector<uint64_t>>{{}, {5}, {0, 3}, {2, 3, 4}}) {
    ArrayInfo info = ParseHeader(EncodeHeader("<f2", shape), "x.npy");
    EXPECT_EQ(info.descr, "<f2");
    EXPECT_EQ(info.shape, shape);
    EXPECT_EQ(info.data_offset % 64, 0u);
  }
  // Keys in another order and without the trailing comma, as other writers may put them.
  std::string dict = "{\"shape\": (4,2), 'fortran_order': False, 'descr': '<i8'}\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict;
  ArrayInfo info = ParseHeader(bytes, "y.npy");
  EXPECT_EQ(info.descr, "<i8");
  EXPECT_EQ(info.shape, (std::vector<uint64_t>{4, 2}));
}

TEST(NpyHeader, RejectsWhatItCannotRead) {
  EXPECT_THROW(ParseHeader("PK\x03\x04 not npy", "z.npy"), DataError);
  std::string fortran = EncodeHeader("<f4", {2, 2});
  fortran.replace(fortran.find("False"), 5, "True ");
  try {
    ParseHeader(fortran, "z.npy");
    FAIL() << "Fortran order accepted";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "z.npy");
    EXPECT_TRUE(e.offset().has_value());
    EXPECT_NE(e.reason().find("Fortran"), std::string::npos);
  }
  std::string v2 = EncodeHeader("<f4", {1});
  v2[6] = 2;
  EXPECT_THROW(ParseHeader(v2, "z.npy"), DataError);
  EXPECT_THROW(ItemBytes("<c8"), Error);
  EXPECT_EQ(ItemBytes("<U7"), 28u);
}

TEST(UnicodeColumn, FixedWidthUtf32AndBack) {
  std::vector<std::string> ids = {"a/b.jpg", "", "caf\xc3\xa9/\xe7\x8c\xab.jpg", "\xf0\x9f\x90\x88"};
  UnicodeColumn column = EncodeUnicodeColumn(ids);
  EXPECT_EQ(column.descr, "<U10");  // "café/猫.jpg" is 10 code points
  EXPECT_EQ(column.data.size(), ids.size() * 40);
  EXPECT_EQ(column.data.substr(0, 8), std::string("a\0\0\0/\0\0\0", 8));
  EXPECT_EQ(DecodeUnicodeColumn(column.descr, column.data), ids);
  // Invalid UTF-8 (a lone continuation byte, an overlong '/', a surrogate) -> U+FFFD each.
  UnicodeColumn bad = EncodeUnicodeColumn({"x\x80y", "\xc0\xaf", "\xed\xa0\x80"});
  std::vector<std::string> back = DecodeUnicodeColumn(bad.descr, bad.data);
  EXPECT_EQ(back[0], "x\xef\xbf\xbdy");
  EXPECT_EQ(back[1], "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(back[2], "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(EncodeUnicodeColumn({}).descr, "<U1");
}

TEST(WriteArray, WritesAtomicallyAndReadHeaderChecksTheSize) {
  std::string dir = extract::FreshTestDir("npy_write");
  std::string path = JoinPath(dir, "a.npy");
  std::vector<int64_t> values = {1, -1, 1LL << 40};
  uint32_t crc =
      WriteArray(path, "<i8", {3}, std::string_view(reinterpret_cast<const char*>(values.data()), 24));
  EXPECT_EQ(crc, FileCrc32c(path));  // of the bytes written, header included
  ArrayInfo info = ReadHeader(path);
  EXPECT_EQ(info.shape, std::vector<uint64_t>{3});
  EXPECT_EQ(FileSize(path), info.data_offset + 24);
  EXPECT_EQ(ListDirectory(dir), std::vector<std::string>{"a.npy"});  // no temporary left
  EXPECT_THROW(WriteArray(JoinPath(dir, "b.npy"), "<i8", {4}, std::string(24, '\0')), Error);
  EXPECT_FALSE(PathExists(JoinPath(dir, "b.npy")));
  // A truncated file is not taken for a complete one.
  std::string bytes = ReadFile(path);
  WriteFileAtomic(path, bytes.substr(0, bytes.size() - 1));
  EXPECT_THROW(ReadHeader(path), DataError);
}

TEST(WriteArray, NumPyLoadsEveryDtypeUnchanged) {
  if (!extract::PythonHasNumpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy";
  std::string dir = extract::FreshTestDir("npy_numpy");
  std::vector<float> f = {0.5f, -2.0f, 3.25f, 1e-3f, 7.0f, -0.0f};
  WriteArray(JoinPath(dir, "f4.npy"), "<f4", {2, 3}, std::string_view(reinterpret_cast<const char*>(f.data()), 24));
  std::vector<uint16_t> h = {0x3c00, 0xc000, 0x3555};  // 1.0, -2.0, 0.333251953125
  WriteArray(JoinPath(dir, "f2.npy"), "<f2", {3, 1}, std::string_view(reinterpret_cast<const char*>(h.data()), 6));
  std::vector<int64_t> i = {-1, 42};
  WriteArray(JoinPath(dir, "i8.npy"), "<i8", {2}, std::string_view(reinterpret_cast<const char*>(i.data()), 16));
  UnicodeColumn u = EncodeUnicodeColumn({"class_000/img_000001.jpg", "caf\xc3\xa9.jpg"});
  WriteArray(JoinPath(dir, "u.npy"), u.descr, {2}, u.data);
  WriteArray(JoinPath(dir, "empty.npy"), "<f4", {0, 512}, "");
  std::string script =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "f4 = np.load(d + '/f4.npy'); assert f4.dtype == np.dtype('<f4') and f4.shape == (2, 3)\n"
      "assert f4.tolist() == [[0.5, -2.0, 3.25], [np.float32(1e-3).item(), 7.0, -0.0]], f4\n"
      "f2 = np.load(d + '/f2.npy'); assert f2.dtype == np.dtype('<f2') and f2.shape == (3, 1)\n"
      "assert f2[:, 0].tolist() == [1.0, -2.0, 0.333251953125], f2\n"
      "i8 = np.load(d + '/i8.npy'); assert i8.dtype == np.int64 and i8.tolist() == [-1, 42]\n"
      "u = np.load(d + '/u.npy'); assert u.dtype == np.dtype('<U24'), u.dtype\n"
      "assert u.tolist() == ['class_000/img_000001.jpg', 'caf\\u00e9.jpg'], u\n"
      "e = np.load(d + '/empty.npy'); assert e.shape == (0, 512)\n"
      "print('ok')\n";
  EXPECT_EQ(extract::RunPython(script, {dir}), "ok\n");
}

}  // namespace
}  // namespace imgpipe::npy
