// One layer of a TorchScript module as a function of the module's input, found by
// graph surgery on a copy of the module's forward graph (the module is not changed).
#pragma once

#include <torch/script.h>

#include <memory>
#include <string>

namespace torch::jit {
struct Graph;
struct GraphFunction;
}

namespace imgpipe::extract {

// `layer`:
//   "logits"       the module's forward.
//   "penultimate"  forward_features when the module has that method (timm); else the
//                  input of its trailing torch.nn.Linear (TrailingLinearSubmodule;
//                  torchvision: fc, classifier.N, heads.head); else, for a model
//                  without a classifier head (e.g. fc replaced by torch.nn.Identity),
//                  the module's forward, logged once as such.
//   NAME           the output of submodule NAME (dotted path, e.g. "layer4" or
//                  "layer4.1"), as torch.nn.Module.named_modules() names it.
// For the last two, the forward graph is inlined, call by call, down to the call of
// the submodule (methods of the module itself and of NAME's ancestors are inlined,
// every other call is kept), and the value going into (or out of) that call becomes
// the graph's output; what is not needed for it is dropped. The call must be at the
// top level of the graph (not inside a loop or branch); when it is made more than
// once, the last call counts. The cut graph is then inlined completely, so that
// dead-code elimination drops every call after the cut.
class ScriptLayer {
 public:
  // Throws Error naming `layer` when it cannot be found, listing the top-level
  // submodules.
  ScriptLayer(torch::jit::Module module, const std::string& layer);

  // The layer's value for `input` (any rank, as the module computes it).
  torch::Tensor Run(const torch::Tensor& input);
  // What the layer is, e.g. "input of fc (Linear)", "forward_features", "output of layer4".
  const std::string& description() const { return description_; }
  // The cut graph (fully inlined: only what the layer needs), or null when the layer is
  // a method of the module (logits, forward_features).
  std::shared_ptr<torch::jit::Graph> graph() const;

 private:
  torch::jit::Module module_;
  std::string method_;  // a method of module_ to call, or empty: call function_
  std::shared_ptr<torch::jit::GraphFunction> function_;
  std::string description_;
};

// The dotted name of the classifier head of `module`: its last torch.nn.Linear submodule
// (registration order) when every leaf submodule registered after it has no parameters
// and is not a torch.nn.Identity (ReLU and Dropout may follow; a LayerNorm or a head
// replaced by Identity may not). Empty when there is none.
std::string TrailingLinearSubmodule(const torch::jit::Module& module);

}  // namespace imgpipe::extract
