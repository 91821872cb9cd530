// Fuzzes the AWS credentials/config file parser (ParseAwsProfileFile). What it accepts must
// be a usable profile map: every section name and key non-empty and trimmed, a key without
// '=' that does not start as a section or a comment would, a value trimmed and without a
// newline (empty only in a nested "s3 =" block); written back out (Format) it must parse
// to the same map; and the text with CRLF line ends (as Windows editors save it) must
// parse to the same map, or fail on the same line for the same reason. A refused file's
// DataError names the path and an offset inside the text.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "io/aws_config.h"

namespace imgpipe {
namespace {

const char kPath[] = "/home/fuzz/.aws/config";

// Whether `s` is non-empty, without a newline and without the white space the parser
// trims at either end.
bool IsTrimmedName(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  return !s.empty() && s.find('\n') == std::string_view::npos && !blank(s.front()) && !blank(s.back());
}

// Whether `s` can start a "key = value" line: a trimmed name without '=' that is not read
// as a section or a comment.
bool IsKey(std::string_view s) {
  return IsTrimmedName(s) && s.find('=') == std::string_view::npos && s[0] != '[' && s[0] != '#' &&
         s[0] != ';';
}

// Where a nested key ("s3.addressing_style", stored from "s3 =" and an indented
// "addressing_style =") splits into its block and its key: the first '.' with a key on
// each side. npos when there is none.
size_t NestedSplit(const std::string& key) {
  for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1)) {
    if (IsKey(key.substr(0, dot)) && IsKey(key.substr(dot + 1))) return dot;
  }
  return std::string::npos;
}

// `file` written back as a profile file: "[NAME]", then "key = value" per key; a key with
// an empty value, which only a nested block stores, as that block ("s3 =" and "  key =").
std::string Format(const AwsProfileFile& file) {
  std::string text;
  for (const auto& [name, keys] : file) {
    text += "[" + name + "]\n";
    for (const auto& [key, value] : keys) {
      if (!value.empty()) {
        text += key + " = " + value + "\n";
        continue;
      }
      const size_t dot = NestedSplit(key);
      FUZZ_CHECK(dot != std::string::npos);
      text += key.substr(0, dot) + " =\n  " + key.substr(dot + 1) + " =\n";
    }
  }
  return text;
}

// The outcome of parsing `text`: the file, or the DataError's reason ("line N: ...").
struct Outcome {
  AwsProfileFile file;
  std::string error;
};
Outcome Parse(const std::string& text) {
  Outcome outcome;
  try {
    outcome.file = ParseAwsProfileFile(text, kPath);
  } catch (const DataError& e) {
    FUZZ_CHECK(e.path() == kPath && e.offset().has_value() && *e.offset() <= text.size());
    outcome.error = e.reason();
    FUZZ_CHECK(!outcome.error.empty());
  }
  return outcome;
}

// Checks an accepted file's names, keys and values, and that it formats and parses back.
void CheckProfileFile(const AwsProfileFile& file) {
  for (const auto& [name, keys] : file) {
    FUZZ_CHECK(IsTrimmedName(name));
    for (const auto& [key, value] : keys) {
      FUZZ_CHECK(IsKey(key));
      FUZZ_CHECK(value.empty() || IsTrimmedName(value));
    }
  }
  const Outcome again = Parse(Format(file));
  FUZZ_CHECK(again.error.empty() && again.file == file);
}

}  // namespace
}  // namespace imgpipe

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  const std::string text(fuzz::AsView(data, size));
  fuzz::IgnoringErrors([&] {
    const Outcome outcome = Parse(text);
    if (outcome.error.empty()) CheckProfileFile(outcome.file);
    std::string crlf;
    for (char c : text) {
      if (c == '\n') crlf += '\r';
      crlf += c;
    }
    const Outcome crlf_outcome = Parse(crlf);
    FUZZ_CHECK(crlf_outcome.error == outcome.error && crlf_outcome.file == outcome.file);
  });
  return 0;
}
