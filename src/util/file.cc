#include "util/file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace imgpipe {
namespace {

constexpr size_t kWriteBufferSize = 1 << 20;

// Calls read_some(bytes done so far) (a read(2) or pread(2)) until `n` bytes are read or
// it returns 0 (end of file), retrying on EINTR; returns the bytes read.
template <typename ReadSome>
size_t ReadFully(const std::string& path, size_t n, ReadSome read_some) {
  size_t done = 0;
  while (done < n) {
    ssize_t got = read_some(done);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(path, "read", errno);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

class PosixSequentialFile : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  size_t Read(char* buffer, size_t n) override {
    return ReadFully(path_, n, [&](size_t done) { return ::read(fd_, buffer + done, n - done); });
  }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  int fd_;
};

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {
    buffer_.reserve(kWriteBufferSize);
  }
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  void Append(std::string_view data) override {
    if (buffer_.size() + data.size() > kWriteBufferSize) {
      Flush();
      if (data.size() >= kWriteBufferSize) {
        WriteAll(data);
        return;
      }
    }
    buffer_.append(data);
  }
  void Flush() override {
    WriteAll(buffer_);
    buffer_.clear();
  }
  void Sync() override {
    Flush();
    if (::fdatasync(fd_) != 0) throw IoError(path_, "fdatasync", errno);
  }
  void Close() override {
    if (fd_ < 0) return;
    Flush();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw IoError(path_, "close", errno);
  }
  const std::string& path() const override { return path_; }

 private:
  void WriteAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw IoError(path_, "write", errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
  }

  std::string path_;
  int fd_;
  std::string buffer_;
};

struct stat StatPath(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw IoError(path, "stat", errno);
  return st;
}

}  // namespace

std::string ReadFile(const std::string& path) {
  auto file = OpenSequentialFile(path);
  std::string data;
  char buffer[1 << 16];
  while (true) {
    size_t n = file->Read(buffer, sizeof(buffer));
    data.append(buffer, n);
    if (n < sizeof(buffer)) break;
  }
  return data;
}

uint64_t FileSize(const std::string& path) {
  struct stat st = StatPath(path);
  if (S_ISDIR(st.st_mode)) throw IoError(path, "size", EISDIR);
  return static_cast<uint64_t>(st.st_size);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void MakeDirectories(const std::string& path) {
  if (path.empty() || IsDirectory(path)) return;
  std::string parent = DirName(path);
  if (parent != path && parent != "." && parent != "/") MakeDirectories(parent);
  if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) {
    throw IoError(path, "mkdir", errno);
  }
}

std::vector<std::string> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) throw IoError(path, "opendir", errno);
  std::vector<std::string> names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

void RemoveFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw IoError(path, "unlink", errno);
}

void RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) throw IoError(from, "rename to " + to, errno);
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  if (out.back() != '/') out += '/';
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  out += b;
  return out;
}

std::string BaseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string DirName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::unique_ptr<SequentialFile> OpenSequentialFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path, "open", errno);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IoError(path, "open", EISDIR);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::make_unique<PosixSequentialFile>(path, fd);
}

std::unique_ptr<WritableFile> OpenWritableFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError(path, "create", errno);
  return std::make_unique<PosixWritableFile>(path, fd);
}

RandomAccessFile::RandomAccessFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw IoError(path_, "open", errno);
  struct stat st;
  int error = ::fstat(fd_, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
  if (error != 0) {
    ::close(fd_);
    throw IoError(path_, "open", error);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

RandomAccessFile::~RandomAccessFile() { ::close(fd_); }

size_t RandomAccessFile::Read(uint64_t offset, char* out, size_t n) const {
  return ReadFully(path_, n, [&](size_t done) {
    return ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
  });
}

void RandomAccessFile::AdviseSequential() const {
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

AtomicFileWriter::AtomicFileWriter(std::string final_path, Opener opener)
    : final_path_(std::move(final_path)),
      temporary_path_(final_path_ + "." + std::to_string(::getpid()) +
                      std::string(kTemporarySuffix)) {
  file_ = (opener ? opener : &OpenWritableFile)(temporary_path_);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (committed_) return;
  try {
    file_->Close();
  } catch (...) {
  }
  ::unlink(temporary_path_.c_str());
}

void AtomicFileWriter::Commit(bool sync) {
  if (sync) file_->Sync();
  file_->Close();
  RenameFile(temporary_path_, final_path_);
  committed_ = true;
}

void WriteFileAtomic(const std::string& path, std::string_view data, bool sync) {
  AtomicFileWriter writer(path);
  writer.file().Append(data);
  writer.Commit(sync);
}

}  // namespace imgpipe
