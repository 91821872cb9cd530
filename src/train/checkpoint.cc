#include "train/checkpoint.h"

#include <torch/serialize.h>

#include <cstring>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe::train {
namespace {

constexpr char kFormat[] = "imgpipe.checkpoint.v1";

using Dict = c10::impl::GenericDict;

Dict NewDict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

// Binary blobs travel as uint8 tensors: a pickled str must be UTF-8 for Python.
torch::Tensor BytesTensor(const std::string& bytes) {
  torch::Tensor t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}
std::string TensorBytes(const torch::Tensor& t) {
  torch::Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.numel());
}

c10::IValue MetaValue(const CheckpointMeta& m) {
  Dict d = NewDict();
  d.insert("model", m.model);
  d.insert("num_classes", m.num_classes);
  d.insert("image_size", static_cast<int64_t>(m.image_size));
  c10::List<std::string> names;
  for (const std::string& n : m.class_names) names.push_back(n);
  d.insert("class_names", names);
  d.insert("epoch", m.epoch);
  d.insert("step", m.step);
  d.insert("step_in_epoch", m.step_in_epoch);
  d.insert("config", m.config_json);
  return d;
}

// The entry `key` of `d`; DataError naming `path` when it is missing.
c10::IValue Entry(const Dict& d, const std::string& key, const std::string& path) {
  auto it = d.find(c10::IValue(key));
  if (it == d.end()) throw DataError(path, std::nullopt, "checkpoint has no '" + key + "' entry");
  return it->value();
}

CheckpointMeta ParseMeta(const Dict& d, const std::string& path) {
  CheckpointMeta m;
  m.model = Entry(d, "model", path).toStringRef();
  m.num_classes = Entry(d, "num_classes", path).toInt();
  m.image_size = static_cast<int>(Entry(d, "image_size", path).toInt());
  for (const c10::IValue& n : Entry(d, "class_names", path).toListRef()) {
    m.class_names.push_back(n.toStringRef());
  }
  m.epoch = Entry(d, "epoch", path).toInt();
  m.step = Entry(d, "step", path).toInt();
  m.step_in_epoch = Entry(d, "step_in_epoch", path).toInt();
  m.config_json = Entry(d, "config", path).toStringRef();
  return m;
}

}  // namespace

void SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint) {
  c10::Dict<std::string, torch::Tensor> model;
  for (const auto& [name, tensor] : checkpoint.model) model.insert(name, tensor.cpu());
  Dict root = NewDict();
  root.insert("format", std::string(kFormat));
  root.insert("model", model);
  root.insert("meta", MetaValue(checkpoint.meta));
  root.insert("optimizer", BytesTensor(checkpoint.optimizer));
  root.insert("loss_scale", checkpoint.loss_scale);
  c10::List<torch::Tensor> states;
  for (const std::string& state : checkpoint.pipeline_states) states.push_back(BytesTensor(state));
  root.insert("pipeline_states", states);
  if (!checkpoint.model_ema.empty()) {
    c10::Dict<std::string, torch::Tensor> ema;
    for (const auto& [name, tensor] : checkpoint.model_ema) ema.insert(name, tensor.cpu());
    root.insert("model_ema", ema);
    root.insert("model_ema_updates", checkpoint.model_ema_updates);
  }
  std::vector<char> bytes = torch::pickle_save(c10::IValue(root));
  WriteFileAtomic(path, std::string_view(bytes.data(), bytes.size()));
}

Checkpoint LoadCheckpoint(const std::string& path) {
  std::string bytes = ReadFile(path);
  c10::IValue value;
  try {
    value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const std::exception& e) {
    throw DataError(path, std::nullopt, std::string("not a checkpoint (unreadable pickle): ") + e.what());
  }
  if (!value.isGenericDict()) throw DataError(path, std::nullopt, "not a checkpoint (no dict at the top)");
  Dict root = value.toGenericDict();
  c10::IValue format = Entry(root, "format", path);
  if (!format.isString() || format.toStringRef() != kFormat) {
    throw DataError(path, std::nullopt, std::string("not an ") + kFormat + " checkpoint");
  }
  Checkpoint c;
  try {
    c.meta = ParseMeta(Entry(root, "meta", path).toGenericDict(), path);
    for (const auto& item : Entry(root, "model", path).toGenericDict()) {
      c.model.emplace_back(item.key().toStringRef(), item.value().toTensor());
    }
    c.optimizer = TensorBytes(Entry(root, "optimizer", path).toTensor());
    c.loss_scale = Entry(root, "loss_scale", path).toDouble();
    for (const c10::IValue& state : Entry(root, "pipeline_states", path).toListRef()) {
      c.pipeline_states.push_back(TensorBytes(state.toTensor()));
    }
    if (root.contains("model_ema")) {
      for (const auto& item : root.at("model_ema").toGenericDict()) {
        c.model_ema.emplace_back(item.key().toStringRef(), item.value().toTensor());
      }
      c.model_ema_updates = Entry(root, "model_ema_updates", path).toInt();
    }
  } catch (const c10::Error& e) {
    throw DataError(path, std::nullopt, std::string("malformed checkpoint: ") + e.what_without_backtrace());
  }
  return c;
}

std::vector<std::pair<std::string, torch::Tensor>> ModelState(torch::nn::Module& model) {
  std::vector<std::pair<std::string, torch::Tensor>> state;
  torch::NoGradGuard no_grad;
  for (const auto& p : model.named_parameters()) state.emplace_back(p.key(), p.value().detach().cpu().clone());
  for (const auto& b : model.named_buffers()) state.emplace_back(b.key(), b.value().detach().cpu().clone());
  return state;
}

void LoadModelState(torch::nn::Module& model,
                    const std::vector<std::pair<std::string, torch::Tensor>>& state,
                    const std::string& path) {
  std::map<std::string, torch::Tensor> by_name(state.begin(), state.end());
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& name, torch::Tensor& target) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw DataError(path, std::nullopt, "checkpoint has no tensor '" + name + "'");
    if (it->second.sizes() != target.sizes()) {
      throw DataError(path, std::nullopt, "tensor '" + name + "' has shape " + c10::str(it->second.sizes()) +
                                   ", the model needs " + c10::str(target.sizes()));
    }
    target.copy_(it->second);
  };
  for (auto& p : model.named_parameters()) load(p.key(), p.value());
  for (auto& b : model.named_buffers()) load(b.key(), b.value());
}

ImageClassifier LoadClassifierFromCheckpoint(const std::string& path, CheckpointMeta* meta) {
  Checkpoint c = LoadCheckpoint(path);
  ImageClassifier model;
  try {
    model = MakeImageClassifier(c.meta.model, c.meta.num_classes);
  } catch (const std::invalid_argument& e) {
    throw DataError(path, std::nullopt, e.what());
  }
  LoadModelState(*model, c.model, path);
  model->eval();
  if (meta) *meta = std::move(c.meta);
  return model;
}

}  // namespace imgpipe::train
