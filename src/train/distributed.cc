#include "train/distributed.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace imgpipe::train {
namespace {

// The integer in variable `name`, or nullopt when unset; throws when malformed.
std::optional<int> IntVariable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (*end != '\0' || v < 0 || v > 1 << 24) {
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + value +
                                "' is not a non-negative integer");
  }
  return static_cast<int>(v);
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

DistributedEnv DistributedEnv::FromEnvironment() {
  DistributedEnv env;
  struct Names {
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;
  };
  for (Names n : {Names{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
                  Names{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
                  Names{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                        "OMPI_COMM_WORLD_LOCAL_SIZE"}}) {
    std::optional<int> rank = IntVariable(n.rank), size = IntVariable(n.size);
    if (!rank && !size) continue;
    if (!rank || !size) {
      throw std::invalid_argument(std::string("set both ") + n.rank + " and " + n.size + " or neither");
    }
    if (*size < 1 || *rank >= *size) {
      throw std::invalid_argument(std::string(n.rank) + "=" + std::to_string(*rank) + " is not below " +
                                  n.size + "=" + std::to_string(*size));
    }
    env.rank = *rank;
    env.world_size = *size;
    env.local_rank = IntVariable(n.local_rank).value_or(0);
    // Slurm writes e.g. "2(x3)": the leading count is this node's.
    if (const char* local = std::getenv(n.local_size)) env.local_world_size = std::max(1, std::atoi(local));
    break;
  }
  if (const char* addr = std::getenv("MASTER_ADDR"); addr && *addr) env.master_addr = addr;
  if (std::optional<int> port = IntVariable("MASTER_PORT")) {
    if (*port < 1 || *port > 65535) throw std::invalid_argument("MASTER_PORT is not a TCP port");
    env.master_port = *port;
  }
  return env;
}

struct ProcessGroup::State {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  std::string backend;
};

ProcessGroup::ProcessGroup(const DistributedEnv& env, torch::Device device,
                           std::chrono::milliseconds timeout)
    : state_(std::make_unique<State>()), rank_(env.rank), world_size_(env.world_size) {
  // 1. Rendezvous: rank 0 serves the store, every rank (rank 0 too) connects to it.
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0;
  store_options.numWorkers = env.world_size;
  store_options.timeout = timeout;
  auto tcp = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  state_->store = c10::make_intrusive<c10d::PrefixStore>("imgpipe", tcp);

  // 2. The collective backend for the device.
  if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    state_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(state_->store, env.rank,
                                                                 env.world_size, options);
    state_->backend = "nccl";
#else
    throw std::runtime_error("this libtorch has no NCCL process group: use --device cpu (Gloo)");
#endif
  } else {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // GLOO_SOCKET_IFNAME picks the interface, as in PyTorch; a loopback master means one
    // machine; else the host name's address.
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (IsLoopback(env.master_addr)) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    options->threads = 2;
    state_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(state_->store, env.rank,
                                                                 env.world_size, options);
    state_->backend = "gloo";
  }
}

ProcessGroup::~ProcessGroup() = default;

const char* ProcessGroup::backend() const { return state_->backend.c_str(); }

void ProcessGroup::AllReduceSum(std::vector<torch::Tensor>& tensors) {
  state_->group->allreduce(tensors)->wait();
}

void ProcessGroup::Broadcast(std::vector<torch::Tensor>& tensors, int root) {
  c10d::BroadcastOptions options;
  options.rootRank = root;
  state_->group->broadcast(tensors, options)->wait();
}

void ProcessGroup::Barrier() { state_->group->barrier()->wait(); }

std::vector<std::string> ProcessGroup::GatherBytes(const std::string& key, const std::string& bytes) {
  std::string prefix = "gather/" + key + "/";
  state_->store->set(prefix + std::to_string(rank_), std::vector<uint8_t>(bytes.begin(), bytes.end()));
  std::vector<std::string> all;
  if (rank_ == 0) {
    for (int r = 0; r < world_size_; ++r) {
      std::vector<uint8_t> v = state_->store->get(prefix + std::to_string(r));
      all.emplace_back(v.begin(), v.end());
    }
  }
  Barrier();  // every rank's value was read before anyone reuses the key
  return all;
}

void BroadcastModel(ProcessGroup& group, torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> tensors;
  for (auto& p : model.parameters()) tensors.push_back(p);
  for (auto& b : model.buffers()) tensors.push_back(b);
  // One tensor per call: Gloo's broadcast wants tensors of one shape per call.
  for (torch::Tensor& t : tensors) {
    std::vector<torch::Tensor> one{t.is_contiguous() ? t : t.contiguous()};
    group.Broadcast(one);
    if (!t.is_same(one[0])) t.copy_(one[0]);
  }
}

void AllReduceGradients(ProcessGroup& group, const std::vector<torch::Tensor>& parameters,
                        size_t bucket_bytes) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> bucket;
  size_t bytes = 0;
  auto flush = [&] {
    if (bucket.empty()) return;
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor& g : bucket) flat.push_back(g.reshape({-1}));
    std::vector<torch::Tensor> joined{torch::cat(flat)};
    group.AllReduceSum(joined);
    joined[0].div_(group.world_size());
    int64_t offset = 0;
    for (const torch::Tensor& g : bucket) {
      g.copy_(joined[0].narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
    bucket.clear();
    bytes = 0;
  };
  for (const torch::Tensor& p : parameters) {
    // A parameter without a gradient contributes zeros, so every rank's buckets match.
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    torch::Tensor g = p.grad();
    // Buckets hold one dtype, as the all-reduce needs.
    if (!bucket.empty() && bucket.front().scalar_type() != g.scalar_type()) flush();
    bucket.push_back(g);
    bytes += g.numel() * g.element_size();
    if (bytes >= bucket_bytes) flush();
  }
  flush();
}

}  // namespace imgpipe::train
