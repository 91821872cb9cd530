#include "record/crc32c_file.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "io/storage.h"
#include "record/crc32c.h"

namespace imgpipe {

void Crc32cWritableFile::Append(std::string_view data) {
  sink_->Append(data);
  crc_ = crc32c::Extend(crc_, data.data(), data.size());
}

uint32_t FileCrc32c(const std::string& path) {
  std::unique_ptr<SequentialFile> file = OpenSequentialStorage(path);
  std::vector<char> buffer(1 << 20);
  uint32_t crc = 0;
  while (size_t n = file->Read(buffer.data(), buffer.size())) {
    crc = crc32c::Extend(crc, buffer.data(), n);
    if (n < buffer.size()) break;
  }
  return crc;
}

std::string Crc32cMismatch(uint32_t crc, uint32_t recorded) {
  if (crc == recorded) return "";
  char detail[64];
  std::snprintf(detail, sizeof(detail), "CRC-32C %08x, recorded %08x", crc, recorded);
  return detail;
}

}  // namespace imgpipe
