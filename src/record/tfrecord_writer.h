// Writes TFRecord framing (tfrecord_format.h) to a WritableFile.
#pragma once

#include <memory>
#include <string_view>

#include "record/compression.h"
#include "record/index.h"
#include "util/file.h"

namespace imgpipe {

class TfRecordWriter {
 public:
  // Writes to `sink` (not owned; must outlive the writer), compressed as given.
  TfRecordWriter(WritableFile& sink, Compression compression = Compression::kNone);
  ~TfRecordWriter();

  // Appends one record; returns its index entry (offsets in the uncompressed stream).
  IndexEntry Write(std::string_view data);

  // Ends the compressed stream (if any) and flushes `sink`; `sink` stays open.
  void Close();

  // Uncompressed bytes written so far.
  uint64_t bytes_written() const { return offset_; }

 private:
  WritableFile* sink_;
  std::unique_ptr<WritableFile> out_;  // compressing wrapper (or pass-through) of sink_
  uint64_t offset_ = 0;
  bool closed_ = false;
};

}  // namespace imgpipe
