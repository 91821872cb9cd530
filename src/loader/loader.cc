#include "loader/loader.h"

#include "io/storage.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

// The options that shape the batches, by name, as OptionText writes them.
std::vector<std::pair<std::string, std::string>> InStateOptions(const LoaderOptions& o) {
  std::vector<std::pair<std::string, std::string>> named;
  ForEachOption(o, [&](const OptionSpec& spec, const auto& field) {
    if (spec.in_state) named.emplace_back(spec.name, OptionText(field));
  });
  return named;
}

}  // namespace

std::string SerializeLoaderState(const LoaderState& state) {
  pipeline::IteratorState s;
  s.PutInt("loader.version", LoaderState::kVersion);
  s.PutInt("loader.epoch", state.epoch);
  s.PutInt("loader.batches", state.batches);
  s.PutInt("loader.data", state.data);
  if (state.pipeline) s.PutBytes("loader.pipeline", *state.pipeline);
  for (const auto& [name, text] : InStateOptions(state.options)) s.PutBytes("loader.option." + name, text);
  return s.Serialize();
}

LoaderState DeserializeLoaderState(const std::string& bytes) {
  const pipeline::IteratorState s = pipeline::IteratorState::Deserialize(bytes);
  if (!s.Has("loader.version") || s.GetInt("loader.version") != LoaderState::kVersion) {
    throw Error("not a Loader state of version " + std::to_string(LoaderState::kVersion));
  }
  LoaderState state;
  state.epoch = s.GetInt("loader.epoch");
  state.batches = s.GetInt("loader.batches");
  state.data = static_cast<uint32_t>(s.GetInt("loader.data"));
  if (s.Has("loader.pipeline")) state.pipeline = s.GetBytes("loader.pipeline");
  // The options as text: parsed back by matching each against the text of the values.
  ForEachOption(state.options, [&](const OptionSpec& spec, auto& field) {
    const std::string key = std::string("loader.option.") + spec.name;
    if (!spec.in_state || !s.Has(key)) return;
    if (OptionText(field) == s.GetBytes(key)) return;
    using T = std::decay_t<decltype(field)>;
    const std::string& text = s.GetBytes(key);
    if constexpr (std::is_same_v<T, std::string>) {
      field = text.size() >= 2 ? text.substr(1, text.size() - 2) : text;
    } else if constexpr (std::is_same_v<T, bool>) {
      field = text == "True";
    } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
      field = text == "None" ? std::nullopt : std::optional<std::string>(text.substr(1, text.size() - 2));
    } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
      field = text == "None" ? std::nullopt : std::optional<bool>(text == "True");
    } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
      field = text == "None" ? std::nullopt : std::optional<int64_t>(std::stoll(text));
    } else if constexpr (std::is_floating_point_v<T>) {
      field = std::stod(text);
    } else {
      field = static_cast<T>(std::stoll(text));
    }
  });
  return state;
}

Loader::Loader(const std::string& data, LoaderOptions options)
    : options_(std::move(options)), batches_(nullptr) {
  // 1. The options, the cache of URL shards, the data.
  CheckOptionsAndCache();
  Build(ResolveLoaderData(data, DataSourceOptionsOf(options_), options_.split, ParseErrorPolicy(options_.error_policy)));
}

Loader::Loader(pipeline::DataSource source, LoaderOptions options)
    : options_(std::move(options)), batches_(nullptr) {
  CheckOptionsAndCache();
  Build(LoaderDataOf(std::move(source), options_.split, ParseErrorPolicy(options_.error_policy)));
}

void Loader::CheckOptionsAndCache() {
  CheckOptions(options_);
  if (!options_.cache_dir.empty()) ConfigureStorageCache(options_.cache_dir, options_.cache_bytes);
}

void Loader::Build(LoaderData data) {
  // 1. This rank's share of the data.
  data_ = std::move(data);
  plan_ = PlanRank(data_, options_);
  // 2. Refuse what cannot fit before anything is allocated.
  memory_ = EstimateMemory(data_, options_);
  CheckMemory(memory_, options_);
  // 3. The pipeline, and what makes its passes.
  batches_ = BuildBatches(data_, options_, plan_);
  passes_ = std::make_shared<PassAhead>(batches_, PipelineOptionsOf(options_), plan_, options_);
}

Loader::~Loader() {
  // The pass started ahead goes; passes handed out live on with their holders.
  if (passes_) passes_->Close();
}

void Loader::SetEpoch(int64_t epoch) {
  if (epoch < 0) throw InvalidArgument("Loader.set_epoch: epoch must be >= 0, not " + std::to_string(epoch));
  if (epoch != epoch_) {  // a loaded state belongs to its own epoch: start this one afresh
    pending_state_.reset();
    pending_batches_ = 0;
  }
  epoch_ = epoch;
  epoch_chosen_ = true;
  passes_->EpochSet(epoch);  // a pass started ahead for another epoch stops now
}

std::optional<int64_t> Loader::ExpectedNextEpoch() const {
  if (!options_.start_ahead) return std::nullopt;
  const bool stepped = previous_epoch_ ? *previous_epoch_ != epoch_ : epoch_chosen_;
  const int64_t next = stepped ? epoch_ + 1 : epoch_;
  if (epoch_limit_ && next >= *epoch_limit_) return std::nullopt;
  return next;
}

std::shared_ptr<LoaderPass> Loader::Iterate() {
  if (closed_) throw Error("Loader: iterated after close()");
  const bool restoring = pending_state_ || pending_batches_ > 0;
  std::shared_ptr<LoaderPass> pass = passes_->Begin(epoch_, restoring, ExpectedNextEpoch());
  if (restoring) pass->Restore(pending_state_ ? &*pending_state_ : nullptr, pending_batches_);
  pending_state_.reset();
  pending_batches_ = 0;
  previous_epoch_ = epoch_;
  latest_ = pass;
  return pass;
}

LoaderState Loader::State() {
  LoaderState state;
  state.epoch = epoch_;
  if (latest_ && latest_->epoch() == epoch_) {  // else epoch_ has not started yet
    auto [pipeline_state, batches] = latest_->Save();
    state.batches = batches;
    state.pipeline = std::move(pipeline_state);
  } else if (pending_state_ || pending_batches_ > 0) {  // loaded, not continued yet
    state.batches = pending_batches_;
    if (pending_state_) state.pipeline = pending_state_->Serialize();
  }
  state.options = options_;
  state.data = DataFingerprint(data_);
  return state;
}

void Loader::LoadState(const LoaderState& state) {
  // 1. The state must be this loader's: the same batch-shaping options and data.
  const auto saved = InStateOptions(state.options), mine = InStateOptions(options_);
  for (size_t i = 0; i < mine.size(); ++i) {
    if (saved[i].second != mine[i].second) {
      throw InvalidArgument("Loader.load_state_dict: the state was made with " + mine[i].first + "=" +
                            saved[i].second + ", this loader has " + mine[i].second);
    }
  }
  if (state.data != DataFingerprint(data_)) {
    throw InvalidArgument("Loader.load_state_dict: the state was made from other data (files, sizes or sample "
                          "count differ)");
  }
  if (state.batches < 0 || state.batches > plan_.batches) {
    throw InvalidArgument("Loader.load_state_dict: bad batch count " + std::to_string(state.batches) +
                          " (an epoch has " + std::to_string(plan_.batches) + ")");
  }
  if (!state.pipeline && state.batches != 0 && state.batches != plan_.batches) {
    throw InvalidArgument("Loader.load_state_dict: the state has no pipeline position (it was taken after close())");
  }
  if (state.epoch < 0) throw InvalidArgument("Loader.load_state_dict: bad epoch " + std::to_string(state.epoch));
  // 2. The next Iterate continues it, in a fresh pass.
  epoch_ = state.epoch;
  epoch_chosen_ = true;
  passes_->EpochSet(std::nullopt);
  pending_batches_ = state.batches;
  pending_state_.reset();
  if (state.pipeline) pending_state_ = pipeline::IteratorState::Deserialize(*state.pipeline);
}

std::vector<pipeline::StageSnapshot> Loader::Stats() {
  return latest_ ? latest_->Stats() : std::vector<pipeline::StageSnapshot>{};
}

std::string Loader::Report() { return latest_ ? latest_->Report() : std::string(); }

std::optional<std::pair<size_t, size_t>> Loader::PoolCounters() {
  if (!latest_) return std::nullopt;
  return latest_->PoolCounters();
}

void Loader::Close() {
  closed_ = true;
  if (passes_) passes_->Close();
  if (latest_) latest_->Close();
}

}  // namespace imgpipe::loader
