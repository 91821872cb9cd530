// The images a conversion reads, with their labels: from a folder with one sub-folder
// per class (the ImageNet layout) or from a CSV / JSONL manifest. Held compactly (a
// name arena and 16 bytes per image, no string per image), so that a manifest of ten
// million rows fits in well under a gigabyte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace imgpipe {

// One input, by value.
struct InputImage {
  std::string path;  // as opened (manifest paths resolved against its folder)
  std::string name;  // stored as image/filename: path relative to the input root
  int label = 0;     // index into InputList::class_names
};

class InputList {
 public:
  // Names relative to `root` are opened as JoinPath(root, name); absolute ones as they are.
  explicit InputList(std::string root = "") : root_(std::move(root)) {}

  std::vector<std::string> class_names;  // label i is class_names[i]

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::string_view name(size_t i) const;
  std::string path(size_t i) const;
  int label(size_t i) const { return entries_[i].label; }
  InputImage image(size_t i) const { return {path(i), std::string(name(i)), label(i)}; }
  const std::string& root() const { return root_; }

  // Appends an image; `name` is copied into the arena.
  void Add(std::string_view name, int label);
  void set_label(size_t i, int label) { entries_[i].label = label; }
  // Sorts by name (bytewise, stable).
  void SortByName();

 private:
  struct Entry {
    uint32_t block;
    uint32_t offset;
    uint32_t size;
    int32_t label;
  };
  static constexpr size_t kBlockBytes = 1 << 20;

  std::string root_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // names, back to back
  size_t block_used_ = kBlockBytes;              // bytes used in blocks_.back()
  std::vector<Entry> entries_;
};

// Lists DIR/<class>/**/<file> for every class folder (sorted bytewise; label = its
// position). Hidden files and folders (leading '.') are left out; every other regular
// file is an input, image or not (non-images end up in rejects, never lost).
// Throws Error when DIR has no class folders.
InputList ListImageFolder(const std::string& dir);

// Reads a manifest: CSV ("path,label" rows, an optional header row naming the columns
// `path` and `label` in any order, RFC 4180 quoting) when the file name ends in .csv,
// JSON Lines ({"path": ..., "label": ...} per line) when it ends in .jsonl or .json.
// Relative paths are resolved against the manifest's folder. Labels are class names;
// when every label is a non-negative integer, label = that integer and the class
// names are "0".."max" (max at most 1048575). A malformed line, or a larger integer
// label, throws DataError naming the manifest and the line's byte offset. The file is
// read in pieces: its text is never held whole.
InputList ReadManifest(const std::string& manifest_path);

// Parses manifest text (ReadManifest on text in memory). `is_csv` selects the syntax;
// `base_dir` resolves relative paths; `path` labels errors. The text is fed to the
// parser in pieces of `piece_bytes` (as ReadManifest feeds a file's), which must not
// change the result: tests and the fuzzer give small ones.
InputList ParseManifest(std::string_view text, bool is_csv, const std::string& base_dir,
                        const std::string& path, size_t piece_bytes = SIZE_MAX);

// Whether `path` names a manifest ReadManifest reads: it ends in .csv, .jsonl or .json.
bool IsManifestPath(std::string_view path);

// ListImageFolder for a folder, ReadManifest for a file.
InputList ListInputs(const std::string& input);

}  // namespace imgpipe
