#include "image/xpm_decoder.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "image/decode_warnings.h"
#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

constexpr size_t kSignatureSize = 9;  // "/* XPM */"
constexpr int64_t kMaxKeyChars = 8;

// Lines of the text, '\n' kept at their end; the first starts after the signature.
class XpmLines {
 public:
  explicit XpmLines(std::string_view bytes) : bytes_(bytes), at_(kSignatureSize) {}

  // The next line (empty at the end of the text); `offset` is where it starts.
  std::string_view Next() {
    offset_ = at_;
    if (at_ >= bytes_.size()) return {};
    size_t end = bytes_.find('\n', at_);
    end = end == std::string_view::npos ? bytes_.size() : end + 1;
    std::string_view line = bytes_.substr(at_, end - at_);
    at_ = end;
    return line;
  }

  // The next line that is neither blank nor a comment ("/* ... */").
  std::string_view NextContent() {
    while (true) {
      std::string_view line = Next();
      const size_t first = line.find_first_not_of(" \t\r\n");
      if (line.empty() || (first != std::string_view::npos && line.substr(first, 2) != "/*")) {
        return line;
      }
    }
  }

  uint64_t offset() const { return offset_; }

 private:
  std::string_view bytes_;
  size_t at_;
  uint64_t offset_ = 0;
};

struct XpmHeader {
  int64_t width = 0, height = 0, colors = 0, key_chars = 0;
};

// Pillow's header pattern: '"', then four runs of digits one space apart (each may be
// empty for the match, but an empty one is refused, as Pillow's int('') fails).
bool MatchHeader(std::string_view line, XpmHeader& h, bool& empty_value) {
  if (line.empty() || line[0] != '"') return false;
  int64_t values[4] = {0, 0, 0, 0};
  size_t at = 1;
  for (int i = 0; i < 4; ++i) {
    if (i > 0) {
      if (at >= line.size() || line[at] != ' ') return false;
      ++at;
    }
    const size_t start = at;
    while (at < line.size() && line[at] >= '0' && line[at] <= '9') {
      if (values[i] < (int64_t{1} << 40)) values[i] = values[i] * 10 + (line[at] - '0');
      ++at;
    }
    if (at == start) empty_value = true;
  }
  h = {values[0], values[1], values[2], values[3]};
  return true;
}

XpmHeader ParseHeader(std::string_view bytes, XpmLines& lines, const std::string& path) {
  XpmHeader h;
  bool empty_value = false;
  while (true) {
    std::string_view line = lines.Next();
    if (line.empty()) throw DataError(path, bytes.size(), "invalid XPM: no values line");
    if (MatchHeader(line, h, empty_value)) break;
  }
  if (empty_value) {
    throw DataError(path, lines.offset(), "invalid XPM: a value missing in the values line");
  }
  if (h.key_chars < 1 || h.key_chars > kMaxKeyChars) {
    throw DataError(path, lines.offset(), "unsupported XPM: " + std::to_string(h.key_chars) +
                                              " characters per pixel (1 to 8 are read)");
  }
  return h;
}

// A colour value: #RRGGBB (Pillow's), or X11's #RGB, #RRRGGGBBB, #RRRRGGGGBBBB (the high
// 8 bits of each channel). -1 for anything else.
int64_t ParseHexColor(std::string_view value) {
  if (value.size() < 2 || value[0] != '#') return -1;
  const std::string_view hex = value.substr(1);
  if (hex.size() % 3 != 0 || hex.size() > 12) return -1;
  const size_t digits = hex.size() / 3;
  uint32_t rgb = 0;
  for (size_t c = 0; c < 3; ++c) {
    uint32_t channel = 0;
    for (size_t k = 0; k < digits; ++k) {
      const char ch = hex[c * digits + k];
      const int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
      if (v < 0) return -1;
      channel = channel << 4 | static_cast<uint32_t>(v);
    }
    const int bits = static_cast<int>(4 * digits);
    channel = bits >= 8 ? channel >> (bits - 8) : channel << (8 - bits);
    rgb = rgb << 8 | channel;
  }
  return rgb;
}

// Whitespace-separated tokens of `text` (Python's bytes.split()).
std::vector<std::string_view> Tokens(std::string_view text) {
  std::vector<std::string_view> out;
  const char* space = " \t\r\n\v\f";
  size_t at = text.find_first_not_of(space);
  while (at != std::string_view::npos) {
    const size_t end = std::min(text.find_first_of(space, at), text.size());
    out.push_back(text.substr(at, end - at));
    at = text.find_first_not_of(space, end);
  }
  return out;
}

// `text` for an error message: at most 32 characters, each byte outside printable ASCII
// as '?' (the reason stays valid UTF-8 for Python's DataError).
std::string Quoted(std::string_view text) {
  std::string out(text.substr(0, 32));
  for (char& c : out) {
    if (c < 0x20 || c > 0x7E) c = '?';
  }
  return "'" + out + "'";
}

uint64_t KeyOf(std::string_view chars) {
  uint64_t key = 0;
  for (char c : chars) key = key << 8 | static_cast<uint8_t>(c);
  return key;
}

using XpmColors = std::unordered_map<uint64_t, uint32_t>;

// One colour line as Pillow reads it: the key after the first character, then pairs of
// tokens up to the last 2 characters (the closing quote and comma); the first "c" pair's
// value is the colour (None: black).
void ReadColorLine(std::string_view line, const XpmHeader& h, uint64_t offset, XpmColors& colors,
                   const std::string& path) {
  if (line.size() >= 2 && line.substr(line.size() - 2) == "\r\n") {
    line.remove_suffix(2);
  } else if (!line.empty() && (line.back() == '\r' || line.back() == '\n')) {
    line.remove_suffix(1);
  }
  const size_t key_end = 1 + static_cast<size_t>(h.key_chars);
  if (line.size() < key_end + 2) {
    throw DataError(path, offset, "invalid XPM: colour line too short");
  }
  const std::vector<std::string_view> tokens =
      Tokens(line.substr(key_end, line.size() - 2 - key_end));
  for (size_t i = 0; i + 1 < tokens.size(); i += 2) {
    if (tokens[i] != "c") continue;
    const uint64_t key = KeyOf(line.substr(1, h.key_chars));
    if (tokens[i + 1] == "None") {
      colors[key] = 0;
      return;
    }
    const int64_t rgb = ParseHexColor(tokens[i + 1]);
    if (rgb < 0) {
      throw DataError(path, offset, "unsupported XPM: colour " + Quoted(tokens[i + 1]) +
                                        " (imgpipe reads #RRGGBB and None)");
    }
    colors[key] = static_cast<uint32_t>(rgb);
    return;
  }
  throw DataError(path, offset, "invalid XPM: a colour line without a 'c' colour");
}

// Decodes the pixel lines into `image`; returns the repairs and the first's reason.
int ReadPixels(XpmLines& lines, const XpmHeader& h, const XpmColors& colors, Image& image,
               std::string& first_repair) {
  const uint64_t row_chars = static_cast<uint64_t>(h.width) * h.key_chars;
  int repairs = 0;
  auto repair = [&](uint64_t offset, const std::string& what) {
    if (repairs++ == 0) first_repair = "XPM line at byte " + std::to_string(offset) + ": " + what;
  };
  for (int y = 0; y < image.height; ++y) {
    // Pillow's row: the characters after the first, up to the row's length, then spaces.
    const std::string_view line = lines.NextContent();
    const std::string_view row = line.substr(std::min<size_t>(1, line.size()), row_chars);
    if (row.size() < row_chars || row.find('"') != std::string_view::npos) {
      repair(lines.offset(), "row " + std::to_string(y) + " has fewer than " +
                                 std::to_string(h.width) + " pixels (filled as Pillow fills it)");
    }
    bool unknown = false;
    uint8_t* dst = image.row(y);
    for (uint64_t at = 0; at < row_chars; at += h.key_chars, dst += 3) {
      uint64_t key = 0;
      for (int64_t k = 0; k < h.key_chars; ++k) {
        key = key << 8 | static_cast<uint8_t>(at + k < row.size() ? row[at + k] : ' ');
      }
      const auto it = colors.find(key);
      const uint32_t rgb = it == colors.end() ? 0 : it->second;
      unknown |= it == colors.end();
      dst[0] = static_cast<uint8_t>(rgb >> 16);
      dst[1] = static_cast<uint8_t>(rgb >> 8);
      dst[2] = static_cast<uint8_t>(rgb);
    }
    if (unknown) {
      repair(lines.offset(), "row " + std::to_string(y) + " has pixels of no colour (black)");
    }
  }
  return repairs;
}

}  // namespace

ImageInfo ReadXpmInfo(std::string_view bytes, const std::string& path) {
  XpmLines lines(bytes);
  const XpmHeader h = ParseHeader(bytes, lines, path);
  return MakeHeaderInfo(ImageFormat::kXpm, h.width, h.height, 3, path);
}

Image DecodeXpm(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  // 1. The values line.
  XpmLines lines(bytes);
  const XpmHeader h = ParseHeader(bytes, lines, path);
  Image image = AllocateImage(h.width, h.height, 3, max_pixels, path, "XPM");
  // 2. The colours: a line each (no more colour lines than the text has lines).
  XpmColors colors;
  for (int64_t i = 0; i < h.colors; ++i) {
    const std::string_view line = lines.NextContent();
    if (line.empty()) {
      throw DataError(path, bytes.size(), "truncated XPM: " + std::to_string(i) + " of " +
                                              std::to_string(h.colors) + " colours");
    }
    ReadColorLine(line, h, lines.offset(), colors, path);
  }
  // 3. The pixels.
  std::string first_repair;
  const int repairs = ReadPixels(lines, h, colors, image, first_repair);
  if (repairs > 0) ReportDecodeWarnings(path, repairs, first_repair);
  return image;
}

}  // namespace imgpipe
