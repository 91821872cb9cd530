#include "image/jpeg_restart_splice.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "image/byte_order.h"
#include "image/jpeg_markers.h"

namespace imgpipe {
namespace {

constexpr int kMarkerSof0 = 0xC0;  // baseline
constexpr int kMarkerSof1 = 0xC1;  // extended sequential, Huffman
constexpr int kMarkerDri = 0xDD;
constexpr int kMarkerSos = 0xDA;
constexpr int kMarkerEoi = 0xD9;
constexpr int kMarkerRst0 = 0xD0;

bool IsSof(int marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

// What the splice needs of a file's header and scan.
struct ScanLayout {
  size_t sof = 0;        // offset of the SOF segment's payload (after its length)
  size_t scan = 0;       // offset of the entropy-coded data (after the SOS segment)
  int width = 0, height = 0;
  int mcu_width = 0, mcu_height = 0;
  int mcus_per_row = 0, mcu_rows = 0;
  int interval = 0;      // MCUs between restart markers
  // Entropy-coded segments between restart markers: [begin, end) byte ranges.
  std::vector<std::pair<size_t, size_t>> segments;
};

template <typename T>
T CeilDiv(T a, T b) {
  return (a + b - 1) / b;
}

// Reads the header up to the first scan into `layout`: false unless it is one
// sequential Huffman-coded frame with restart markers, whose first scan has every
// component.
bool ReadHeader(std::string_view jpeg, ScanLayout& layout) {
  if (!HasBytes(jpeg, 0, 2) || LoadU8(jpeg, 0) != 0xFF || LoadU8(jpeg, 1) != 0xD8) return false;
  int components = 0, max_h = 1, max_v = 1;
  bool scan_found = false;
  WalkJpegSegments(jpeg, [&](int marker, std::string_view payload) {
    const size_t offset = static_cast<size_t>(payload.data() - jpeg.data());
    if (IsSof(marker)) {
      // 1. The frame: sequential Huffman only; its size and sampling.
      if ((marker != kMarkerSof0 && marker != kMarkerSof1) || payload.size() < 6) return false;
      layout.sof = offset;
      layout.height = static_cast<int>(LoadU16(payload, 1, true));
      layout.width = static_cast<int>(LoadU16(payload, 3, true));
      components = static_cast<int>(LoadU8(payload, 5));
      if (components < 1 || payload.size() != 6 + 3 * static_cast<size_t>(components)) {
        return false;
      }
      for (int c = 0; c < components; ++c) {
        const uint32_t sampling = LoadU8(payload, 7 + 3 * c);
        max_h = std::max(max_h, static_cast<int>(sampling >> 4));
        max_v = std::max(max_v, static_cast<int>(sampling & 15));
      }
    } else if (marker == kMarkerDri) {
      if (payload.size() != 2) return false;
      layout.interval = static_cast<int>(LoadU16(payload, 0, true));
    } else if (marker == kMarkerSos) {
      // 2. The scan: every component, one MCU of each one's sampling (a one-component
      //    scan's MCU is one 8x8 block).
      if (layout.sof == 0 || payload.empty() ||
          static_cast<int>(LoadU8(payload, 0)) != components) {
        return false;
      }
      const bool single = components == 1;
      layout.mcu_width = single ? 8 : 8 * max_h;
      layout.mcu_height = single ? 8 : 8 * max_v;
      layout.scan = offset + payload.size();
      scan_found = true;
    }
    return true;
  });
  return scan_found && layout.interval > 0 && layout.width > 0 && layout.height > 0;
}

// Cuts the entropy-coded data into its restart segments: false unless it ends at EOI
// and has RST0, RST1, ... in order between whole segments, as many as the MCUs need.
bool ReadSegments(std::string_view jpeg, ScanLayout& layout) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(jpeg.data());
  const size_t size = jpeg.size();
  const int64_t mcus = int64_t{layout.mcus_per_row} * layout.mcu_rows;
  const int64_t expected = (mcus + layout.interval - 1) / layout.interval;
  layout.segments.reserve(static_cast<size_t>(expected));
  size_t begin = layout.scan;
  size_t pos = layout.scan;
  while (true) {
    const void* found = std::memchr(bytes + pos, 0xFF, size - pos);
    if (found == nullptr) return false;  // no EOI: truncated
    const size_t ff = static_cast<size_t>(static_cast<const unsigned char*>(found) - bytes);
    size_t code = ff + 1;
    while (code < size && bytes[code] == 0xFF) ++code;  // fill bytes
    if (code >= size) return false;
    const int marker = bytes[code];
    if (marker == 0x00) {  // a stuffed 0xFF data byte
      pos = code + 1;
      continue;
    }
    const auto index = static_cast<int64_t>(layout.segments.size());
    if (marker == kMarkerEoi) {
      layout.segments.emplace_back(begin, ff);
      return index + 1 == expected;
    }
    if (marker != kMarkerRst0 + (index & 7) || index + 1 >= expected) return false;
    layout.segments.emplace_back(begin, ff);
    begin = pos = code + 1;
  }
}

// The MCUs [first, end) of `count` that cover [begin, begin + length), each mcu_size
// pixels, and one more at an end that lies within `margin` pixels of their edge.
std::pair<int, int> McuSpan(int begin, int length, int mcu_size, int count, int margin) {
  int first = begin / mcu_size;
  int end = CeilDiv(begin + length, mcu_size);
  if (begin - first * mcu_size < margin) --first;
  if (end * mcu_size - (begin + length) < margin) ++end;
  return {std::max(first, 0), std::min(end, count)};
}

void StoreU16(std::string& out, size_t at, int value) {
  out[at] = static_cast<char>(value >> 8);
  out[at + 1] = static_cast<char>(value & 0xFF);
}

}  // namespace

std::optional<SplicedJpeg> SpliceJpegWindow(std::string_view jpeg, int x, int y,
                                            int window_width, int window_height, int margin) {
  // 1. The layout; a restart interval that lines up with the MCU rows.
  ScanLayout layout;
  if (!ReadHeader(jpeg, layout)) return std::nullopt;
  layout.mcus_per_row = CeilDiv(layout.width, layout.mcu_width);
  layout.mcu_rows = CeilDiv(layout.height, layout.mcu_height);
  const int per_row = layout.mcus_per_row, interval = layout.interval;
  if (per_row % interval != 0 && interval % per_row != 0) return std::nullopt;
  if (x < 0 || y < 0 || window_width < 1 || window_height < 1 ||
      x > layout.width - window_width || y > layout.height - window_height) {
    return std::nullopt;
  }
  // 2. The MCUs to keep: the window's, one more on a side it comes within `margin` of,
  //    widened to whole segments (columns when segments lie within rows, rows when
  //    they span rows).
  const auto [c0_, c1_] = McuSpan(x, window_width, layout.mcu_width, per_row, margin);
  const auto [r0_, r1_] = McuSpan(y, window_height, layout.mcu_height, layout.mcu_rows, margin);
  int c0 = c0_, c1 = c1_, r0 = r0_, r1 = r1_;
  if (per_row % interval == 0) {
    c0 = c0 / interval * interval;
    c1 = std::min(CeilDiv(c1, interval) * interval, per_row);
  } else {
    const int rows = interval / per_row;
    c0 = 0;
    c1 = per_row;
    r0 = r0 / rows * rows;
    r1 = std::min(CeilDiv(r1, rows) * rows, layout.mcu_rows);
  }
  if (r0 == 0 && c0 == 0 && c1 == per_row) return std::nullopt;  // a plain crop skips as much
  if (!ReadSegments(jpeg, layout)) return std::nullopt;
  // 3. The header with the new size, then the segments with renumbered markers.
  SplicedJpeg out;
  out.x = c0 * layout.mcu_width;
  out.y = r0 * layout.mcu_height;
  out.width = std::min(c1 * layout.mcu_width, layout.width) - out.x;
  out.height = std::min(r1 * layout.mcu_height, layout.height) - out.y;
  std::string& bytes = out.bytes;
  bytes.reserve(layout.scan + jpeg.size() / 2);
  bytes.assign(jpeg.substr(0, layout.scan));
  StoreU16(bytes, layout.sof + 1, out.height);
  StoreU16(bytes, layout.sof + 3, out.width);
  const int row_runs = per_row % interval == 0 ? r1 - r0 : 1;  // rows cut apart, or one run
  const int64_t run_mcus = per_row % interval == 0 ? c1 - c0 : int64_t{r1 - r0} * per_row;
  int64_t written = 0;
  for (int run = 0; run < row_runs; ++run) {
    const int64_t first = (int64_t{r0 + run} * per_row + c0) / interval;
    const int64_t end = std::min(first + CeilDiv<int64_t>(run_mcus, interval),
                                 static_cast<int64_t>(layout.segments.size()));
    for (int64_t s = first; s < end; ++s, ++written) {
      if (written > 0) {
        bytes.push_back(static_cast<char>(0xFF));
        bytes.push_back(static_cast<char>(kMarkerRst0 + ((written - 1) & 7)));
      }
      const auto [begin, stop] = layout.segments[static_cast<size_t>(s)];
      bytes.append(jpeg.substr(begin, stop - begin));
    }
  }
  bytes.push_back(static_cast<char>(0xFF));
  bytes.push_back(static_cast<char>(kMarkerEoi));
  return out;
}

}  // namespace imgpipe
