#include "extract/script_layer.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <functional>
#include <unordered_map>

#include "util/error.h"
#include "util/logging.h"

namespace imgpipe::extract {
namespace {

using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Whether `module` is a torch.nn.<kind> of torch/nn/modules/linear.py ("Linear",
// "Identity"; scripted or traced: traced types are mangled, e.g.
// __torch__.torch.nn.modules.linear.___torch_mangle_3.Linear).
bool IsLinearModule(const torch::jit::Module& module, const std::string& kind) {
  auto name = module.type()->name();
  if (!name) return false;
  const std::string q = name->qualifiedName();
  const std::string suffix = "." + kind;
  return q.rfind("__torch__.torch.nn.modules.linear.", 0) == 0 && q.size() >= suffix.size() &&
         q.compare(q.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether `module` has no submodules.
bool IsLeaf(const torch::jit::Module& module) {
  return module.children().size() == 0;
}

// "parent.child", or "child" for the module itself ("").
std::string JoinModulePath(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

// Whether submodule path `ancestor` contains `path` ("" contains everything).
bool Contains(const std::string& ancestor, const std::string& path) {
  return ancestor.empty() || path.rfind(ancestor + ".", 0) == 0;
}

// The names of `module`'s top-level submodules, for error messages (cut at ~2,000
// chars); dotted paths such as "layer4.1" reach the ones below.
std::string TopLevelModuleList(const torch::jit::Module& module) {
  std::string list;
  for (const auto& child : module.named_children()) {
    if (list.size() > 2000) return list + ", ...";
    list += (list.empty() ? "" : ", ") + child.name;
  }
  return list.empty() ? "(none)" : list;
}

// The last call at the top level of `graph` to the forward of submodule `path`, after
// inlining the calls that may contain it (methods of `path`'s ancestors, the module
// itself included); nullptr when there is none.
Node* FindSubmoduleCall(Graph& graph, const std::string& path) {
  while (true) {
    // 1. Which submodule each module value is: graph input 0 is the module itself.
    std::unordered_map<const Value*, std::string> paths{{graph.inputs()[0], ""}};
    Node* call = nullptr;
    Node* to_inline = nullptr;
    for (Node* node : graph.nodes()) {
      if (node->kind() == c10::prim::GetAttr) {
        auto owner = paths.find(node->input(0));
        auto type = node->output()->type()->cast<c10::ClassType>();
        if (owner != paths.end() && type && type->is_module()) {
          paths[node->output()] = JoinModulePath(owner->second, node->s(c10::attr::name));
        }
      } else if (node->kind() == c10::prim::CallMethod) {
        auto owner = paths.find(node->input(0));
        if (owner == paths.end()) continue;
        if (owner->second == path && node->s(c10::attr::name) == "forward") {
          call = node;
        } else if (!to_inline && Contains(owner->second, path) && owner->second != path) {
          to_inline = node;
        }
      }
    }
    // 2. Found at the top level, or inline the first call that may hold it and rescan.
    if (call) return call;
    if (!to_inline) return nullptr;
    auto type = to_inline->input(0)->type()->expect<c10::ClassType>();
    torch::jit::Function& method = type->getMethod(to_inline->s(c10::attr::name));
    torch::jit::GraphFunction* callee = torch::jit::tryToGraphFunction(method);
    if (!callee) return nullptr;
    // The callee's own graph: its optimized graph would inline every call below it too.
    torch::jit::inlineCallTo(to_inline, callee, callee->graph().get());
  }
}

// Replaces every read of a submodule's `training` flag with false (the module is in
// eval mode and stays so), so that constant propagation removes the training-only
// branches (batch norm's counter updates), which dead-code elimination must keep.
void FoldTrainingFlags(std::shared_ptr<Graph>& graph) {
  std::vector<Node*> reads;
  std::function<void(torch::jit::Block*)> visit = [&](torch::jit::Block* block) {
    for (Node* node : block->nodes()) {
      if (node->kind() == c10::prim::GetAttr && node->s(c10::attr::name) == "training" &&
          node->output()->type()->kind() == c10::TypeKind::BoolType) {
        reads.push_back(node);
      }
      for (torch::jit::Block* inner : node->blocks()) visit(inner);
    }
  };
  visit(graph->block());
  if (reads.empty()) return;
  torch::jit::WithInsertPoint insert_point(graph->block()->nodes().front());
  Value* eval_mode = graph->insertConstant(false);
  for (Node* read : reads) read->output()->replaceAllUsesWith(eval_mode);
  torch::jit::ConstantPropagation(graph);
}

// Whether `node` or a node in its blocks raises an exception.
bool MayRaise(const Node* node) {
  if (node->kind() == c10::prim::RaiseException) return true;
  for (const torch::jit::Block* block : node->blocks()) {
    for (const Node* inner : block->nodes()) {
      if (MayRaise(inner)) return true;
    }
  }
  return false;
}

// Removes the checks (branches without results that may raise, e.g. batch norm's
// input-rank check) placed after the node computing `cut`: they guard only work the
// cut does not need, yet count as side effects that would keep that work alive. The
// checks before the cut stay.
void DropChecksAfterCut(Graph& graph, Value* cut) {
  Node* producer = cut->node();
  while (producer->owningBlock() != graph.block() && producer->owningBlock()->owningNode()) {
    producer = producer->owningBlock()->owningNode();
  }
  bool after = producer->kind() == c10::prim::Param;
  std::vector<Node*> checks;
  for (Node* node : graph.nodes()) {
    if (after && node->kind() == c10::prim::If && node->outputs().empty() && MayRaise(node)) {
      checks.push_back(node);
    }
    after = after || node == producer;
  }
  for (Node* check : checks) check->destroy();
}

// A copy of `module`'s forward graph returning the input (or output) of the call to
// submodule `path` instead.
std::shared_ptr<Graph> GraphReturningCallValue(const torch::jit::Module& module,
                                               const std::string& path, bool call_input) {
  std::shared_ptr<Graph> graph = module.get_method("forward").graph()->copy();
  Node* call = FindSubmoduleCall(*graph, path);
  if (!call) {
    throw Error("TorchScript module: no call of submodule '" + path +
                "' at the top level of forward (calls inside loops or branches, and "
                "functional layers, cannot be cut at)");
  }
  if (call_input && call->inputs().size() < 2) {
    throw Error("TorchScript module: submodule '" + path + "' is called without an input");
  }
  Value* value = call_input ? call->input(1) : call->output();
  while (!graph->outputs().empty()) graph->eraseOutput(0);
  graph->registerOutput(value);
  // Calls, training-only branches and checks count as side effects for dead-code
  // elimination: inline the calls and remove those after the cut first, so that what
  // comes after the cut (e.g. layer2..fc for layer1) is dropped.
  torch::jit::Inline(*graph);
  FoldTrainingFlags(graph);
  DropChecksAfterCut(*graph, graph->outputs()[0]);
  torch::jit::EliminateDeadCode(graph);
  return graph;
}

}  // namespace

std::string TrailingLinearSubmodule(const torch::jit::Module& module) {
  std::string last;
  for (const auto& child : module.named_modules()) {
    if (child.name.empty()) continue;
    if (IsLinearModule(child.value, "Linear")) {
      last = child.name;
    } else if (IsLeaf(child.value) && (IsLinearModule(child.value, "Identity") ||
                                       child.value.parameters(false).size() > 0)) {
      last.clear();  // a layer with weights, or a removed head, after it
    }
  }
  return last;
}

ScriptLayer::ScriptLayer(torch::jit::Module module, const std::string& layer)
    : module_(std::move(module)) {
  module_.eval();
  std::string path;
  bool call_input = false;
  if (layer == "logits") {
    method_ = "forward";
    description_ = "forward (logits)";
    return;
  }
  if (layer == "penultimate") {
    if (module_.find_method("forward_features")) {
      method_ = "forward_features";
      description_ = "forward_features";
      return;
    }
    path = TrailingLinearSubmodule(module_);
    if (path.empty()) {
      method_ = "forward";
      description_ = "forward (no classifier head)";
      LogInfo("--layer penultimate: the model has no classifier head (no trailing "
              "torch.nn.Linear and no forward_features method), so its output is used as the "
              "features; top-level modules: " + TopLevelModuleList(module_) +
              " (name one with --layer to cut elsewhere)");
      return;
    }
    call_input = true;
    description_ = "input of " + path + " (Linear)";
  } else {
    bool known = false;
    for (const auto& child : module_.named_modules()) known = known || (!layer.empty() && child.name == layer);
    if (!known) {
      throw Error("TorchScript module has no submodule '" + layer + "' (use penultimate, logits, "
                  "one of the top-level modules " + TopLevelModuleList(module_) +
                  " or a dotted path below one, as torch.nn.Module.named_modules() names it)");
    }
    path = layer;
    description_ = "output of " + path;
  }
  function_ = std::make_shared<torch::jit::GraphFunction>(
      "imgpipe_layer", GraphReturningCallValue(module_, path, call_input), nullptr);
}

std::shared_ptr<Graph> ScriptLayer::graph() const {
  return function_ ? function_->graph() : nullptr;
}

torch::Tensor ScriptLayer::Run(const torch::Tensor& input) {
  c10::IValue out = method_.empty() ? (*function_)({module_._ivalue(), input})
                                    : module_.get_method(method_)({input});
  if (out.isTuple() && !out.toTupleRef().elements().empty() &&
      out.toTupleRef().elements()[0].isTensor()) {
    return out.toTupleRef().elements()[0].toTensor();
  }
  if (!out.isTensor()) {
    throw Error("TorchScript module: layer '" + description_ + "' gives a " +
                out.tagKind() + ", not a tensor");
  }
  return out.toTensor();
}

}  // namespace imgpipe::extract
