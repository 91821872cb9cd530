// Measures TfRecordReader throughput (with CRC checks) from the warm page cache, and
// crc32c hardware vs portable speed. Usage: record_read_bench [SIZE_MB] [DIR] [SHARD...]
// (default 512 MB of 50-200 KB records, like JPEGs, in $TMPDIR or /tmp). Given SHARDs
// (TFRecord files of image Examples, e.g. from imgpipe convert), it also measures the
// work per record up to the encoded image's bytes, as the pipeline's sources and map did
// before and do now, side by side in alternating rounds.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "record/crc32c.h"
#include "record/example.h"
#include "record/example_view.h"
#include "record/image_feature_keys.h"
#include "record/tfrecord_reader.h"
#include "record/tfrecord_writer.h"
#include "util/file.h"
#include "util/median.h"

namespace {

using imgpipe::Median;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Writes about `total_bytes` of records of 50-200 KB cut from a random pool.
uint64_t WriteFile(const std::string& path, uint64_t total_bytes, uint64_t* records) {
  std::mt19937_64 rng(42);
  std::string pool(8 << 20, '\0');
  for (size_t i = 0; i + 8 <= pool.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(pool.data() + i, &v, 8);
  }
  std::uniform_int_distribution<size_t> size_dist(50 << 10, 200 << 10);
  auto file = imgpipe::OpenWritableFile(path);
  imgpipe::TfRecordWriter writer(*file);
  *records = 0;
  while (writer.bytes_written() < total_bytes) {
    size_t size = size_dist(rng);
    size_t start = std::uniform_int_distribution<size_t>(0, pool.size() - size)(rng);
    writer.Write(std::string_view(pool).substr(start, size));
    ++*records;
  }
  writer.Close();
  file->Close();
  return writer.bytes_written();
}

// Reads the whole file once; returns MB/s (10^6 bytes per second).
double ReadOnce(const std::string& path, uint64_t file_bytes, uint64_t expected_records,
                bool verify_data_crc = true) {
  Clock::time_point start = Clock::now();
  imgpipe::TfRecordReaderOptions options;
  options.verify_data_crc = verify_data_crc;
  imgpipe::TfRecordReader reader(path, options);
  std::string record;
  uint64_t checksum = 0;
  while (reader.Next(&record)) checksum += static_cast<unsigned char>(record[record.size() / 2]);
  double seconds = Seconds(start);
  if (reader.stats().records != expected_records || reader.stats().corrupt != 0) {
    std::fprintf(stderr, "read %llu records (expected %llu), %llu corrupt\n",
                 static_cast<unsigned long long>(reader.stats().records),
                 static_cast<unsigned long long>(expected_records),
                 static_cast<unsigned long long>(reader.stats().corrupt));
    std::exit(1);
  }
  if (checksum == 1) std::printf(" ");  // keeps the loop's work observable
  return file_bytes / seconds / 1e6;
}

// GB/s of `extend` over `data` (repeated to 64 MiB a pass), median of five passes.
double CrcSpeed(uint32_t (*extend)(uint32_t, const void*, size_t), std::string_view data,
                uint32_t* crc) {
  size_t repeats = std::max<size_t>(1, (64 << 20) / data.size());
  std::vector<double> speeds;
  for (int pass = 0; pass < 5; ++pass) {
    Clock::time_point start = Clock::now();
    for (size_t r = 0; r < repeats; ++r) *crc = extend(0, data.data(), data.size());
    speeds.push_back(repeats * data.size() / Seconds(start) / 1e9);
  }
  return Median(speeds);
}

// One pass over `shards`: each record read (data CRC checked) and its image's bytes
// found, as the pipeline did before (`before`: the map's saved reference computes the
// data CRC again; protobuf parses the Example, copying the image) or does now (the
// reader's CRC kept; the image viewed in place). Returns microseconds per record.
double PerRecordPass(const std::vector<std::string>& shards, bool before, uint64_t* sum) {
  Clock::time_point start = Clock::now();
  uint64_t records = 0;
  std::string data;
  for (const std::string& path : shards) {
    imgpipe::TfRecordReader reader(path);
    while (reader.Next(&data)) {
      ++records;
      std::string_view image;
      imgpipe::Example example;
      std::optional<imgpipe::ExampleView> view;
      if (before) {
        *sum += imgpipe::crc32c::Value(data.data(), data.size());
        example = imgpipe::ParseExample(data, path, reader.record_offset());
        image = *imgpipe::GetBytesFeature(example.features(), imgpipe::image_keys::kEncoded);
      } else {
        *sum += *reader.record_crc();
        view = imgpipe::ExampleView::Scan(data);
        image = *view->FirstBytes(imgpipe::image_keys::kEncoded);
      }
      *sum += static_cast<unsigned char>(image[image.size() / 2]);
    }
  }
  return Seconds(start) * 1e6 / static_cast<double>(records);
}

// Before vs now per record on `shards`, 7 alternating rounds, medians.
void ComparePerRecord(const std::vector<std::string>& shards) {
  uint64_t sum = 0;
  PerRecordPass(shards, false, &sum);  // warm the page cache
  std::vector<double> before, now;
  for (int round = 0; round < 7; ++round) {
    before.push_back(PerRecordPass(shards, true, &sum));
    now.push_back(PerRecordPass(shards, false, &sum));
  }
  std::printf("per record, read + data CRC + image bytes found, %zu shard(s): before (CRC "
              "again for the map's state, protobuf's copy) %.1f us, now %.1f us: %.2fx "
              "(medians of 7 alternating rounds)%s\n",
              shards.size(), Median(before), Median(now), Median(before) / Median(now),
              sum == 1 ? " " : "");
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t size_mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  std::string dir = argc > 2 ? argv[2] : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  if (argc > 3) ComparePerRecord(std::vector<std::string>(argv + 3, argv + argc));
  std::string path =
      imgpipe::JoinPath(dir, "record_read_bench." + std::to_string(::getpid()) + ".tfrecord");
  // 1. Write the file, then read it once to warm the page cache.
  uint64_t records = 0;
  uint64_t file_bytes = WriteFile(path, size_mb << 20, &records);
  std::printf("file: %s, %.1f MB, %llu records of 50-200 KB\n", path.c_str(), file_bytes / 1e6,
              static_cast<unsigned long long>(records));
  ReadOnce(path, file_bytes, records);
  // 2. Timed reads.
  std::vector<double> speeds;
  for (int pass = 0; pass < 5; ++pass) speeds.push_back(ReadOnce(path, file_bytes, records));
  std::vector<double> unchecked;
  for (int pass = 0; pass < 5; ++pass)
    unchecked.push_back(ReadOnce(path, file_bytes, records, false));
  imgpipe::RemoveFile(path);
  std::printf(
      "TfRecordReader (data CRC checked, warm cache): median %.0f MB/s over 5 reads"
      " (min %.0f, max %.0f)\n",
      Median(speeds), *std::min_element(speeds.begin(), speeds.end()),
      *std::max_element(speeds.begin(), speeds.end()));
  std::printf("TfRecordReader (length CRC only):              median %.0f MB/s\n",
              Median(unchecked));
  // 3. CRC32C implementations side by side, on a 64 MiB buffer (memory) and on one
  // 1 MiB buffer (cache, like the reader's) passed over 64 times.
  std::string data(64 << 20, '\0');
  std::mt19937 rng(7);
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t size : {data.size(), size_t{1} << 20}) {
    std::string_view view(data.data(), size);
    uint32_t portable_crc = 0;
    double portable = CrcSpeed(&imgpipe::crc32c::ExtendPortable, view, &portable_crc);
    std::printf("crc32c on %zu MiB: portable (slicing-by-8) %.2f GB/s", size >> 20, portable);
    if (!imgpipe::crc32c::HardwareAvailable()) {
      std::printf(", hardware not available on this CPU\n");
      continue;
    }
    uint32_t hardware_crc = 0;
    double hardware = CrcSpeed(&imgpipe::crc32c::ExtendHardware, view, &hardware_crc);
    std::printf(", hardware (SSE4.2, 3 streams) %.2f GB/s, ratio %.1fx\n", hardware,
                hardware / portable);
    if (hardware_crc != portable_crc) {
      std::printf("crc32c implementations DIFFER\n");
      return 1;
    }
  }
  return 0;
}
