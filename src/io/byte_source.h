// Bytes read at offsets, whatever holds them: a local file, memory, and (next) an object
// in network storage. The record layer reads through this interface, so nothing above it
// needs to know which one it reads.
#ifndef IMGPIPE_IO_BYTE_SOURCE_H_
#define IMGPIPE_IO_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "util/file.h"

namespace imgpipe {

// A fixed sequence of bytes read at offsets. Read is safe to call from several threads.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Its size when opened.
  virtual uint64_t size() const = 0;
  // Reads up to n bytes at `offset` into `out`; fewer only at the end. Throws IoError (or
  // a subclass of Error naming name()) when the bytes cannot be had.
  virtual size_t Read(uint64_t offset, char* out, size_t n) const = 0;
  // The path or URL, for error messages.
  virtual const std::string& name() const = 0;
  // A hint that reading goes front to back (more read-ahead). Default: none.
  virtual void AdviseSequential() const {}
  // The size of reads worth a round trip each, for a source over a network (0: reads of
  // any size are cheap). ReadFrontToBack reads such a source in pieces of this size, the
  // next ones fetched while the current one is consumed.
  virtual size_t read_ahead_bytes() const { return 0; }
};

// The local file at `path` (pread). Throws IoError when it cannot be opened or is a
// directory.
std::unique_ptr<ByteSource> OpenLocalByteSource(const std::string& path);

// `bytes`, held in memory, named `name` in errors.
std::unique_ptr<ByteSource> MakeMemoryByteSource(std::string name, std::string bytes);

// Pieces ReadFrontToBack holds at most per source: the one being read and four in flight.
inline constexpr size_t kMaxPiecesHeld = 5;

// A SequentialFile reading `source` front to back (its path() is the source's name); a
// source with read_ahead_bytes() is read ahead in pieces of that size on other threads: two
// in flight, one more each time the reader had to wait for one, up to four (five held).
std::unique_ptr<SequentialFile> ReadFrontToBack(std::unique_ptr<ByteSource> source);

}  // namespace imgpipe

#endif  // IMGPIPE_IO_BYTE_SOURCE_H_
