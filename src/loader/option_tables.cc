#include "loader/option_tables.h"

#include "loader/loader_options.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

// The values an option takes, in words: "train, eval", "[8, 4096]", ">= 0", "".
std::string ValuesText(const OptionCheck& c) {
  if (!c.choices.empty()) {
    std::string text;
    for (const std::string& choice : c.choices) text += (text.empty() ? "" : ", ") + choice;
    return text;
  }
  if (c.min == -std::numeric_limits<double>::infinity()) return "";
  if (c.max == std::numeric_limits<double>::infinity()) return ">= " + OptionText(c.min);
  return "[" + OptionText(c.min) + ", " + OptionText(c.max) + "]";
}

// "train, bench" of an OptionCommands mask.
std::string CommandsText(unsigned commands) {
  std::string text;
  for (const auto& [bit, name] : {std::pair{kTrain, "train"}, {kBench, "bench"}, {kExtract, "extract"}}) {
    if (commands & bit) text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text;
}

std::string Code(const std::string& text) { return text.empty() ? "" : "`" + text + "`"; }

}  // namespace

std::string OptionsTable() {
  std::string table =
      "| keyword | type | default | values | flag (commands) | what |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  const LoaderOptions defaults;
  ForEachOption(defaults, [&](const OptionSpec& spec, const auto& field) {
    using T = std::decay_t<decltype(field)>;
    const std::string flag =
        spec.commands ? Code(FlagName(spec.name)) + " (" + CommandsText(spec.commands) + ")" : "";
    table += "| `" + std::string(spec.name) + "` | " + OptionTypeName<T>() + " | " + Code(OptionText(field)) +
             " | " + ValuesText(spec.check) + " | " + flag + " | " + spec.doc + " |\n";
  });
  return table;
}

std::string OptionFlagsTable() {
  std::string table =
      "| flag | commands | values | default | what |\n"
      "| --- | --- | --- | --- | --- |\n";
  const LoaderOptions defaults;
  ForEachOption(defaults, [&](const OptionSpec& spec, const auto& field) {
    if (!spec.commands) return;
    table += "| `" + FlagName(spec.name) + "` | " + CommandsText(spec.commands) + " | " + ValuesText(spec.check) +
             " | " + Code(OptionText(field)) + " | " + spec.doc + " |\n";
  });
  return table;
}

std::string WithGeneratedBlock(const std::string& page, const std::string& name, const std::string& table) {
  const std::string begin = "<!-- BEGIN " + name + " -->\n", end = "<!-- END " + name + " -->";
  const size_t b = page.find(begin), e = page.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    throw Error("the page has no '" + begin.substr(0, begin.size() - 1) + "' ... '" + end + "' block");
  }
  return page.substr(0, b + begin.size()) + table + page.substr(e);
}

}  // namespace imgpipe::loader
