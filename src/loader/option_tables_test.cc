// The docs' option tables are the declarations': each page's generated block must be
// what option_tables.h makes now. IMGPIPE_UPDATE_DOCS=1 rewrites the pages instead.
#include "loader/option_tables.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "loader/loader_options.h"
#include "util/file.h"

namespace imgpipe::loader {
namespace {

// Checks (or, with IMGPIPE_UPDATE_DOCS=1, rewrites) the block `name` of docs/`page`.
void ExpectGeneratedBlock(const std::string& page, const std::string& name, const std::string& table) {
  const std::string path = JoinPath(JoinPath(IMGPIPE_SOURCE_DIR, "docs"), page);
  const std::string text = ReadFile(path);
  const std::string expected = WithGeneratedBlock(text, name, table);
  if (const char* update = std::getenv("IMGPIPE_UPDATE_DOCS"); update && std::string(update) == "1") {
    WriteFileAtomic(path, expected);
    return;
  }
  EXPECT_EQ(text, expected) << path << "'s " << name
                            << " table differs from the declarations (loader/loader_options.h); regenerate it "
                               "with IMGPIPE_UPDATE_DOCS=1 ctest -R option_tables";
}

TEST(OptionTables, PythonPageListsEveryOption) {
  ExpectGeneratedBlock("python.md", "loader-options", OptionsTable());
}

TEST(OptionTables, CommandsPageListsEveryFlag) {
  ExpectGeneratedBlock("commands.md", "loader-flags", OptionFlagsTable());
}

TEST(OptionTables, TablesFollowTheDeclarations) {
  // A row per option, its default as Python writes it, its flag where a command takes it.
  const LoaderOptions defaults;
  const std::string table = OptionsTable();
  ForEachOption(defaults, [&](const OptionSpec& spec, const auto& field) {
    EXPECT_NE(table.find("| `" + std::string(spec.name) + "` | "), std::string::npos) << spec.name;
    EXPECT_NE(table.find("`" + OptionText(field) + "`"), std::string::npos) << spec.name;
  });
  EXPECT_NE(table.find("| `shuffle_buffer` | int | `" + std::to_string(defaults.shuffle_buffer) +
                       "` | >= 0 | `--shuffle-buffer` (train) |"),
            std::string::npos);
  EXPECT_EQ(OptionFlagsTable().find("--ram-budget-bytes"), std::string::npos);  // no command takes it
}

TEST(OptionTables, BlockWithoutMarkersIsAnError) {
  EXPECT_THROW(WithGeneratedBlock("no markers", "loader-options", "x"), Error);
  EXPECT_EQ(WithGeneratedBlock("a\n<!-- BEGIN t -->\nold\n<!-- END t -->\nb", "t", "new\n"),
            "a\n<!-- BEGIN t -->\nnew\n<!-- END t -->\nb");
}

}  // namespace
}  // namespace imgpipe::loader
