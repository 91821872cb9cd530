#include "pipeline/pad_dataset.h"

#include <gtest/gtest.h>

#include "pipeline/pipeline_test_util.h"
#include "pipeline/shuffle_dataset.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

TEST(PadDataset, RepeatsTheFirstElementsUpToTheCount) {
  EXPECT_EQ(Collect(Pad<std::string>(MakeVectorDataset(NumberedStrings(5)), 8, 4)),
            (std::vector<std::string>{"e0", "e1", "e2", "e3", "e4", "e0", "e1", "e2"}));
  // Cyclically over the first min(n, keep) when the padding is longer than they are.
  EXPECT_EQ(Collect(Pad<std::string>(MakeVectorDataset(NumberedStrings(2)), 7, 4)),
            (std::vector<std::string>{"e0", "e1", "e0", "e1", "e0", "e1", "e0"}));
  EXPECT_EQ(Collect(Pad<std::string>(MakeVectorDataset(NumberedStrings(5)), 9, 2)),
            (std::vector<std::string>{"e0", "e1", "e2", "e3", "e4", "e0", "e1", "e0", "e1"}));
}

TEST(PadDataset, LongEnoughOrEmptyInputPassesUnchanged) {
  EXPECT_EQ(Collect(Pad<std::string>(MakeVectorDataset(NumberedStrings(5)), 3, 4)), NumberedStrings(5));
  EXPECT_EQ(Collect(Pad<std::string>(MakeVectorDataset(NumberedStrings(4)), 4, 4)), NumberedStrings(4));
  EXPECT_TRUE(Collect(Pad<std::string>(MakeVectorDataset(NumberedStrings(0)), 4, 4)).empty());
}

TEST(PadDataset, PadsEachEpochWithThatEpochsOrder) {
  auto padded = Pad<std::string>(Shuffle<std::string>(MakeVectorDataset(NumberedStrings(10)), 10, 7), 13, 3);
  for (uint64_t epoch : {0, 1}) {
    IteratorContext ctx = MakeTestContext();
    ctx.epoch = epoch;
    std::vector<std::string> out = Drain(padded->MakeIterator(ctx));
    ASSERT_EQ(out.size(), 13u);
    EXPECT_EQ(std::vector<std::string>(out.begin() + 10, out.end()),
              std::vector<std::string>(out.begin(), out.begin() + 3));
  }
}

TEST(PadDataset, BadArguments) {
  auto input = MakeVectorDataset(NumberedStrings(3));
  EXPECT_THROW(Pad<std::string>(input, -1, 4), Error);
  EXPECT_THROW(Pad<std::string>(input, 4, 0), Error);
  EXPECT_THROW(Pad<std::string>(nullptr, 4, 4), Error);
}

TEST(PadDataset, SaveRestoreAtEveryCut) {
  CheckSaveRestoreAtEveryCut([] { return Pad<std::string>(MakeVectorDataset(NumberedStrings(5)), 11, 3); }, 20);
  CheckSaveRestoreAtEveryCut(
      [] { return Pad<std::string>(Shuffle<std::string>(MakeVectorDataset(NumberedStrings(6)), 4, 1), 9, 4); }, 20);
}

TEST(PadDataset, StateNamesTheKeptElements) {
  auto it = Pad<std::string>(MakeVectorDataset(NumberedStrings(3)), 5, 2)->MakeIterator(MakeTestContext());
  Drain(*it, 4);
  IteratorState state;
  it->Save(state);
  EXPECT_EQ(state.GetInt("0.test:given"), 4);
  EXPECT_EQ(state.GetInt("0.test:real"), 3);
}

}  // namespace
}  // namespace imgpipe::pipeline
