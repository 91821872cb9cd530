#include "record/tfrecord_writer.h"

#include "record/tfrecord_format.h"
#include "util/error.h"
#include "util/logging.h"

namespace imgpipe {

TfRecordWriter::TfRecordWriter(WritableFile& sink, Compression compression)
    : sink_(&sink), out_(WrapCompressingFile(sink, compression)) {}

TfRecordWriter::~TfRecordWriter() {
  if (closed_) return;
  try {
    Close();
  } catch (const std::exception& e) {
    LogWarning(std::string("closing a TfRecordWriter: ") + e.what());
  }
}

IndexEntry TfRecordWriter::Write(std::string_view data) {
  if (closed_) throw Error(sink_->path() + ": TfRecordWriter::Write after Close");
  char header[tfrecord::kHeaderSize];
  char footer[tfrecord::kFooterSize];
  tfrecord::EncodeHeader(data.size(), header);
  tfrecord::EncodeFooter(data.data(), data.size(), footer);
  out_->Append(std::string_view(header, sizeof(header)));
  out_->Append(data);
  out_->Append(std::string_view(footer, sizeof(footer)));
  IndexEntry entry{offset_, tfrecord::kHeaderSize + data.size() + tfrecord::kFooterSize};
  offset_ += entry.size;
  return entry;
}

void TfRecordWriter::Close() {
  if (closed_) return;
  closed_ = true;
  out_->Close();
}

}  // namespace imgpipe
