#include "image/jpeg_restart_splice.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "image/byte_order.h"
#include "image/jpeg_format.h"
#include "image/jpeg_markers.h"

namespace imgpipe {
namespace {

using namespace jpeg_format;

bool IsSof(int marker) {
  return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

using Segments = std::vector<std::pair<size_t, size_t>>;

// What the splice needs of a file's header and scan.
struct ScanLayout {
  explicit ScanLayout(Segments& segments_buffer) : segments(segments_buffer) {}

  size_t sof = 0;        // offset of the SOF segment's payload (after its length)
  size_t scan = 0;       // offset of the entropy-coded data (after the SOS segment)
  int width = 0, height = 0;
  int mcu_width = 0, mcu_height = 0;
  int mcus_per_row = 0, mcu_rows = 0;
  int interval = 0;      // MCUs between restart markers
  // Entropy-coded segments between restart markers: [begin, end) byte ranges.
  Segments& segments;
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

// splice_internal::FfByteMask, inline for ReadSegments' loop.
inline uint64_t FfMask(const unsigned char* bytes, size_t n) {
#if defined(__SSE2__)
  if (n >= 64) {
    const __m128i ff = _mm_set1_epi8(static_cast<char>(0xFF));
    uint64_t mask = 0;
    for (int q = 0; q < 4; ++q) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * q));
      mask |= static_cast<uint64_t>(static_cast<uint32_t>(
                  _mm_movemask_epi8(_mm_cmpeq_epi8(v, ff))))
              << (16 * q);
    }
    return mask;
  }
#endif
  return splice_internal::FfByteMaskPortable(bytes, n);
}

// Cuts the entropy-coded data into its restart segments: false unless it ends at EOI
// and has RST0, RST1, ... in order between whole segments, as many as the MCUs need.
// Visits the 0xFF bytes 64 at a time from a mask, without a branch on whether one is a
// stuffed data byte (0xFF 0x00) or a restart marker (a file has thousands of each);
// fill bytes (0xFF 0xFF ...) before a marker end the segment at the first.
bool ReadSegments(std::string_view jpeg, ScanLayout& layout) {
  constexpr size_t kNone = static_cast<size_t>(-1);
  const auto* bytes = reinterpret_cast<const unsigned char*>(jpeg.data());
  const size_t size = jpeg.size();
  const int64_t mcus = int64_t{layout.mcus_per_row} * layout.mcu_rows;
  const auto expected = static_cast<size_t>((mcus + layout.interval - 1) / layout.interval);
  // Each segment ends at a 2-byte marker (RSTn, or EOI): a file too short for them all
  // is damaged, and is not given a list as long as its header claims.
  if (expected > (size - layout.scan) / 2) return false;
  auto& segments = layout.segments;
  segments.resize(expected);
  size_t k = 0;  // the segment being read: segments[k] is rewritten until its marker
  size_t begin = layout.scan;
  size_t fill = kNone;  // the first of a run of fill bytes
  for (size_t block = layout.scan; block < size; block += 64) {
    for (uint64_t mask = FfMask(bytes + block, size - block); mask != 0; mask &= mask - 1) {
      const size_t ff = block + static_cast<size_t>(__builtin_ctzll(mask));
      if (ff + 1 >= size) return false;  // no EOI: truncated
      const int code = bytes[ff + 1];
      const bool rst = (code & 0xF8) == kMarkerRst0;
      if (code != 0x00 && !rst) {  // rare: fill bytes, EOI, or damage
        if (code == 0xFF) {
          fill = std::min(fill, ff);
          continue;
        }
        if (code != kMarkerEoi) return false;
        segments[k] = {begin, std::min(fill, ff)};
        return k + 1 == expected;
      }
      segments[k] = {begin, std::min(fill, ff)};
      fill = kNone;
      if (rst && (code != kMarkerRst0 + static_cast<int>(k & 7) || k + 1 >= expected)) {
        return false;
      }
      begin = rst ? ff + 2 : begin;
      k += rst ? 1 : 0;
    }
  }
  return false;  // no EOI: truncated
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

// MCU columns [c0, c1) of rows [r0, r1), whole restart segments.
struct McuBlock {
  int c0 = 0, c1 = 0, r0 = 0, r1 = 0;
};

// Writes the JPEG of `block`'s MCUs of `jpeg` (read into `layout`) to `out`: the header
// up to the scan with the block's size in the SOF, then its segments with markers
// RST0, RST1, ... between them and EOI after.
void WriteSplice(std::string_view jpeg, const ScanLayout& layout, const McuBlock& block,
                 SplicedJpeg& out) {
  const int c0 = block.c0, c1 = block.c1, r0 = block.r0, r1 = block.r1;
  const int per_row = layout.mcus_per_row, interval = layout.interval;
  out.x = c0 * layout.mcu_width;
  out.y = r0 * layout.mcu_height;
  out.width = std::min(c1 * layout.mcu_width, layout.width) - out.x;
  out.height = std::min(r1 * layout.mcu_height, layout.height) - out.y;
  // 1. The segments: those of each row's columns, or (segments spanning rows) one run.
  const int row_runs = per_row % interval == 0 ? r1 - r0 : 1;
  const int64_t run_mcus = per_row % interval == 0 ? c1 - c0 : int64_t{r1 - r0} * per_row;
  const auto run_segments = [&](int run) {
    const int64_t first = (int64_t{r0 + run} * per_row + c0) / interval;
    const int64_t end = std::min(first + CeilDiv<int64_t>(run_mcus, interval),
                                 static_cast<int64_t>(layout.segments.size()));
    return std::pair<size_t, size_t>(first, end);
  };
  // 2. The size: each run's bytes, as they lie in the file with the markers (and any
  //    fill bytes) between its segments, and a 2-byte marker after each run.
  size_t size = layout.scan;
  for (int run = 0; run < row_runs; ++run) {
    const auto [first, end] = run_segments(run);
    if (first < end) size += layout.segments[end - 1].second - layout.segments[first].first + 2;
  }
  std::string& bytes = out.bytes;
  bytes.resize(size);
  char* at = bytes.data();
  std::memcpy(at, jpeg.data(), layout.scan);
  StoreU16(bytes, layout.sof + 1, out.height);
  StoreU16(bytes, layout.sof + 3, out.width);
  at += layout.scan;
  // 3. The runs, one copy each, then their markers renumbered: RST0, RST1, ... from the
  //    splice's first segment on.
  int64_t written = 0;  // segments written
  for (int run = 0; run < row_runs; ++run) {
    const auto [first, end] = run_segments(run);
    if (first >= end) continue;
    if (written > 0) {
      *at++ = static_cast<char>(0xFF);
      *at++ = static_cast<char>(kMarkerRst0 + ((written - 1) & 7));
    }
    const size_t run_begin = layout.segments[first].first;
    const size_t run_bytes = layout.segments[end - 1].second - run_begin;
    std::memcpy(at, jpeg.data() + run_begin, run_bytes);
    for (size_t s = first + 1; s < end; ++s) {  // the code byte just before segment s
      at[layout.segments[s].first - 1 - run_begin] =
          static_cast<char>(kMarkerRst0 + ((written + static_cast<int64_t>(s - first) - 1) & 7));
    }
    at += run_bytes;
    written += static_cast<int64_t>(end - first);
  }
  *at++ = static_cast<char>(0xFF);
  *at = static_cast<char>(kMarkerEoi);
}

}  // namespace

bool SpliceJpegWindowInto(std::string_view jpeg, int x, int y, int window_width,
                          int window_height, int margin, SplicedJpeg& out) {
  // 1. The layout (its segments in a buffer kept per thread); a restart interval that
  //    lines up with the MCU rows.
  thread_local Segments segments;
  ScanLayout layout(segments);
  if (!ReadHeader(jpeg, layout)) return false;
  layout.mcus_per_row = CeilDiv(layout.width, layout.mcu_width);
  layout.mcu_rows = CeilDiv(layout.height, layout.mcu_height);
  const int per_row = layout.mcus_per_row, interval = layout.interval;
  if (per_row % interval != 0 && interval % per_row != 0) return false;
  if (x < 0 || y < 0 || window_width < 1 || window_height < 1 ||
      x > layout.width - window_width || y > layout.height - window_height) {
    return false;
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
  if (r0 == 0 && c0 == 0 && c1 == per_row) return false;  // a plain crop skips as much
  if (!ReadSegments(jpeg, layout)) return false;
  // 3. The header with the new size, then the segments with renumbered markers.
  WriteSplice(jpeg, layout, McuBlock{c0, c1, r0, r1}, out);
  return true;
}

std::optional<SplicedJpeg> SpliceJpegWindow(std::string_view jpeg, int x, int y,
                                            int window_width, int window_height, int margin) {
  SplicedJpeg out;
  if (!SpliceJpegWindowInto(jpeg, x, y, window_width, window_height, margin, out)) {
    return std::nullopt;
  }
  return out;
}

namespace splice_internal {

uint64_t FfByteMaskPortable(const unsigned char* bytes, size_t n) {
  uint64_t mask = 0;
  for (size_t i = 0; i < std::min<size_t>(n, 64); ++i) {
    if (bytes[i] == 0xFF) mask |= uint64_t{1} << i;
  }
  return mask;
}

uint64_t FfByteMask(const unsigned char* bytes, size_t n) { return FfMask(bytes, n); }

}  // namespace splice_internal

}  // namespace imgpipe
