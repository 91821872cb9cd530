#include "extract/npy_file.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "extract/npy_format.h"
#include "record/crc32c_file.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::npy {

static_assert(std::endian::native == std::endian::little,
              "the .npy writer copies memory as little endian");

namespace {

// A shape as a Python tuple: "()", "(5,)", "(2, 3)".
std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

// A cursor over the header's dict literal; each Expect/Parse throws DataError at the
// byte offset where the text stops making sense.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, size_t base_offset, const std::string& path)
      : text_(text), base_(base_offset), path_(path) {}

  void SkipSpaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  bool Consume(char c) {
    SkipSpaces();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Consume(c)) Fail(std::string("expected '") + c + "'");
  }
  std::string ParseQuoted() {
    SkipSpaces();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) Fail("expected a string");
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) Fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool ParseBool() {
    SkipSpaces();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      size_t n = std::strlen(word);
      if (text_.substr(pos_, n) == word) {
        pos_ += n;
        return value;
      }
    }
    Fail("expected True or False");
  }
  std::vector<uint64_t> ParseShape() {
    Expect('(');
    std::vector<uint64_t> shape;
    while (!Consume(')')) {
      SkipSpaces();
      size_t start = pos_;
      uint64_t value = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (value > (UINT64_MAX - 9) / 10) Fail("dimension too large");
        value = value * 10 + static_cast<uint64_t>(text_[pos_++] - '0');
      }
      if (pos_ == start) Fail("expected a dimension");
      shape.push_back(value);
      if (!Consume(',')) {
        Expect(')');
        break;
      }
    }
    return shape;
  }
  [[noreturn]] void Fail(const std::string& reason) const {
    throw DataError(path_, base_ + pos_, "not a NumPy .npy header: " + reason);
  }

 private:
  std::string_view text_;
  size_t base_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Appends `c` as UTF-32LE.
void AppendUtf32(uint32_t c, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((c >> (8 * i)) & 0xff));
}

// The code points of `s`; an invalid UTF-8 sequence gives U+FFFD per bad byte.
std::vector<uint32_t> DecodeUtf8(std::string_view s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
    uint8_t b = byte(i);
    size_t length = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    uint32_t c = length == 1 ? b : length == 2 ? (b & 0x1f) : length == 3 ? (b & 0x0f) : (b & 0x07);
    bool valid = length > 0 && i + length <= s.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (byte(i + k) & 0xc0) == 0x80;
      c = (c << 6) | (byte(i + k) & 0x3f);
    }
    static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (valid && (c < kMinimum[length] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))) {
      valid = false;
    }
    out.push_back(valid ? c : 0xfffd);
    i += valid ? length : 1;
  }
  return out;
}

// Appends code point `c` as UTF-8.
void AppendUtf8(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

// The number of elements of an array of `shape` (1 for a scalar).
uint64_t ElementCount(const std::vector<uint64_t>& shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

}  // namespace

size_t ItemBytes(std::string_view descr) {
  if (descr == "<f2") return 2;
  if (descr == "<f4") return 4;
  if (descr == "<i8") return 8;
  if (descr.size() > 2 && descr.substr(0, 2) == "<U" &&
      descr.find_first_not_of("0123456789", 2) == std::string_view::npos && descr.size() < 12) {
    return 4 * std::stoull(std::string(descr.substr(2)));
  }
  throw Error("unsupported NumPy dtype '" + std::string(descr) + "'");
}

std::string EncodeHeader(std::string_view descr, const std::vector<uint64_t>& shape) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " +
                     ShapeText(shape) + ", }";
  size_t total = kPreambleBytes + dict.size() + 1;  // + the final '\n'
  size_t padded = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  if (dict.size() > kMaxHeaderBytes) throw Error("NumPy header too long for version 1.0");
  std::string out(kMagic, kMagicBytes);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict;
}

ArrayInfo ParseHeader(std::string_view bytes, const std::string& path) {
  if (bytes.size() < kPreambleBytes || bytes.substr(0, kMagicBytes) != std::string_view(kMagic, kMagicBytes)) {
    throw DataError(path, 0, "not a NumPy .npy file (no \\x93NUMPY magic)");
  }
  if (bytes[6] != 1 || bytes[7] != 0) {
    throw DataError(path, 6, "NumPy format version " + std::to_string(bytes[6]) + "." +
                                 std::to_string(bytes[7]) + " (only 1.0 is read)");
  }
  size_t header_bytes = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
  if (bytes.size() < kPreambleBytes + header_bytes) {
    throw DataError(path, bytes.size(), "truncated NumPy header");
  }
  HeaderParser parser(bytes.substr(kPreambleBytes, header_bytes), kPreambleBytes, path);
  ArrayInfo info;
  info.data_offset = kPreambleBytes + header_bytes;
  bool have_descr = false, have_shape = false, have_order = false;
  parser.Expect('{');
  while (!parser.Consume('}')) {
    std::string key = parser.ParseQuoted();
    parser.Expect(':');
    if (key == "descr") {
      info.descr = parser.ParseQuoted();
      have_descr = true;
    } else if (key == "fortran_order") {
      if (parser.ParseBool()) parser.Fail("Fortran order is not supported");
      have_order = true;
    } else if (key == "shape") {
      info.shape = parser.ParseShape();
      have_shape = true;
    } else {
      parser.Fail("unknown key '" + key + "'");
    }
    if (!parser.Consume(',')) {
      parser.Expect('}');
      break;
    }
  }
  if (!have_descr || !have_shape || !have_order) parser.Fail("missing descr, fortran_order or shape");
  return info;
}

ArrayInfo ReadHeader(const std::string& path) {
  RandomAccessFile file(path);
  std::string head(kPreambleBytes, '\0');
  head.resize(file.Read(0, head.data(), head.size()));
  if (head.size() == kPreambleBytes) {
    size_t header_bytes = static_cast<uint8_t>(head[8]) | (static_cast<size_t>(static_cast<uint8_t>(head[9])) << 8);
    head.resize(kPreambleBytes + header_bytes);
    head.resize(file.Read(0, head.data(), head.size()));
  }
  ArrayInfo info = ParseHeader(head, path);
  uint64_t expected = info.data_offset + ElementCount(info.shape) * ItemBytes(info.descr);
  if (file.size() != expected) {
    throw DataError(path, std::min<uint64_t>(file.size(), expected),
                    "file has " + std::to_string(file.size()) + " bytes, its header describes " +
                        std::to_string(expected));
  }
  return info;
}

uint32_t WriteArray(const std::string& path, std::string_view descr,
                    const std::vector<uint64_t>& shape, std::string_view data) {
  uint64_t expected = ElementCount(shape) * ItemBytes(descr);
  if (data.size() != expected) {
    throw Error(path + ": " + std::to_string(data.size()) + " bytes of data for an array of " +
                std::to_string(expected) + " bytes");
  }
  AtomicFileWriter writer(path);
  Crc32cWritableFile file(writer.file());
  file.Append(EncodeHeader(descr, shape));
  file.Append(data);
  writer.Commit();
  return file.crc32c();
}

UnicodeColumn EncodeUnicodeColumn(const std::vector<std::string>& utf8_strings) {
  std::vector<std::vector<uint32_t>> decoded;
  size_t width = 1;
  for (const std::string& s : utf8_strings) {
    decoded.push_back(DecodeUtf8(s));
    width = std::max(width, decoded.back().size());
  }
  UnicodeColumn column;
  column.descr = "<U" + std::to_string(width);
  column.data.reserve(decoded.size() * width * 4);
  for (const std::vector<uint32_t>& code_points : decoded) {
    for (uint32_t c : code_points) AppendUtf32(c, &column.data);
    column.data.append((width - code_points.size()) * 4, '\0');
  }
  return column;
}

std::vector<std::string> DecodeUnicodeColumn(std::string_view descr, std::string_view data) {
  size_t item = ItemBytes(descr);
  if (descr.substr(0, 2) != "<U" || data.size() % item != 0) {
    throw Error("not the data of a '<U' array of dtype " + std::string(descr));
  }
  std::vector<std::string> out;
  for (size_t start = 0; start < data.size(); start += item) {
    std::string s;
    for (size_t k = 0; k < item; k += 4) {
      const auto* p = reinterpret_cast<const uint8_t*>(data.data() + start + k);
      uint32_t c = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
      if (c == 0) break;
      AppendUtf8(c, &s);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace imgpipe::npy
