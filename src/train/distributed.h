// Data parallelism over processes with PyTorch's c10d: a TCPStore for the rendezvous,
// ProcessGroupGloo on CPUs and ProcessGroupNCCL on GPUs (when libtorch has it).
#pragma once

#include <torch/nn/module.h>  // not torch/torch.h, which would double the compile time

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "train/distributed_env.h"

namespace imgpipe::train {

// One process's membership in the group. Collective calls must be made by every rank
// in the same order. A peer that dies makes the next collective throw (Gloo notices
// the closed connection at once; `timeout` bounds every other wait).
class ProcessGroup {
 public:
  ProcessGroup(const DistributedEnv& env, torch::Device device, std::chrono::milliseconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  const char* backend() const;

  // Sums each tensor over the ranks, in place.
  void AllReduceSum(std::vector<torch::Tensor>& tensors);
  // Copies rank `root`'s tensors into everyone's, in place.
  void Broadcast(std::vector<torch::Tensor>& tensors, int root = 0);
  void Barrier();
  // Every rank's `bytes` for `key`, in rank order, on rank 0 (empty elsewhere); through
  // the store, for small values such as iterator states.
  std::vector<std::string> GatherBytes(const std::string& key, const std::string& bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
  int rank_;
  int world_size_;
};

// Makes every rank's parameters and buffers equal to rank 0's.
void BroadcastModel(ProcessGroup& group, torch::nn::Module& model);

// Averages the gradients of `parameters` over the ranks: flattened into buckets of about
// `bucket_bytes`, one all-reduce per bucket, then divided by the world size.
void AllReduceGradients(ProcessGroup& group, const std::vector<torch::Tensor>& parameters,
                        size_t bucket_bytes = 25 << 20);

}  // namespace imgpipe::train
