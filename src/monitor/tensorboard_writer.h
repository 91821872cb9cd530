// TensorBoard event files written by imgpipe itself: a TFRecord file of Event
// messages, "brain.Event:2" first, then scalar summaries (what TensorBoard and
// PyTorch's SummaryWriter read and write).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "record/tfrecord_writer.h"
#include "util/file.h"

namespace imgpipe {

class TensorBoardWriter {
 public:
  // Creates LOGDIR/events.out.tfevents.<seconds>.<host>.<pid>.<n> (and LOGDIR).
  explicit TensorBoardWriter(const std::string& logdir);
  ~TensorBoardWriter();

  // Appends one scalar; wall time is now unless given (seconds since the epoch).
  void AddScalar(const std::string& tag, double value, int64_t step, double wall_time = -1);
  // Pushes written events to the OS, so a running TensorBoard sees them.
  void Flush();

  const std::string& path() const { return path_; }

 private:
  void WriteEvent(const std::string& serialized);

  std::string path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<TfRecordWriter> writer_;
};

struct ScalarEvent {
  std::string tag;
  int64_t step = 0;
  double wall_time = 0;
  double value = 0;
};

// Every scalar (simple_value) of an event file, in file order; the file_version must
// come first. Throws DataError naming the file and offset on corrupt data.
std::vector<ScalarEvent> ReadScalarEvents(const std::string& path, std::string* file_version = nullptr);

}  // namespace imgpipe
