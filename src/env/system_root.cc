#include "env/system_root.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe::env {

namespace fs = std::filesystem;

SystemRoot::SystemRoot(std::string root) {
  size_t last = root.find_last_not_of('/');  // trailing slashes dropped; "" and "/" are "/"
  root_ = last == std::string::npos ? std::string(1, '/') : root.substr(0, last + 1);
}

std::string SystemRoot::Path(std::string_view absolute_path) const {
  if (is_real_root()) return std::string(absolute_path);
  return JoinPath(root_, absolute_path);
}

std::optional<std::string> SystemRoot::ReadText(std::string_view absolute_path) const {
  std::string path = Path(absolute_path);
  if (IsDirectory(path)) return std::nullopt;
  try {
    return ReadFile(path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<int64_t> SystemRoot::ReadInteger(std::string_view absolute_path) const {
  std::optional<std::string> text = ReadText(absolute_path);
  if (!text) return std::nullopt;
  std::string_view trimmed = TrimWhitespace(*text);
  return ParseInteger(trimmed.substr(0, trimmed.find_first_of(" \t\n")));
}

bool SystemRoot::Exists(std::string_view absolute_path) const {
  std::error_code error;
  return fs::exists(fs::symlink_status(Path(absolute_path), error));
}

std::vector<std::string> SystemRoot::List(std::string_view absolute_path) const {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(Path(absolute_path), error), end; !error && it != end;
       it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> SystemRoot::Resolve(std::string_view absolute_path) const {
  std::error_code error;
  fs::path resolved = fs::canonical(Path(absolute_path), error);
  if (error) return std::nullopt;
  std::string text = resolved.string();
  if (is_real_root()) return text;
  fs::path base = fs::canonical(root_, error);
  if (error) return std::nullopt;
  std::string prefix = base.string();
  if (text == prefix) return std::string("/");
  if (text.compare(0, prefix.size(), prefix) != 0 || text[prefix.size()] != '/') {
    return std::nullopt;
  }
  return text.substr(prefix.size());
}

std::string_view TrimWhitespace(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size() && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  size_t end = text.size();
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::vector<std::string> SplitAndTrim(std::string_view text, char separator) {
  std::vector<std::string> parts;
  while (true) {
    size_t at = text.find(separator);
    parts.emplace_back(TrimWhitespace(text.substr(0, at)));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  text = TrimWhitespace(text);
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

bool ContainsIgnoringCase(std::string_view text, std::string_view needle) {
  auto it = std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

}  // namespace imgpipe::env
