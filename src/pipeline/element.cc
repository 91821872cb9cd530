#include "pipeline/element.h"

#include <cstring>

#include "record/crc32c.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

// How a Record is written (the first field of its encoding).
enum RecordForm : int64_t {
  kByValue = 0,      // origin, data, source, offset, label
  kTfRecordRef = 1,  // source, offset, data size, CRC32C of data, label
  kFileRef = 2,      // source, data size, CRC32C of data, label
};

uint32_t DataCrc(const std::string& data) { return crc32c::Value(data.data(), data.size()); }

// The CRC32C of a record's data: the one its source checked, else computed.
uint32_t RecordCrc(const Record& r) { return r.data_crc ? *r.data_crc : DataCrc(r.data); }

// A count or size read from state: non-negative and at most `limit`.
// Bit 62 of a batch's label count: its stand-in marks follow the labels.
constexpr int64_t kStandInsFlag = int64_t{1} << 62;

uint64_t GetCount(StateDecoder& d, uint64_t limit, const char* what) {
  int64_t v = d.GetInt();
  if (v < 0 || static_cast<uint64_t>(v) > limit) {
    throw Error("iterator state: bad " + std::string(what) + " " + std::to_string(v));
  }
  return static_cast<uint64_t>(v);
}

// Checks that a re-read record's bytes are the ones that were saved.
void CheckUnchanged(const Record& r, uint64_t size, uint32_t crc, std::optional<uint64_t> offset) {
  if (r.data.size() != size || RecordCrc(r) != crc) {
    throw DataError(r.source, offset,
                    "record changed since the state was saved (" + std::to_string(r.data.size()) +
                        " bytes now, " + std::to_string(size) + " then, or a different CRC32C)");
  }
}

PooledBuffer BytesToBuffer(const std::string& bytes) {
  PooledBuffer buffer = BufferPool::Default()->Get(bytes.size());
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

std::string_view BufferBytes(const PooledBuffer& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace

void ElementCodec<Record>::Encode(const Record& r, StateEncoder& e) {
  switch (r.origin) {
    case RecordOrigin::kTfRecord:
      e.PutInt(kTfRecordRef);
      e.PutBytes(r.source);
      e.PutInt(static_cast<int64_t>(r.offset));
      e.PutInt(static_cast<int64_t>(r.data.size()));
      e.PutInt(RecordCrc(r));
      e.PutInt(r.label);
      return;
    case RecordOrigin::kFile:
      e.PutInt(kFileRef);
      e.PutBytes(r.source);
      e.PutInt(static_cast<int64_t>(r.data.size()));
      e.PutInt(RecordCrc(r));
      e.PutInt(r.label);
      return;
    case RecordOrigin::kValue:
      break;
  }
  EncodeValue(r, e);
}

void ElementCodec<Record>::EncodeValue(const Record& r, StateEncoder& e) {
  e.PutInt(kByValue);
  e.PutInt(static_cast<int64_t>(r.origin));
  e.PutBytes(r.data);
  e.PutBytes(r.source);
  e.PutInt(static_cast<int64_t>(r.offset));
  e.PutInt(r.label);
}

namespace {

// What a reference saved about its record's data, to check the bytes read again.
struct SavedData {
  uint64_t size = 0;
  uint32_t crc = 0;
};

// Reads one record's fields from `d`. A TFRecord reference's data is left unread: the
// result is true and *saved receives what was saved about the data.
bool DecodeFields(StateDecoder& d, Record* r, SavedData* saved) {
  int64_t form = d.GetInt();
  switch (form) {
    case kByValue: {
      int64_t origin = d.GetInt();
      if (origin < static_cast<int64_t>(RecordOrigin::kValue) ||
          origin > static_cast<int64_t>(RecordOrigin::kFile)) {
        throw Error("iterator state: bad record origin " + std::to_string(origin));
      }
      r->origin = static_cast<RecordOrigin>(origin);
      r->data = d.GetBytes();
      r->source = d.GetBytes();
      r->offset = static_cast<uint64_t>(d.GetInt());
      r->label = d.GetInt();
      return false;
    }
    case kTfRecordRef: {
      r->origin = RecordOrigin::kTfRecord;
      r->source = d.GetBytes();
      r->offset = static_cast<uint64_t>(d.GetInt());
      saved->size = GetCount(d, uint64_t{1} << 40, "record size");
      saved->crc = static_cast<uint32_t>(d.GetInt());
      r->label = d.GetInt();
      return true;
    }
    case kFileRef: {
      r->origin = RecordOrigin::kFile;
      r->source = d.GetBytes();
      uint64_t size = GetCount(d, uint64_t{1} << 40, "record size");
      auto crc = static_cast<uint32_t>(d.GetInt());
      r->label = d.GetInt();
      r->data = ReadFile(r->source);
      CheckUnchanged(*r, size, crc, std::nullopt);
      return false;
    }
    default:
      throw Error("iterator state: unknown record form " + std::to_string(form));
  }
}

}  // namespace

Record ElementCodec<Record>::Decode(StateDecoder& d) { return std::move(DecodeMany(d, 1).front()); }

std::vector<Record> ElementCodec<Record>::DecodeMany(StateDecoder& d, size_t count) {
  // 1. The fields; the TFRecord references noted, to be read together.
  std::vector<Record> records(count);
  std::vector<size_t> refs;
  std::vector<SavedData> saved;
  std::vector<RecordLocation> locations;
  for (size_t i = 0; i < count; ++i) {
    SavedData s;
    if (DecodeFields(d, &records[i], &s)) {
      refs.push_back(i);
      saved.push_back(s);
      locations.push_back({records[i].source, records[i].offset, s.size});
    }
  }
  // 2. Their data, read again and checked against what was saved.
  std::vector<RecordAt> read = ReadTfRecordsAt(locations);
  for (size_t k = 0; k < refs.size(); ++k) {
    Record& r = records[refs[k]];
    if (read[k].error) {
      try {
        std::rethrow_exception(read[k].error);
      } catch (const DataError& e) {
        throw DataError(r.source, r.offset, "record changed since the state was saved (" + e.reason() + ")");
      }
    }
    r.data = std::move(read[k].data);
    r.data_crc = read[k].data_crc;  // checked against the file's footer
    CheckUnchanged(r, saved[k].size, saved[k].crc, r.offset);
  }
  return records;
}

void ElementCodec<Sample>::Encode(const Sample& s, StateEncoder& e) {
  e.PutBytes(BufferBytes(s.pixels));
  e.PutInt(s.label);
  e.PutBytes(s.source);
  e.PutInt(static_cast<int64_t>(s.offset));
}

Sample ElementCodec<Sample>::Decode(StateDecoder& d) {
  Sample s;
  s.pixels = BytesToBuffer(d.GetBytes());
  s.label = d.GetInt();
  s.source = d.GetBytes();
  s.offset = static_cast<uint64_t>(d.GetInt());
  return s;
}

void ElementCodec<Batch>::Encode(const Batch& b, StateEncoder& e) {
  e.PutInt(static_cast<int64_t>(b.size));
  e.PutInt(static_cast<int64_t>(b.sample_bytes));
  // A batch with stand-ins sets bit 62 of its label count, then writes its marks after
  // the labels: states saved before stand-ins existed still decode.
  const int64_t marks = b.stand_ins.empty() ? 0 : kStandInsFlag;
  e.PutInt(static_cast<int64_t>(b.labels.size()) | marks);
  for (int64_t label : b.labels) e.PutInt(label);
  if (marks) e.PutBytes(std::string(b.stand_ins.begin(), b.stand_ins.end()));
  e.PutBytes(BufferBytes(b.data));
}

Batch ElementCodec<Batch>::Decode(StateDecoder& d) {
  Batch b;
  b.size = GetCount(d, uint64_t{1} << 40, "batch size");
  b.sample_bytes = GetCount(d, uint64_t{1} << 40, "batch sample_bytes");
  // Each label takes at least one byte, so a count beyond 2^32 cannot be genuine.
  int64_t count = d.GetInt();
  const bool marks = count >= 0 && (count & kStandInsFlag) != 0;
  if (marks) count &= ~kStandInsFlag;
  if (count < 0 || count > (int64_t{1} << 32)) {
    throw Error("iterator state: bad batch label count " + std::to_string(count));
  }
  const auto labels = static_cast<uint64_t>(count);
  for (uint64_t i = 0; i < labels; ++i) {
    if (d.done()) throw Error("iterator state: truncated batch labels");
    b.labels.push_back(d.GetInt());
  }
  if (marks) {
    const std::string bytes = d.GetBytes();
    if (bytes.size() != labels) throw Error("iterator state: batch stand-in marks do not match its labels");
    b.stand_ins.assign(bytes.begin(), bytes.end());
  }
  b.data = BytesToBuffer(d.GetBytes());
  return b;
}

}  // namespace imgpipe::pipeline
