#include "pipeline/iterator_state.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "pipeline/element.h"
#include "pipeline/pipeline_test_util.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

IteratorState SampleState() {
  IteratorState state;
  state.PutInt("0.batch:count", 3);
  state.PutInt("0.batch/1.shuffle:rng", std::numeric_limits<int64_t>::min());
  state.PutInt("0.batch/1.shuffle:neg", -1);
  state.PutBytes("0.batch/1.shuffle:buffer", std::string("a\0b\xff", 4));
  state.PutBytes("0.batch:empty", "");
  return state;
}

TEST(IteratorState, RoundTripsThroughSerialize) {
  IteratorState state = SampleState();
  std::string bytes = state.Serialize();
  EXPECT_EQ(bytes.substr(0, 4), "IPST");
  IteratorState back = IteratorState::Deserialize(bytes);
  EXPECT_EQ(back, state);
  EXPECT_EQ(back.size(), 5u);
  EXPECT_EQ(back.GetInt("0.batch:count"), 3);
  EXPECT_EQ(back.GetInt("0.batch/1.shuffle:rng"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(back.GetInt("0.batch/1.shuffle:neg"), -1);
  EXPECT_EQ(back.GetBytes("0.batch/1.shuffle:buffer"), std::string("a\0b\xff", 4));
  EXPECT_EQ(back.GetBytes("0.batch:empty"), "");
  EXPECT_TRUE(back.Has("0.batch:empty"));
  EXPECT_FALSE(back.Has("0.batch:nothing"));
}

TEST(IteratorState, EmptyStateRoundTrips) {
  IteratorState empty;
  EXPECT_EQ(IteratorState::Deserialize(empty.Serialize()), empty);
}

TEST(IteratorState, PutOverwrites) {
  IteratorState state;
  state.PutInt("k", 1);
  state.PutInt("k", 2);
  EXPECT_EQ(state.size(), 1u);
  EXPECT_EQ(state.GetInt("k"), 2);
}

TEST(IteratorState, MissingOrMalformedKeyNamesIt) {
  IteratorState state;
  state.PutBytes("0.x:bytes", "abc");
  try {
    state.GetInt("0.x:missing");
    FAIL() << "no error for a missing key";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0.x:missing"), std::string::npos) << e.what();
  }
  try {
    state.GetInt("0.x:bytes");
    FAIL() << "no error for a value that is not an integer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0.x:bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(state.GetBytes("nope"), Error);
}

TEST(IteratorState, EveryTruncationThrows) {
  std::string bytes = SampleState().Serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(IteratorState::Deserialize(std::string_view(bytes).substr(0, n)), Error)
        << "truncated to " << n << " of " << bytes.size() << " bytes";
  }
}

TEST(IteratorState, GarbageThrowsOrParsesButNeverCrashes) {
  std::string bytes = SampleState().Serialize();
  EXPECT_THROW(IteratorState::Deserialize(bytes + "x"), Error);  // trailing bytes
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THROW(IteratorState::Deserialize(bad_magic), Error);
  std::string bad_version = bytes;
  bad_version[4] = 2;
  EXPECT_THROW(IteratorState::Deserialize(bad_version), Error);
  // A huge count or length must not allocate or read past the end.
  EXPECT_THROW(IteratorState::Deserialize(std::string("IPST\x01\xff\xff\xff\xff\x0f", 10)), Error);
  EXPECT_THROW(IteratorState::Deserialize(std::string("IPST\x01\x01\xff\xff\xff\xff\x0f", 11)), Error);
  // An over-long varint.
  EXPECT_THROW(IteratorState::Deserialize(std::string("IPST") + std::string(11, '\xff')), Error);
  // Every single-byte change either parses or throws Error.
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int delta : {1, 0x40, 0x80}) {
      std::string changed = bytes;
      changed[i] = static_cast<char>(changed[i] + delta);
      try {
        IteratorState::Deserialize(changed);
      } catch (const Error&) {
      }
    }
  }
}

TEST(IteratorState, DuplicateKeyIsMalformed) {
  IteratorState one;
  one.PutInt("k", 1);
  std::string bytes = one.Serialize();
  // "IPST", version 1, count 1, then the entry: make it count 2 with the entry twice.
  std::string entry = bytes.substr(6);
  std::string twice = bytes.substr(0, 5) + "\x02" + entry + entry;
  EXPECT_THROW(IteratorState::Deserialize(twice), Error);
}

TEST(IteratorStateCodec, EncoderFieldsRoundTrip) {
  StateEncoder e;
  e.PutInt(0);
  e.PutInt(-1);
  e.PutInt(std::numeric_limits<int64_t>::max());
  e.PutInt(std::numeric_limits<int64_t>::min());
  e.PutBytes("");
  e.PutBytes(std::string(1000, 'z'));
  std::string data = e.Finish();
  StateDecoder d(data, "test data");
  EXPECT_EQ(d.GetInt(), 0);
  EXPECT_EQ(d.GetInt(), -1);
  EXPECT_EQ(d.GetInt(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(d.GetInt(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(d.GetBytes(), "");
  EXPECT_EQ(d.GetBytes(), std::string(1000, 'z'));
  EXPECT_TRUE(d.done());
  try {
    d.GetInt();
    FAIL() << "read past the end";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test data"), std::string::npos) << e.what();
  }
}

TEST(IteratorStateCodec, EveryTruncationThrows) {
  StateEncoder e;
  e.PutInt(-123456789);
  e.PutBytes("hello world");
  e.PutInt(7);
  std::string data = e.Finish();
  for (size_t n = 0; n < data.size(); ++n) {
    StateDecoder d(std::string_view(data).substr(0, n), "truncated");
    EXPECT_THROW(
        {
          d.GetInt();
          d.GetBytes();
          d.GetInt();
        },
        Error)
        << "truncated to " << n;
  }
}

// Encodes one element and decodes it back, checking that all of the encoding is read.
template <typename T>
T RoundTrip(const T& v, size_t* encoded_size = nullptr) {
  StateEncoder e;
  ElementCodec<T>::Encode(v, e);
  std::string data = e.Finish();
  if (encoded_size) *encoded_size = data.size();
  StateDecoder d(data, "element");
  T back = ElementCodec<T>::Decode(d);
  EXPECT_TRUE(d.done());
  return back;
}

Sample MakeSample(const std::string& pixels, int64_t label) {
  Sample s;
  s.pixels = BufferPool::Create()->Get(pixels.size());
  std::memcpy(s.pixels.data(), pixels.data(), pixels.size());
  s.label = label;
  s.source = "photos/cat.jpg";
  s.offset = 77;
  return s;
}

TEST(ElementCodec, StringRoundTrips) {
  EXPECT_EQ(RoundTrip(std::string("abc\0def", 7)), std::string("abc\0def", 7));
}

TEST(ElementCodec, RecordByValueRoundTrips) {
  Record r{std::string(500, 'q'), "memory", 12, 3, RecordOrigin::kValue};
  size_t size = 0;
  Record back = RoundTrip(r, &size);
  EXPECT_EQ(ElementView(back), ElementView(r));
  EXPECT_GT(size, 500u);
}

TEST(ElementCodec, TfRecordIsSavedByReferenceAndReadBack) {
  std::string path = TestTempPath("codec.tfrecord");
  std::vector<std::string> records = {std::string(3000, 'a'), std::string(5000, 'b'), "c"};
  std::vector<IndexEntry> entries = WriteTestTfRecords(path, records);
  for (size_t i = 0; i < records.size(); ++i) {
    Record r{records[i], path, entries[i].offset, static_cast<int64_t>(i), RecordOrigin::kTfRecord};
    size_t size = 0;
    Record back = RoundTrip(r, &size);
    EXPECT_EQ(ElementView(back), ElementView(r));
    EXPECT_LT(size, path.size() + 30) << "saved by value, not by reference";
  }
  RemoveFile(path);
}

TEST(ElementCodec, RealTfRecordFileByReference) {
  const std::string path = std::string(IMGPIPE_TESTDATA_DIR) + "/tfrecord/tfx/mnist.tfrecord";
  TfRecordReader reader(path);
  std::string data;
  for (int i = 0; i < 5 && reader.Next(&data); ++i) {
    Record r{data, path, reader.record_offset(), -1, RecordOrigin::kTfRecord};
    EXPECT_EQ(RoundTrip(r).data, data) << "record at " << reader.record_offset();
  }
}

TEST(ElementCodec, ChangedTfRecordFileIsADataError) {
  std::string path = TestTempPath("changed.tfrecord");
  std::vector<IndexEntry> entries = WriteTestTfRecords(path, {"first record", "second record"});
  Record r{"second record", path, entries[1].offset, 1, RecordOrigin::kTfRecord};
  StateEncoder e;
  ElementCodec<Record>::Encode(r, e);
  std::string saved = e.Finish();
  // 1. The same framing and length, other bytes: the CRC of the data tells.
  WriteTestTfRecords(path, {"first record", "SECOND RECORD"});
  // 2. Other lengths: the offset no longer starts a record.
  for (int variant = 0; variant < 2; ++variant) {
    if (variant == 1) WriteTestTfRecords(path, {"a much longer first record", "second record"});
    StateDecoder d(saved, "state");
    try {
      ElementCodec<Record>::Decode(d);
      FAIL() << "no error for a changed file (variant " << variant << ")";
    } catch (const DataError& err) {
      EXPECT_EQ(err.path(), path);
      EXPECT_NE(err.reason().find("record changed since the state was saved"), std::string::npos)
          << err.what();
    }
  }
  // 3. A missing file is an error naming it.
  RemoveFile(path);
  StateDecoder d(saved, "state");
  try {
    ElementCodec<Record>::Decode(d);
    FAIL() << "no error for a missing file";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find(path), std::string::npos) << err.what();
  }
}

TEST(ElementCodec, WholeFileRecordByReference) {
  std::string path = TestTempPath("image.jpg");
  WriteFileAtomic(path, std::string(2000, 'j'));
  Record r{std::string(2000, 'j'), path, 0, 4, RecordOrigin::kFile};
  size_t size = 0;
  EXPECT_EQ(ElementView(RoundTrip(r, &size)), ElementView(r));
  EXPECT_LT(size, 2000u);
  StateEncoder e;
  ElementCodec<Record>::Encode(r, e);
  std::string saved = e.Finish();
  WriteFileAtomic(path, std::string(2000, 'k'));
  StateDecoder d(saved, "state");
  EXPECT_THROW(ElementCodec<Record>::Decode(d), DataError);
  RemoveFile(path);
}

TEST(ElementCodec, EncodeValueKeepsOriginWithoutReading) {
  Record r{"bytes that are not in any file", "/nonexistent/file.tfrecord", 40, 2,
           RecordOrigin::kTfRecord};
  StateEncoder e;
  ElementCodec<Record>::EncodeValue(r, e);
  std::string data = e.Finish();
  StateDecoder d(data, "state");
  EXPECT_EQ(ElementView(ElementCodec<Record>::Decode(d)), ElementView(r));
}

TEST(ElementCodec, SampleRoundTrips) {
  Sample s = MakeSample("rgbrgbrgb", 5);
  Sample back = RoundTrip(s);
  EXPECT_EQ(ElementView(back), ElementView(s));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(back.pixels.data()) % 64, 0u);
  Sample empty;
  EXPECT_EQ(ElementView(RoundTrip(empty)), ElementView(empty));
}

TEST(ElementCodec, BatchRoundTrips) {
  Batch b;
  b.size = 3;
  b.sample_bytes = 4;
  b.labels = {7, -1, 9};
  b.data = BufferPool::Create()->Get(12);
  std::memcpy(b.data.data(), "aaaabbbbcccc", 12);
  EXPECT_EQ(ElementView(RoundTrip(b)), ElementView(b));
}

TEST(ElementCodec, EveryTruncationThrows) {
  StateEncoder e;
  ElementCodec<Record>::Encode(Record{"data", "src", 1, 2, RecordOrigin::kValue}, e);
  Batch b;
  b.size = 2;
  b.sample_bytes = 1;
  b.labels = {1, 2};
  b.data = BufferPool::Create()->Get(2);
  ElementCodec<Batch>::Encode(b, e);
  ElementCodec<Sample>::Encode(MakeSample("px", 1), e);
  std::string data = e.Finish();
  for (size_t n = 0; n < data.size(); ++n) {
    StateDecoder d(std::string_view(data).substr(0, n), "truncated");
    EXPECT_THROW(
        {
          ElementCodec<Record>::Decode(d);
          ElementCodec<Batch>::Decode(d);
          ElementCodec<Sample>::Decode(d);
        },
        Error)
        << "truncated to " << n;
  }
}

}  // namespace
}  // namespace imgpipe::pipeline
