#include "pipeline/input_list.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"

namespace imgpipe {

std::string_view InputList::name(size_t i) const {
  const Entry& e = entries_[i];
  return std::string_view(blocks_[e.block].get() + e.offset, e.size);
}

std::string InputList::path(size_t i) const {
  std::string_view n = name(i);
  if (!n.empty() && n.front() == '/') return std::string(n);
  return JoinPath(root_, n);
}

void InputList::Add(std::string_view name, int label) {
  if (name.size() > std::numeric_limits<uint32_t>::max()) {
    throw Error("an input name of " + std::to_string(name.size()) + " bytes is too long");
  }
  // A name longer than a block gets a block of its own.
  if (block_used_ + name.size() > kBlockBytes || blocks_.empty()) {
    blocks_.push_back(std::make_unique<char[]>(std::max(kBlockBytes, name.size())));
    block_used_ = 0;
  }
  std::memcpy(blocks_.back().get() + block_used_, name.data(), name.size());
  entries_.push_back({static_cast<uint32_t>(blocks_.size() - 1), static_cast<uint32_t>(block_used_),
                      static_cast<uint32_t>(name.size()), label});
  block_used_ += name.size();
}

void InputList::SortByName() {
  auto view = [this](const Entry& e) {
    return std::string_view(blocks_[e.block].get() + e.offset, e.size);
  };
  std::stable_sort(entries_.begin(), entries_.end(),
                   [&](const Entry& a, const Entry& b) { return view(a) < view(b); });
}

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

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Integer labels are class indices, and classes 0..max_label all get a name, so a
// larger label is refused rather than allocating a class list to match.
constexpr int kMaxIntegerLabel = (1 << 20) - 1;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// The rows of a manifest as they arrive, in file order: names into the list, each
// distinct label text into an id by first appearance; Finish() turns the ids into
// class indices (see ReadManifest) and sorts by name.
class ManifestRows {
 public:
  ManifestRows(const std::string& base_dir, const std::string& path)
      : list_(base_dir), path_(path) {}

  void Add(std::string_view name, std::string_view label, uint64_t offset) {
    auto it = labels_.find(label);
    if (it == labels_.end()) {
      it = labels_.emplace(std::string(label), Label{static_cast<int>(labels_.size()), offset})
               .first;
    }
    list_.Add(name, it->second.id);
  }

  InputList Finish() {
    if (list_.empty()) throw DataError(path_, std::nullopt, "manifest lists no images");
    // 1. Each id's class index: the integer itself when every label is one, else the
    //    label's rank among the sorted label texts.
    std::vector<int> class_of(labels_.size());
    bool all_integers = true;
    int max_label = -1;
    uint64_t max_offset = 0;
    for (const auto& [text, label] : labels_) {
      int value;
      if (!ParseNonNegativeInt(text, &value)) {
        all_integers = false;
        break;
      }
      class_of[label.id] = value;
      if (value > max_label || (value == max_label && label.first_offset < max_offset)) {
        max_label = value;
        max_offset = label.first_offset;
      }
    }
    if (all_integers) {
      if (max_label > kMaxIntegerLabel) {
        throw DataError(path_, max_offset,
                        "integer label " + std::to_string(max_label) + " exceeds the limit of " +
                            std::to_string(kMaxIntegerLabel) +
                            " (integer labels are class indices)");
      }
      for (int i = 0; i <= max_label; ++i) list_.class_names.push_back(std::to_string(i));
    } else {
      std::vector<std::pair<std::string_view, int>> sorted;  // text, id
      for (const auto& [text, label] : labels_) sorted.emplace_back(text, label.id);
      std::sort(sorted.begin(), sorted.end());
      for (const auto& [text, id] : sorted) {
        class_of[id] = static_cast<int>(list_.class_names.size());
        list_.class_names.emplace_back(text);
      }
    }
    // 2. Every row's id becomes its class; then the rows are sorted by name.
    for (size_t i = 0; i < list_.size(); ++i) list_.set_label(i, class_of[list_.label(i)]);
    list_.SortByName();
    return std::move(list_);
  }

 private:
  struct Label {
    int id;
    uint64_t first_offset;  // of the line it first appears on, for errors
  };
  InputList list_;
  std::string path_;
  std::unordered_map<std::string, Label, StringHash, std::equal_to<>> labels_;
};

// Parses a manifest given in pieces (Feed), line by line; a line cut by the end of a
// piece is carried over to the next.
class ManifestParser {
 public:
  ManifestParser(bool is_csv, const std::string& base_dir, const std::string& path)
      : is_csv_(is_csv), path_(path), rows_(base_dir, path) {}

  // Parses the complete lines of what earlier pieces left over followed by `text`;
  // `last` marks the final piece (a line without a newline then ends the file).
  void Feed(std::string_view text, bool last) {
    std::string_view data = text;
    if (!pending_.empty()) {
      pending_.append(text);
      data = pending_;
    }
    size_t pos = 0;
    while (pos < data.size()) {
      if (!(is_csv_ ? CsvLine(data, last, &pos) : JsonLine(data, last, &pos))) break;
    }
    std::string rest(data.substr(pos));
    base_offset_ += pos;
    pending_ = std::move(rest);
  }

  InputList Finish() { return rows_.Finish(); }

 private:
  // Splits one CSV record (RFC 4180) starting at text[*pos] into fields_ and advances
  // *pos past its line end. Quoted fields may hold commas, doubled quotes and newlines.
  // Returns false, leaving *pos, when the text ends inside the record and is not `last`.
  bool SplitCsvRecord(std::string_view text, bool last, size_t* pos) {
    fields_.assign(1, std::string());
    size_t i = *pos;
    bool quoted = false, ended = false;
    while (i < text.size()) {
      char c = text[i];
      if (quoted) {
        if (c == '"') {
          if (i + 1 == text.size() && !last) return false;  // maybe a doubled quote
          if (i + 1 < text.size() && text[i + 1] == '"') {
            fields_.back() += '"';
            ++i;
          } else {
            quoted = false;
          }
        } else {
          fields_.back() += c;
        }
      } else if (c == '"' && fields_.back().empty()) {
        quoted = true;
      } else if (c == ',') {
        fields_.emplace_back();
      } else if (c == '\n') {
        ++i;
        ended = true;
        break;
      } else if (c != '\r') {
        fields_.back() += c;
      }
      ++i;
    }
    if (!ended && !last) return false;
    if (quoted) throw DataError(path_, base_offset_ + *pos, "unterminated quoted field");
    *pos = i;
    return true;
  }

  bool CsvLine(std::string_view text, bool last, size_t* pos) {
    const uint64_t line_offset = base_offset_ + *pos;
    if (!SplitCsvRecord(text, last, pos)) return false;
    if (fields_.size() == 1 && Trim(fields_[0]).empty()) return true;  // blank line
    if (first_line_) {
      first_line_ = false;
      auto named = [&](std::string_view column) {
        for (size_t k = 0; k < fields_.size(); ++k) {
          if (Trim(fields_[k]) == column) return k;
        }
        return fields_.size();
      };
      size_t p = named("path"), l = named("label");
      if (p < fields_.size() && l < fields_.size()) {
        path_column_ = p;
        label_column_ = l;
        return true;
      }
    }
    size_t needed = std::max(path_column_, label_column_) + 1;
    if (fields_.size() < needed) {
      throw DataError(path_, line_offset,
                      "expected columns path,label but found " + std::to_string(fields_.size()) +
                          " field(s)");
    }
    std::string_view name = Trim(fields_[path_column_]);
    std::string_view label = Trim(fields_[label_column_]);
    if (name.empty()) throw DataError(path_, line_offset, "empty path");
    if (label.empty()) throw DataError(path_, line_offset, "empty label");
    rows_.Add(name, label, line_offset);
    return true;
  }

  bool JsonLine(std::string_view text, bool last, size_t* pos) {
    size_t end = text.find('\n', *pos);
    if (end == std::string_view::npos) {
      if (!last) return false;
      end = text.size();
    }
    std::string_view line = Trim(text.substr(*pos, end - *pos));
    const uint64_t line_offset = base_offset_ + *pos;
    *pos = std::min(end + 1, text.size());
    if (line.empty()) return true;
    nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded() || !object.is_object()) {
      throw DataError(path_, line_offset, "not a JSON object");
    }
    auto p = object.find("path");
    auto l = object.find("label");
    if (p == object.end() || !p->is_string() || p->get_ref<const std::string&>().empty()) {
      throw DataError(path_, line_offset, "missing string field \"path\"");
    }
    std::string label;
    if (l != object.end() && l->is_string()) {
      label = l->get<std::string>();
    } else if (l != object.end() && l->is_number_integer()) {
      label = std::to_string(l->get<int64_t>());
    }
    if (label.empty()) throw DataError(path_, line_offset, "missing field \"label\"");
    rows_.Add(p->get_ref<const std::string&>(), label, line_offset);
    return true;
  }

  const bool is_csv_;
  const std::string path_;
  ManifestRows rows_;
  std::string pending_;        // the start of a line cut by the end of the last piece
  uint64_t base_offset_ = 0;   // file offset of pending_[0] (of the next piece's text)
  std::vector<std::string> fields_;  // the CSV record being split
  bool first_line_ = true;           // the CSV header, if any, is the first line
  size_t path_column_ = 0, label_column_ = 1;
};

}  // namespace

InputList ListImageFolder(const std::string& dir) {
  InputList list(dir);
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
    for (const std::string& rel : files) list.Add(rel, label);
  }
  if (list.class_names.empty()) {
    throw Error(dir + ": no class folders (expected DIR/<class>/<image>)");
  }
  if (loose_files > 0) {
    Log(LogLevel::kDebug, dir + ": " + std::to_string(loose_files) +
            " file(s) outside the class folders are not inputs");
  }
  list.SortByName();
  return list;
}

InputList ParseManifest(std::string_view text, bool is_csv, const std::string& base_dir,
                        const std::string& path, size_t piece_bytes) {
  ManifestParser parser(is_csv, base_dir, path);
  piece_bytes = std::max<size_t>(piece_bytes, 1);
  size_t pos = 0;
  do {
    size_t n = std::min(piece_bytes, text.size() - pos);
    parser.Feed(text.substr(pos, n), /*last=*/pos + n == text.size());
    pos += n;
  } while (pos < text.size());
  return parser.Finish();
}

bool IsManifestPath(std::string_view path) {
  return path.ends_with(".csv") || path.ends_with(".jsonl") || path.ends_with(".json");
}

InputList ReadManifest(const std::string& manifest_path) {
  if (!IsManifestPath(manifest_path)) {
    throw Error(manifest_path + ": unknown manifest type (expected .csv, .jsonl or .json)");
  }
  const bool is_csv = manifest_path.ends_with(".csv");
  std::unique_ptr<SequentialFile> file = OpenSequentialFile(manifest_path);
  ManifestParser parser(is_csv, DirName(manifest_path), manifest_path);
  std::string piece(4 << 20, '\0');
  while (true) {
    size_t n = file->Read(piece.data(), piece.size());
    bool last = n < piece.size();
    parser.Feed(std::string_view(piece.data(), n), last);
    if (last) break;
  }
  return parser.Finish();
}

InputList ListInputs(const std::string& input) {
  if (IsDirectory(input)) return ListImageFolder(input);
  if (!PathExists(input)) throw Error(input + ": no such file or folder");
  return ReadManifest(input);
}

}  // namespace imgpipe
