#include "extract/script_layer.h"

#include <torch/csrc/jit/ir/ir.h>

#include <gtest/gtest.h>

#include "extract/extract_test_util.h"
#include "extract/npy_file.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

torch::Tensor ReadNpyFloat(const std::string& path) {
  npy::ArrayInfo info = npy::ReadHeader(path);
  EXPECT_EQ(info.descr, "<f4");
  std::vector<int64_t> shape(info.shape.begin(), info.shape.end());
  std::string data = ReadFile(path).substr(info.data_offset);
  return torch::from_blob(data.data(), shape, torch::kFloat32).clone();
}

// Saves `module_code` (Python defining a torch.nn.Module class M) scripted to a file,
// with its outputs for a fixed input: input.npy and, for each `expressions` entry
// (Python over m and x), out_<i>.npy. Returns the folder.
std::string ScriptedModuleWithOutputs(const std::string& name, const std::string& module_code,
                                      const std::vector<std::string>& expressions) {
  std::string dir = FreshTestDir(name);
  std::string script =
      "import sys, numpy as np, torch\n" + module_code +
      "torch.manual_seed(3)\n"
      "m = M().eval()\n"
      "x = torch.randn(2, 3, 16, 16)\n"
      "d = sys.argv[1]\n"
      "torch.jit.script(m).save(d + '/m.pt')\n"
      "np.save(d + '/input.npy', x.numpy())\n"
      "with torch.no_grad():\n";
  for (size_t i = 0; i < expressions.size(); ++i) {
    script += "  np.save(d + '/out_" + std::to_string(i) + ".npy', (" + expressions[i] + ").numpy())\n";
  }
  RunPython(script, {dir});
  return dir;
}

TEST(ScriptLayer, Resnet18ScriptedAndTracedCutAtEveryWayOfNamingALayer) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  torch::manual_seed(0);
  torch::Tensor x = torch::randn({2, 3, 64, 64});
  for (bool scripted : {true, false}) {
    SCOPED_TRACE(scripted ? "torch.jit.script" : "torch.jit.trace");
    torch::jit::Module module = torch::jit::load(TorchScriptResnet18(scripted));
    EXPECT_EQ(TrailingLinearSubmodule(module), "fc");
    ScriptLayer logits(module, "logits");
    ScriptLayer penultimate(module, "penultimate");
    ScriptLayer layer4(module, "layer4");
    ScriptLayer block(module, "layer4.1");
    ScriptLayer pool(module, "avgpool");
    EXPECT_EQ(penultimate.description(), "input of fc (Linear)");
    EXPECT_EQ(block.description(), "output of layer4.1");
    EXPECT_EQ(logits.graph(), nullptr);
    // What comes after the cut is not computed: no submodule past it is even read.
    ScriptLayer layer1(module, "layer1");
    for (const auto& [cut, unused] : {std::pair{&penultimate, "fc"}, std::pair{&layer1, "layer2"},
                                      std::pair{&layer1, "fc"}, std::pair{&block, "avgpool"}}) {
      for (const torch::jit::Node* node : cut->graph()->nodes()) {
        if (node->kind() == c10::prim::GetAttr) {
          EXPECT_NE(node->s(c10::attr::name), unused) << cut->description();
        }
        EXPECT_NE(node->kind(), c10::prim::CallMethod) << cut->description();
      }
    }
    torch::NoGradGuard no_grad;
    torch::Tensor features = penultimate.Run(x);
    ASSERT_EQ(features.sizes(), (std::vector<int64_t>{2, 512}));
    ASSERT_EQ(layer4.Run(x).sizes(), (std::vector<int64_t>{2, 512, 2, 2}));
    // Consistent cuts: layer4's output is its last block's; the pool's is the features;
    // the features through fc are the logits, and forward is unchanged.
    EXPECT_TRUE(torch::equal(layer4.Run(x), block.Run(x)));
    EXPECT_TRUE(torch::allclose(pool.Run(x).flatten(1), features));
    torch::Tensor fc_weight = module.attr("fc").toModule().attr("weight").toTensor();
    torch::Tensor fc_bias = module.attr("fc").toModule().attr("bias").toTensor();
    EXPECT_TRUE(torch::allclose(torch::addmm(fc_bias, features, fc_weight.t()), logits.Run(x),
                                1e-4, 1e-4));
    EXPECT_TRUE(torch::equal(logits.Run(x), module.forward({x}).toTensor()));
    EXPECT_TRUE(torch::allclose(layer4.Run(x).mean({2, 3}), features, 1e-5, 1e-5));
    try {
      ScriptLayer unknown(module, "layer9");
      FAIL() << "an unknown layer was accepted";
    } catch (const Error& e) {
      // The top-level modules are listed, not every submodule.
      EXPECT_NE(std::string(e.what()).find("layer9"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("conv1, bn1, relu, maxpool, layer1, layer2, layer3, "
                                           "layer4, avgpool, fc"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("layer4.1.conv2"), std::string::npos) << e.what();
    }
  }
}

TEST(ScriptLayer, NestedClassifierAndForwardFeaturesMatchPython) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  // A torchvision-style head: the last Linear sits inside a Sequential "classifier".
  std::string nested = ScriptedModuleWithOutputs(
      "layer_nested",
      "class M(torch.nn.Module):\n"
      "  def __init__(self):\n"
      "    super().__init__()\n"
      "    self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(),\n"
      "                                        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())\n"
      "    self.classifier = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(),\n"
      "                                          torch.nn.Dropout(0.5), torch.nn.Linear(6, 3))\n"
      "  def forward(self, x):\n"
      "    return self.classifier(self.features(x))\n",
      {"m.classifier[:3](m.features(x))", "m.features[0](x)", "m(x)"});
  torch::jit::Module module = torch::jit::load(JoinPath(nested, "m.pt"));
  torch::Tensor x = ReadNpyFloat(JoinPath(nested, "input.npy"));
  EXPECT_EQ(TrailingLinearSubmodule(module), "classifier.3");
  ScriptLayer penultimate(module, "penultimate");
  EXPECT_EQ(penultimate.description(), "input of classifier.3 (Linear)");
  EXPECT_TRUE(torch::allclose(penultimate.Run(x), ReadNpyFloat(JoinPath(nested, "out_0.npy")), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(ScriptLayer(module, "features.0").Run(x),
                              ReadNpyFloat(JoinPath(nested, "out_1.npy")), 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(ScriptLayer(module, "logits").Run(x),
                              ReadNpyFloat(JoinPath(nested, "out_2.npy")), 1e-5, 1e-6));

  // timm-style: forward_features is used as it is (4-D; FeatureModel pools it).
  std::string timm = ScriptedModuleWithOutputs(
      "layer_forward_features",
      "class M(torch.nn.Module):\n"
      "  def __init__(self):\n"
      "    super().__init__()\n"
      "    self.stem = torch.nn.Conv2d(3, 4, 3)\n"
      "    self.head = torch.nn.Linear(4, 2)\n"
      "  @torch.jit.export\n"
      "  def forward_features(self, x):\n"
      "    return torch.relu(self.stem(x))\n"
      "  def forward(self, x):\n"
      "    return self.head(self.forward_features(x).mean((2, 3)))\n",
      {"m.forward_features(x)"});
  torch::jit::Module with_features = torch::jit::load(JoinPath(timm, "m.pt"));
  ScriptLayer features(with_features, "penultimate");
  EXPECT_EQ(features.description(), "forward_features");
  EXPECT_TRUE(torch::allclose(features.Run(ReadNpyFloat(JoinPath(timm, "input.npy"))),
                              ReadNpyFloat(JoinPath(timm, "out_0.npy")), 1e-5, 1e-6));

  // No Linear and no forward_features: penultimate is the model's output.
  std::string conv_only = ScriptedModuleWithOutputs(
      "layer_conv_only",
      "class M(torch.nn.Module):\n"
      "  def __init__(self):\n"
      "    super().__init__()\n"
      "    self.body = torch.nn.Conv2d(3, 4, 3)\n"
      "  def forward(self, x):\n"
      "    return self.body(x)\n",
      {"m(x)"});
  torch::jit::Module no_linear = torch::jit::load(JoinPath(conv_only, "m.pt"));
  ScriptLayer output(no_linear, "penultimate");
  EXPECT_EQ(output.description(), "forward (no classifier head)");
  EXPECT_TRUE(torch::allclose(output.Run(ReadNpyFloat(JoinPath(conv_only, "input.npy"))),
                              ReadNpyFloat(JoinPath(conv_only, "out_0.npy")), 1e-5, 1e-6));
  EXPECT_EQ(ScriptLayer(no_linear, "body").Run(ReadNpyFloat(JoinPath(conv_only, "input.npy"))).sizes(),
            (std::vector<int64_t>{2, 4, 14, 14}));
}

// torchvision's resnet18 with its head removed (fc = Identity), scripted: no trailing
// Linear and no forward_features, so penultimate is the model's output, equal to
// Python's m(x).
TEST(ScriptLayer, HeadlessResnet18GivesItsOutput) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string dir = FreshTestDir("layer_headless_resnet18");
  RunPython(
      "import sys, numpy as np, torch, torchvision\n"
      "torch.manual_seed(5)\n"
      "m = torchvision.models.resnet18()\n"
      "m.fc = torch.nn.Identity()\n"
      "m.eval()\n"
      "x = torch.randn(2, 3, 64, 64)\n"
      "d = sys.argv[1]\n"
      "torch.jit.script(m).save(d + '/m.pt')\n"
      "np.save(d + '/input.npy', x.numpy())\n"
      "with torch.no_grad():\n"
      "  np.save(d + '/out.npy', m(x).numpy())\n",
      {dir});
  torch::jit::Module module = torch::jit::load(JoinPath(dir, "m.pt"));
  EXPECT_EQ(TrailingLinearSubmodule(module), "");
  ScriptLayer penultimate(module, "penultimate");
  EXPECT_EQ(penultimate.description(), "forward (no classifier head)");
  torch::NoGradGuard no_grad;
  torch::Tensor features = penultimate.Run(ReadNpyFloat(JoinPath(dir, "input.npy")));
  torch::Tensor expected = ReadNpyFloat(JoinPath(dir, "out.npy"));
  ASSERT_EQ(features.sizes(), (std::vector<int64_t>{2, 512}));
  EXPECT_TRUE(torch::allclose(features, expected, 1e-5, 1e-5))
      << (features - expected).abs().max().item<float>();
}

// Which Linear is a head: one followed only by parameter-free layers; not one followed
// by a layer with weights or by a head replaced with Identity.
TEST(ScriptLayer, TrailingLinearIsTheHead) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Dropout())", "0"},
      {"torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4))", ""},
      {"torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Identity())", ""},
      {"torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Sequential(torch.nn.Linear(4, 2)))", "1.0"},
  };
  for (const auto& [module_code, head] : cases) {
    SCOPED_TRACE(module_code);
    std::string dir = FreshTestDir("layer_trailing");
    RunPython("import sys, torch\ntorch.jit.script(" + module_code + ").save(sys.argv[1] + '/m.pt')\n",
              {dir});
    EXPECT_EQ(TrailingLinearSubmodule(torch::jit::load(JoinPath(dir, "m.pt"))), head);
  }
}

}  // namespace
}  // namespace imgpipe::extract
