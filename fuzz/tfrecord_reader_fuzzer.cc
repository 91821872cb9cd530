// Fuzzes TfRecordReader: the input is a whole file, read under both error policies,
// uncompressed and (when it starts like such a stream) as gzip or zlib; and its
// compression is detected. Besides "only imgpipe::Error escapes", it checks the
// reader's contract:
//   - kSkip never throws: corruption is counted, not raised;
//   - kFail returns a prefix of kSkip's records, all of them when kSkip met no
//     corruption (and then kFail does not throw either);
//   - uncompressed: each record reads back with TfRecordRandomReader at its offset, with
//     no window and with a small one.
// The input is read from memory (a ByteSource), not written to a file per run.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "io/byte_source.h"
#include "record/tfrecord_reader.h"
#include "util/logging.h"

namespace imgpipe {
namespace {

struct ReadResult {
  bool completed = false;  // no error was thrown
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;
  uint64_t corrupt = 0;
};

// The input as a byte source named "input".
std::unique_ptr<ByteSource> Input(std::string_view bytes) {
  return MakeMemoryByteSource("input", std::string(bytes));
}

ReadResult ReadAll(std::string_view bytes, std::optional<Compression> compression,
                   ErrorPolicy policy) {
  ReadResult result;
  TfRecordReaderOptions options;
  options.compression = compression;
  options.policy = policy;
  result.completed = fuzz::IgnoringErrors([&] {
    TfRecordReader reader(Input(bytes), options);
    std::string record;
    while (reader.Next(&record)) {
      result.records.push_back(record);
      result.offsets.push_back(reader.record_offset());
    }
    result.corrupt = reader.stats().corrupt;
  });
  return result;
}

bool IsPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace
}  // namespace imgpipe

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  imgpipe::SetLogLevel(imgpipe::LogLevel::kError);  // kSkip logs every corrupt stretch
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  const std::string_view input = fuzz::AsView(data, size);
  // Inflating readers cost a 256 KB buffer each, and fail at the first byte unless the
  // input starts like a gzip or zlib stream: read those only then (fast runs matter).
  const bool gzip_like = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const bool zlib_like = size >= 2 && (data[0] & 0x0f) == 8 && (data[0] * 256 + data[1]) % 31 == 0;
  for (Compression compression : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    if ((compression == Compression::kGzip && !gzip_like) ||
        (compression == Compression::kZlib && !zlib_like)) {
      continue;
    }
    ReadResult skip = ReadAll(input, compression, ErrorPolicy::kSkip);
    ReadResult fail = ReadAll(input, compression, ErrorPolicy::kFail);
    FUZZ_CHECK(skip.completed);
    FUZZ_CHECK(IsPrefix(fail.records, skip.records));
    FUZZ_CHECK(fail.completed == (skip.corrupt == 0));
    if (fail.completed) FUZZ_CHECK(fail.records.size() == skip.records.size());
    if (compression == Compression::kNone) {
      TfRecordRandomReader unwindowed(Input(input), 0);
      for (size_t i = 0; i < skip.records.size(); ++i) {
        if (i > 0) FUZZ_CHECK(skip.offsets[i] > skip.offsets[i - 1]);
        FUZZ_CHECK(unwindowed.ReadAt(skip.offsets[i]) == skip.records[i]);
      }
      // Random access through a small read-ahead window, forward and back.
      TfRecordRandomReader random_reader(Input(input), 64);
      for (size_t i : {size_t{0}, skip.records.size() / 2, size_t{1}, skip.records.size() - 1}) {
        if (i >= skip.records.size()) continue;
        uint64_t end = 0;
        FUZZ_CHECK(random_reader.ReadAt(skip.offsets[i], &end) == skip.records[i]);
        FUZZ_CHECK(end == skip.offsets[i] + 16 + skip.records[i].size());
      }
    }
  }
  fuzz::IgnoringErrors([&] { DetectCompression(*Input(input)); });
  return 0;
}
