// Errors in imgpipe are exceptions that carry their context. A library never exits.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace imgpipe {

// Base of every error imgpipe throws. what() is a complete, user-facing sentence.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A bad value of an argument or option (out of range, not one of the names allowed,
// impossible with the data): what() names the argument and what it allows. Python
// raises it as imgpipe.InvalidArgument, a ValueError.
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& message) : Error(message) {}
};

// An error about the contents of a file: what() reads "PATH: offset N: MESSAGE"
// (or "PATH: MESSAGE" when no offset applies).
class DataError : public Error {
 public:
  DataError(std::string path, std::optional<uint64_t> offset, std::string message);

  const std::string& path() const { return path_; }
  std::optional<uint64_t> offset() const { return offset_; }
  // The message without the path and offset.
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::optional<uint64_t> offset_;
  std::string reason_;
};

// An operating-system call failed: what() reads "PATH: ACTION: strerror(errno)".
class IoError : public Error {
 public:
  IoError(const std::string& path, const std::string& action, int error_number);
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};

}  // namespace imgpipe
