#include "util/error.h"

#include <cstring>

namespace imgpipe {
namespace {

std::string FormatDataError(const std::string& path, std::optional<uint64_t> offset,
                            const std::string& message) {
  std::string out = path + ": ";
  if (offset) out += "offset " + std::to_string(*offset) + ": ";
  return out + message;
}

}  // namespace

DataError::DataError(std::string path, std::optional<uint64_t> offset, std::string message)
    : Error(FormatDataError(path, offset, message)),
      path_(std::move(path)),
      offset_(offset),
      reason_(std::move(message)) {}

IoError::IoError(const std::string& path, const std::string& action, int error_number)
    : Error(path + ": " + action + ": " + std::strerror(error_number)),
      error_number_(error_number) {}

}  // namespace imgpipe
