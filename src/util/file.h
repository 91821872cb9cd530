// Files: whole-file reads, sequential readers, writers with an atomic commit.
// Every failure throws IoError naming the path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace imgpipe {

// Reads a whole file into memory.
std::string ReadFile(const std::string& path);
// Size in bytes of a regular file; throws for directories and missing files.
uint64_t FileSize(const std::string& path);
bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);
// Creates a folder and its parents; no error when it exists.
void MakeDirectories(const std::string& path);
// Names (not paths) of the entries of a folder, sorted bytewise.
std::vector<std::string> ListDirectory(const std::string& path);
// Removes a file; no error when it does not exist.
void RemoveFile(const std::string& path);
// rename(2); atomic within one file system.
void RenameFile(const std::string& from, const std::string& to);
// Joins two path parts with exactly one '/'.
std::string JoinPath(std::string_view a, std::string_view b);
// The part after the last '/'.
std::string BaseName(std::string_view path);
// The part before the last '/' ("." when there is none).
std::string DirName(std::string_view path);

// A byte source read front to back. Read returns fewer than n bytes only at the end.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  virtual size_t Read(char* buffer, size_t n) = 0;
  // Name used in error messages.
  virtual const std::string& path() const = 0;
};

// Opens a file for sequential reading with the OS's read-ahead hint.
std::unique_ptr<SequentialFile> OpenSequentialFile(const std::string& path);

// A file read at arbitrary offsets (pread), safe to share between threads.
class RandomAccessFile {
 public:
  // Opens `path`; throws IoError for a missing file or a directory.
  explicit RandomAccessFile(std::string path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  // Size when opened.
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads up to n bytes at `offset`; fewer only at the end of the file.
  size_t Read(uint64_t offset, char* out, size_t n) const;
  // Tells the OS the file will be read front to back (more read-ahead).
  void AdviseSequential() const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A byte sink. Writes may be buffered until Flush or Close.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual void Append(std::string_view data) = 0;
  virtual void Flush() = 0;
  // Flush, then fsync.
  virtual void Sync() = 0;
  virtual void Close() = 0;
  virtual const std::string& path() const = 0;
};

// Creates (truncating) a file for writing.
std::unique_ptr<WritableFile> OpenWritableFile(const std::string& path);

// Writes a file under a temporary name beside its final one and renames it into place
// on Commit, so the final name never holds a partial file. Without Commit, the
// destructor removes the temporary file.
class AtomicFileWriter {
 public:
  // `opener` makes the WritableFile for the temporary path (tests substitute one that
  // fails, e.g. with ENOSPC); by default OpenWritableFile.
  using Opener = std::unique_ptr<WritableFile> (*)(const std::string& path);
  explicit AtomicFileWriter(std::string final_path, Opener opener = nullptr);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  WritableFile& file() { return *file_; }
  const std::string& final_path() const { return final_path_; }
  const std::string& temporary_path() const { return temporary_path_; }
  // Syncs, closes and renames the file to its final name. Without `sync`, a killed
  // process still never leaves a partial file, but an OS crash or power loss may.
  void Commit(bool sync = true);

 private:
  std::string final_path_;
  std::string temporary_path_;
  std::unique_ptr<WritableFile> file_;
  bool committed_ = false;
};

// Writes `data` to `path` atomically (see AtomicFileWriter and Commit's `sync`).
void WriteFileAtomic(const std::string& path, std::string_view data, bool sync = true);

// The suffix AtomicFileWriter gives temporary files; a folder's leftovers from a killed
// run end with it.
inline constexpr std::string_view kTemporarySuffix = ".tmp";

}  // namespace imgpipe
