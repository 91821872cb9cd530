// Bytes read at offsets, whatever holds them: a local file, memory, and (next) an object
// in network storage. The record layer reads through this interface, so nothing above it
// needs to know which one it reads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/piece_buffer.h"
#include "util/file.h"

namespace imgpipe {

// A stretch of a source: bytes [offset, offset + size).
struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t end() const { return offset + size; }
  bool operator==(const ByteRange&) const = default;
};

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
  // Hands over bytes [range.offset, range.end()) when the source holds exactly those in
  // memory already (a network source's first piece, fetched as it was opened): true, *out
  // holds them and the source does not (a later Read of them fetches them again).
  // Default: false, *out untouched.
  virtual bool TakeHeldPiece(ByteRange range, PieceBuffer* out) const { return false; }
};

// The local file at `path` (pread). Throws IoError when it cannot be opened or is a
// directory.
std::unique_ptr<ByteSource> OpenLocalByteSource(const std::string& path);

// `bytes`, held in memory, named `name` in errors.
std::unique_ptr<ByteSource> MakeMemoryByteSource(std::string name, std::string bytes);

// Pieces a read-ahead reader (ReadFrontToBack, ReadRangesAhead) holds at most per source:
// the one being read and four in flight.
inline constexpr size_t kMaxPiecesHeld = 5;

// The most pieces a read-ahead reader keeps in flight beside the one being read, read as
// each piece is taken, so that a pipeline's autotuner (pipeline/autotune.h) can move it
// within its RAM budget while files are read; clamped to [1, kMaxPiecesHeld - 1]. A
// reader given none keeps up to kMaxPiecesHeld - 1 in flight.
using PiecesAheadLimit = std::atomic<int64_t>;

// A SequentialFile reading `source` front to back (its path() is the source's name); a
// source with read_ahead_bytes() is read ahead in pieces of that size on other threads: two
// in flight, one more each time the reader had to wait for one, up to four (five held) or
// *limit.
std::unique_ptr<SequentialFile> ReadFrontToBack(std::unique_ptr<ByteSource> source,
                                                const PiecesAheadLimit* limit = nullptr);

// `source` with the stretches `pieces` (in the order they will be read, each one ranged
// read) fetched ahead as ReadFrontToBack fetches its pieces, for a reader that moves
// forward through them: a read inside the piece being read or a later one is served from
// memory (pieces it passed over are dropped); any other read (backwards, between or
// after the pieces) goes to `source`, so every read gives the source's bytes. For one
// reader at a time (its reads are serialised). Its read_ahead_bytes() is 0.
std::unique_ptr<ByteSource> ReadRangesAhead(std::unique_ptr<ByteSource> source, std::vector<ByteRange> pieces,
                                            const PiecesAheadLimit* limit = nullptr);

// Pieces that cover `extents` (stretches sorted by offset, such as records from an index
// file): neighbours merged into one piece while it stays within `piece_bytes` and the gap
// between them is at most `max_gap` bytes, so pieces are cut at extent boundaries; an
// extent larger than `piece_bytes` is a piece of its own.
std::vector<ByteRange> PiecesAlong(const std::vector<ByteRange>& extents, uint64_t piece_bytes,
                                   uint64_t max_gap = 0);

// [range.offset, range.end()) cut into pieces of `piece_bytes` (the last one shorter).
std::vector<ByteRange> SplitIntoPieces(ByteRange range, uint64_t piece_bytes);

}  // namespace imgpipe
