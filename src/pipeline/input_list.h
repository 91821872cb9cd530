// The images a conversion reads, with their labels: from a folder with one sub-folder
// per class (the ImageNet layout) or from a CSV / JSONL manifest.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace imgpipe {

struct InputImage {
  std::string path;      // as opened (manifest paths resolved against its folder)
  std::string name;      // stored as image/filename: path relative to the input root
  int label = 0;         // index into InputList::class_names
};

struct InputList {
  std::vector<std::string> class_names;  // label i is class_names[i]
  std::vector<InputImage> images;        // sorted by name
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
// label, throws DataError naming the manifest and the line's byte offset.
InputList ReadManifest(const std::string& manifest_path);

// Parses manifest text (the part of ReadManifest after reading the file). `is_csv`
// selects the syntax; `base_dir` resolves relative paths; `path` labels errors.
InputList ParseManifest(std::string_view text, bool is_csv, const std::string& base_dir,
                        const std::string& path);

// ListImageFolder for a folder, ReadManifest for a file.
InputList ListInputs(const std::string& input);

}  // namespace imgpipe
