#include "monitor/tensorboard_writer.h"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "monitor/event.pb.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"

namespace imgpipe {
namespace {

constexpr char kFileVersion[] = "brain.Event:2";

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string EventFileName() {
  static std::atomic<int> counter{0};
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  return "events.out.tfevents." + std::to_string(static_cast<int64_t>(Now())) + "." + host + "." +
         std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

TensorBoardWriter::TensorBoardWriter(const std::string& logdir) {
  MakeDirectories(logdir);
  path_ = JoinPath(logdir, EventFileName());
  file_ = OpenWritableFile(path_);
  writer_ = std::make_unique<TfRecordWriter>(*file_);
  tf::Event event;
  event.set_wall_time(Now());
  event.set_file_version(kFileVersion);
  WriteEvent(event.SerializeAsString());
  Flush();
}

TensorBoardWriter::~TensorBoardWriter() {
  try {
    writer_->Close();
    file_->Close();
  } catch (const Error&) {
  }
}

void TensorBoardWriter::AddScalar(const std::string& tag, double value, int64_t step, double wall_time) {
  tf::Event event;
  event.set_wall_time(wall_time >= 0 ? wall_time : Now());
  event.set_step(step);
  tf::SummaryValue* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  WriteEvent(event.SerializeAsString());
}

void TensorBoardWriter::Flush() { file_->Flush(); }

void TensorBoardWriter::WriteEvent(const std::string& serialized) { writer_->Write(serialized); }

std::vector<ScalarEvent> ReadScalarEvents(const std::string& path, std::string* file_version) {
  TfRecordReader reader(path);
  std::vector<ScalarEvent> out;
  std::string data;
  bool first = true;
  while (reader.Next(&data)) {
    tf::Event event;
    if (!event.ParseFromString(data)) {
      throw DataError(path, reader.record_offset(), "record is not a TensorBoard Event");
    }
    if (first) {
      if (!event.has_file_version()) {
        throw DataError(path, reader.record_offset(), "the first event has no file_version");
      }
      if (file_version) *file_version = event.file_version();
      first = false;
      continue;
    }
    if (!event.has_summary()) continue;
    for (const tf::SummaryValue& v : event.summary().value()) {
      if (v.value_case() != tf::SummaryValue::kSimpleValue) continue;
      out.push_back({v.tag(), event.step(), event.wall_time(), v.simple_value()});
    }
  }
  return out;
}

}  // namespace imgpipe
