// The file-system root the doctor reads /proc, /sys, /dev, /usr/lib and marker files
// from: "/" on a real machine, a folder holding a fake tree in tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imgpipe::env {

class SystemRoot {
 public:
  // `root`: the folder that stands for "/".
  explicit SystemRoot(std::string root = "/");

  const std::string& root() const { return root_; }
  bool is_real_root() const { return root_ == "/"; }
  // The path of `absolute_path` ("/proc/meminfo") below the root.
  std::string Path(std::string_view absolute_path) const;
  // The contents of a file, or nullopt when it is missing or unreadable.
  std::optional<std::string> ReadText(std::string_view absolute_path) const;
  // The first whitespace-separated token of a file as an integer (sysfs and cgroup
  // files hold one number); nullopt when missing or not a number.
  std::optional<int64_t> ReadInteger(std::string_view absolute_path) const;
  // Whether anything (file, folder, device node, link) exists there.
  bool Exists(std::string_view absolute_path) const;
  // Names of the entries of a folder, sorted; empty when it is missing.
  std::vector<std::string> List(std::string_view absolute_path) const;
  // The root-relative absolute path ("/sys/devices/.../sda") that `absolute_path`
  // resolves to, following symbolic links inside the root; nullopt when it does not
  // exist or leaves the root.
  std::optional<std::string> Resolve(std::string_view absolute_path) const;

 private:
  std::string root_;
};

// Helpers for the text of /proc and /sys files.
// `text` without leading and trailing white space.
std::string_view TrimWhitespace(std::string_view text);
// `text` cut at every `separator`, each part trimmed; empty parts kept.
std::vector<std::string> SplitAndTrim(std::string_view text, char separator);
// A whole decimal integer (after trimming); nullopt for anything else.
std::optional<int64_t> ParseInteger(std::string_view text);
// Whether `text` contains `needle`, ignoring ASCII case.
bool ContainsIgnoringCase(std::string_view text, std::string_view needle);

}  // namespace imgpipe::env
