// Fuzzes the index-file parser. What it accepts must format and parse back to the same
// entries, and describe contiguous records from offset 0.
#include <cstdint>

#include "fuzz_util.h"
#include "record/index.h"
#include "record/tfrecord_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  fuzz::IgnoringErrors([&] {
    std::vector<IndexEntry> entries = ParseIndex(fuzz::AsView(data, size), "fuzz.idx");
    uint64_t expected_offset = 0;
    for (const IndexEntry& entry : entries) {
      FUZZ_CHECK(entry.offset == expected_offset);
      FUZZ_CHECK(entry.size >= tfrecord::kHeaderSize + tfrecord::kFooterSize);
      expected_offset = entry.offset + entry.size;
    }
    FUZZ_CHECK(ParseIndex(FormatIndex(entries), "fuzz.idx") == entries);
  });
  return 0;
}
