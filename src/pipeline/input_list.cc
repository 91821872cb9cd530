#include "pipeline/input_list.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"

namespace imgpipe {
namespace {

bool IsHidden(const std::string& name) { return !name.empty() && name[0] == '.'; }

// Appends every non-hidden regular file under `dir` (recursively) as `prefix/<rel>`.
void ListFilesRecursively(const std::string& dir, const std::string& prefix,
                          std::vector<std::string>* out) {
  for (const std::string& name : ListDirectory(dir)) {
    if (IsHidden(name)) continue;
    std::string path = JoinPath(dir, name);
    std::string rel = JoinPath(prefix, name);
    if (IsDirectory(path)) {
      ListFilesRecursively(path, rel, out);
    } else {
      out->push_back(rel);
    }
  }
}

bool ParseNonNegativeInt(std::string_view text, int* value) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size() && *value >= 0;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Splits one CSV record (RFC 4180) starting at text[*pos]; advances *pos past its line
// end. Quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::string> ParseCsvRecord(std::string_view text, size_t* pos,
                                        const std::string& path) {
  std::vector<std::string> fields(1);
  size_t start = *pos;
  size_t i = *pos;
  bool quoted = false;
  while (i < text.size()) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          fields.back() += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      ++i;
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
    ++i;
  }
  if (quoted) throw DataError(path, start, "unterminated quoted field");
  *pos = i;
  return fields;
}

struct RawEntry {
  std::string path;
  std::string label;
  uint64_t offset = 0;  // of its line in the manifest, for errors
};

// Integer labels are class indices, and classes 0..max_label all get a name, so a
// larger label is refused rather than allocating a class list to match.
constexpr int kMaxIntegerLabel = (1 << 20) - 1;

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<RawEntry> ParseCsv(std::string_view text, const std::string& path) {
  std::vector<RawEntry> entries;
  size_t pos = 0;
  size_t path_column = 0, label_column = 1;
  bool first = true;
  while (pos < text.size()) {
    size_t line_offset = pos;
    std::vector<std::string> fields = ParseCsvRecord(text, &pos, path);
    if (fields.size() == 1 && Trim(fields[0]).empty()) continue;  // blank line
    for (auto& f : fields) f = Trim(f);
    if (first) {
      first = false;
      auto p = std::find(fields.begin(), fields.end(), "path");
      auto l = std::find(fields.begin(), fields.end(), "label");
      if (p != fields.end() && l != fields.end()) {
        path_column = p - fields.begin();
        label_column = l - fields.begin();
        continue;
      }
    }
    size_t needed = std::max(path_column, label_column) + 1;
    if (fields.size() < needed) {
      throw DataError(path, line_offset,
                      "expected columns path,label but found " + std::to_string(fields.size()) +
                          " field(s)");
    }
    if (fields[path_column].empty()) throw DataError(path, line_offset, "empty path");
    if (fields[label_column].empty()) throw DataError(path, line_offset, "empty label");
    entries.push_back({fields[path_column], fields[label_column], line_offset});
  }
  return entries;
}

std::vector<RawEntry> ParseJsonLines(std::string_view text, const std::string& path) {
  std::vector<RawEntry> entries;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line = Trim(text.substr(pos, end - pos));
    size_t line_offset = pos;
    pos = end + 1;
    if (line.empty()) continue;
    nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded() || !object.is_object()) {
      throw DataError(path, line_offset, "not a JSON object");
    }
    auto p = object.find("path");
    auto l = object.find("label");
    if (p == object.end() || !p->is_string() || p->get<std::string>().empty()) {
      throw DataError(path, line_offset, "missing string field \"path\"");
    }
    std::string label;
    if (l != object.end() && l->is_string()) {
      label = l->get<std::string>();
    } else if (l != object.end() && l->is_number_integer()) {
      label = std::to_string(l->get<int64_t>());
    }
    if (label.empty()) throw DataError(path, line_offset, "missing field \"label\"");
    entries.push_back({p->get<std::string>(), label, line_offset});
  }
  return entries;
}

// Turns label strings into class indices (see ReadManifest) and sorts by name; `path`
// labels errors.
InputList BuildInputList(std::vector<RawEntry> entries, const std::string& base_dir,
                         const std::string& path) {
  InputList list;
  bool all_integers = !entries.empty();
  int max_label = -1;
  for (const RawEntry& e : entries) {
    int value;
    if (!ParseNonNegativeInt(e.label, &value)) {
      all_integers = false;
      break;
    }
    max_label = std::max(max_label, value);
  }
  if (all_integers && max_label > kMaxIntegerLabel) {
    auto largest = std::find_if(entries.begin(), entries.end(), [&](const RawEntry& e) {
      int value;
      return ParseNonNegativeInt(e.label, &value) && value == max_label;
    });
    throw DataError(path, largest->offset,
                    "integer label " + std::to_string(max_label) + " exceeds the limit of " +
                        std::to_string(kMaxIntegerLabel) + " (integer labels are class indices)");
  }
  std::map<std::string, int> index;
  if (all_integers) {
    for (int i = 0; i <= max_label; ++i) list.class_names.push_back(std::to_string(i));
  } else {
    for (const RawEntry& e : entries) index[e.label] = 0;
    for (auto& [name, i] : index) {
      i = static_cast<int>(list.class_names.size());
      list.class_names.push_back(name);
    }
  }
  for (RawEntry& e : entries) {
    InputImage image;
    image.path = e.path.front() == '/' ? e.path : JoinPath(base_dir, e.path);
    image.name = e.path;
    if (all_integers) {
      ParseNonNegativeInt(e.label, &image.label);
    } else {
      image.label = index[e.label];
    }
    list.images.push_back(std::move(image));
  }
  std::stable_sort(list.images.begin(), list.images.end(),
                   [](const InputImage& a, const InputImage& b) { return a.name < b.name; });
  return list;
}

}  // namespace

InputList ListImageFolder(const std::string& dir) {
  InputList list;
  size_t loose_files = 0;
  for (const std::string& name : ListDirectory(dir)) {
    if (IsHidden(name)) continue;
    if (!IsDirectory(JoinPath(dir, name))) {
      ++loose_files;
      continue;
    }
    std::vector<std::string> files;
    ListFilesRecursively(JoinPath(dir, name), name, &files);
    int label = static_cast<int>(list.class_names.size());
    list.class_names.push_back(name);
    for (std::string& rel : files) {
      list.images.push_back({JoinPath(dir, rel), rel, label});
    }
  }
  if (list.class_names.empty()) {
    throw Error(dir + ": no class folders (expected DIR/<class>/<image>)");
  }
  if (loose_files > 0) {
    Log(LogLevel::kDebug, dir + ": " + std::to_string(loose_files) +
            " file(s) outside the class folders are not inputs");
  }
  std::sort(list.images.begin(), list.images.end(),
            [](const InputImage& a, const InputImage& b) { return a.name < b.name; });
  return list;
}

InputList ParseManifest(std::string_view text, bool is_csv, const std::string& base_dir,
                        const std::string& path) {
  std::vector<RawEntry> entries = is_csv ? ParseCsv(text, path) : ParseJsonLines(text, path);
  if (entries.empty()) throw DataError(path, std::nullopt, "manifest lists no images");
  return BuildInputList(std::move(entries), base_dir, path);
}

InputList ReadManifest(const std::string& manifest_path) {
  bool is_csv = EndsWith(manifest_path, ".csv");
  if (!is_csv && !EndsWith(manifest_path, ".jsonl") && !EndsWith(manifest_path, ".json")) {
    throw Error(manifest_path + ": unknown manifest type (expected .csv, .jsonl or .json)");
  }
  return ParseManifest(ReadFile(manifest_path), is_csv, DirName(manifest_path), manifest_path);
}

InputList ListInputs(const std::string& input) {
  if (IsDirectory(input)) return ListImageFolder(input);
  if (!PathExists(input)) throw Error(input + ": no such file or folder");
  return ReadManifest(input);
}

}  // namespace imgpipe
