#include "convert/convert_plan.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "util/error.h"
#include "util/random.h"

namespace imgpipe {

std::vector<SplitSpec> ParseSplits(const std::string& text) {
  std::vector<SplitSpec> splits;
  double total = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    pos = comma + 1;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InvalidArgument("--split: expected NAME=FRACTION, got '" + item + "'");
    }
    SplitSpec spec{item.substr(0, eq), 0};
    char* end = nullptr;
    spec.fraction = std::strtod(item.c_str() + eq + 1, &end);
    if (end == item.c_str() + eq + 1 || *end != '\0' || !(spec.fraction > 0)) {
      throw InvalidArgument("--split: bad fraction in '" + item + "'");
    }
    for (const SplitSpec& s : splits) {
      if (s.name == spec.name) throw InvalidArgument("--split: split '" + spec.name + "' given twice");
    }
    if (spec.name.find_first_of("/ ") != std::string::npos) {
      throw InvalidArgument("--split: split names may not contain '/' or spaces: '" + spec.name + "'");
    }
    total += spec.fraction;
    splits.push_back(spec);
  }
  if (std::abs(total - 1.0) > 1e-6) {
    throw InvalidArgument("--split: fractions add up to " + std::to_string(total) + ", not 1");
  }
  return splits;
}

uint64_t ParseByteSize(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value > 0)) throw InvalidArgument("bad byte size '" + text + "'");
  std::string unit(end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  bool binary = !unit.empty() && unit.back() == 'i';
  if (binary) unit.pop_back();
  double base = binary ? 1024.0 : 1000.0;
  double scale;
  if (unit.empty()) {
    scale = 1;
  } else if (unit == "k" || unit == "K") {
    scale = base;
  } else if (unit == "M" || unit == "m") {
    scale = base * base;
  } else if (unit == "G" || unit == "g") {
    scale = base * base * base;
  } else if (unit == "T" || unit == "t") {
    scale = base * base * base * base;
  } else {
    throw InvalidArgument("bad byte size '" + text + "' (units: k, M, G, T, Ki, Mi, Gi, Ti)");
  }
  if (binary && unit.empty()) throw InvalidArgument("bad byte size '" + text + "'");
  return static_cast<uint64_t>(std::llround(value * scale));
}

std::string ShardFileName(const std::string& split, int index, int count) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "-%05d-of-%05d.tfrecord", index, count);
  return split + buffer;
}

ConvertPlan MakeConvertPlan(const InputList& inputs, const std::vector<uint64_t>& sizes,
                            const PlanOptions& options) {
  if (sizes.size() != inputs.size()) throw Error("internal: sizes do not match inputs");
  return MakeConvertPlan(sizes, options);
}

ConvertPlan MakeConvertPlan(std::span<const uint64_t> sizes, const PlanOptions& options) {
  const size_t n = sizes.size();
  if (options.min_shards < 1) throw Error("--min-shards must be at least 1");
  if (options.shard_bytes == 0) throw Error("--shard-size must be positive");

  if (n > std::numeric_limits<uint32_t>::max()) {
    throw Error(std::to_string(n) + " inputs: at most 4,294,967,295 fit one conversion");
  }
  // 1. Shuffle (Fisher-Yates).
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  SplitMix64 random(options.seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[random.Below(i)]);

  // 2. Cut into splits.
  ConvertPlan plan;
  size_t begin = 0;
  double cumulative = 0;
  for (size_t s = 0; s < options.splits.size(); ++s) {
    const SplitSpec& split = options.splits[s];
    cumulative += split.fraction;
    size_t end = s + 1 == options.splits.size()
                     ? n
                     : std::min(n, static_cast<size_t>(std::llround(cumulative * n)));
    end = std::max(end, begin);

    // 3. Shards of this split.
    uint64_t bytes = 0;
    for (size_t i = begin; i < end; ++i) bytes += sizes[order[i]];
    int count = std::max<int>(options.min_shards,
                              static_cast<int>((bytes + options.shard_bytes - 1) / options.shard_bytes));
    size_t items = end - begin;
    for (int k = 0; k < count; ++k) {
      PlannedShard shard;
      shard.split = split.name;
      shard.index = k;
      shard.count = count;
      shard.file_name = ShardFileName(split.name, k, count);
      size_t first = begin + items * k / count;
      size_t last = begin + items * (k + 1) / count;
      shard.inputs.reserve(last - first);
      for (size_t i = first; i < last; ++i) {
        shard.inputs.push_back(order[i]);
        shard.input_bytes += sizes[order[i]];
      }
      plan.shards.push_back(std::move(shard));
    }
    begin = end;
  }
  return plan;
}

}  // namespace imgpipe
