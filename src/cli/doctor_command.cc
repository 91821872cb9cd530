// `imgpipe doctor`: checks the GPU stack, libtorch, the host and the data layer by
// layer, prints what is wrong and how to fix it, and exits 2 when training cannot use
// the machine as it is.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_commands.h"
#include "env/doctor.h"
#include "io/storage.h"
#include "monitor/preset_costs.h"
#include "pipeline/data_source.h"

namespace imgpipe::cli {
namespace {

struct DoctorFlags {
  env::DoctorOptions options;
  std::string layout = "float32";
  bool json = false;
};

// A number, or null when unknown.
template <typename T>
nlohmann::json OrNull(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json ReportJson(const env::DoctorReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const env::Check& c : r.checks) {
    checks.push_back({{"layer", c.layer},
                      {"name", c.name},
                      {"status", env::CheckStatusName(c.status)},
                      {"detail", c.detail},
                      {"fix", c.fix}});
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const env::GpuInfo& g : r.driver.gpus) {
    nlohmann::json gpu{{"index", g.index},
                       {"name", g.name},
                       {"source", g.source},
                       {"memory_total_bytes", g.memory_total_bytes},
                       {"memory_used_bytes", g.memory_used_bytes},
                       {"compute_capability", nullptr},
                       {"utilization_percent", nullptr}};
    if (g.compute_capability_major >= 0) {
      gpu["compute_capability"] = std::to_string(g.compute_capability_major) + "." +
                                  std::to_string(g.compute_capability_minor);
    }
    if (g.utilization_percent >= 0) gpu["utilization_percent"] = g.utilization_percent;
    gpus.push_back(gpu);
  }
  nlohmann::json libraries = nlohmann::json::array();
  for (const env::CudaLibrary& lib : r.libraries) {
    libraries.push_back({{"name", env::CudaLibraryName(lib.kind)},
                         {"found", lib.found()},
                         {"soname", lib.soname},
                         {"path", lib.path},
                         {"tried", lib.tried},
                         {"version", lib.version_known ? lib.version.ToString() : ""},
                         {"error", lib.error}});
  }
  const env::TorchBuildInfo& t = r.torch;
  const env::NvidiaDriverInfo& d = r.driver;
  return {
      {"ok", r.ok()},
      {"checks", checks},
      {"gpus", gpus},
      {"torch",
       {{"linked", t.linked},
        {"problem", t.problem},
        {"version", t.version},
        {"cuda_build", t.cuda_build},
        {"cuda_version", t.cuda_build ? env::DecodeCudaVersion(t.cuda_version).ToString(2) : ""},
        {"cudnn_version",
         t.cudnn_version > 0 ? env::DecodeCudnnVersion(t.cudnn_version).ToString() : ""},
        {"cuda_available", t.cuda_available},
        {"cuda_device_count", t.cuda_device_count}}},
      {"driver",
       {{"version", d.driver_version},
        {"kernel_module_version", d.kernel_module_version},
        {"cuda_version", d.driver_cuda_version > 0
                             ? env::DecodeCudaVersion(d.driver_cuda_version).ToString(2)
                             : ""},
        {"nvml", d.nvml_soname},
        {"nvml_error", d.nvml_error},
        {"libcuda_path", d.libcuda_path},
        {"gpu_count", d.GpuCount()}}},
      {"libraries", libraries},
      {"platform", {{"wsl", r.wsl.detected}, {"wsl2", r.wsl.wsl2}, {"container", r.container}}},
      {"cpus",
       {{"allowed", r.cpus.allowed},
        {"cgroup_quota", OrNull(r.cpus.cgroup_quota)},
        {"usable", r.cpus.usable}}},
      {"memory",
       {{"total_bytes", OrNull(r.memory.total_bytes)},
        {"available_bytes", OrNull(r.memory.available_bytes)},
        {"cgroup_limit_bytes", OrNull(r.memory.cgroup_limit_bytes)},
        {"usable_bytes", OrNull(r.memory.usable_bytes())},
        {"planned_buffer_bytes", r.planned_buffer_bytes}}},
      {"processes", r.processes},
      {"network", r.network ? nlohmann::json{{"latency_ms", r.network->latency_ms},
                                             {"one_connection_mb_per_s", r.network->one_connection_mb_per_s},
                                             {"many_connections_mb_per_s", r.network->many_connections_mb_per_s},
                                             {"connections", r.network->connections},
                                             {"needed_images_per_s", r.needed_images_per_s},
                                             {"error", r.network->error}}
                            : nlohmann::json(nullptr)}};
}

// The train preset's CPU seconds per image on a sample of `data`'s records (what the
// network check weighs the store against); 0 when it cannot be measured (the data
// check says why).
double PresetSecondsPerImage(const std::string& data, const TrainPreset& preset) {
  try {
    const pipeline::DataSource source = pipeline::ResolveDataSource(data, {});
    const std::vector<std::string> images = SampleEncodedImages(source, 16);
    return images.empty() ? 0 : MeasureTrainPresetCosts(images, preset, 1).measured;
  } catch (const Error&) {
    return 0;
  }
}

void PrintReport(const env::DoctorReport& r) {
  std::string layer;
  for (const env::Check& c : r.checks) {
    if (c.layer != layer) {
      layer = c.layer;
      std::printf("%s%s\n", r.checks.front().layer == layer ? "" : "\n", layer.c_str());
    }
    std::printf("  %-8s %s: %s\n", env::CheckStatusName(c.status), c.name.c_str(),
                c.detail.c_str());
    bool problem = c.status == env::CheckStatus::kWarning || c.status == env::CheckStatus::kError;
    if (!c.fix.empty())
      std::printf("  %-8s %s %s\n", "", problem ? "fix:" : "hint:", c.fix.c_str());
  }
  int errors = r.Count(env::CheckStatus::kError);
  int warnings = r.Count(env::CheckStatus::kWarning);
  if (errors == 0) {
    std::printf("\nok: training can use this machine (%d warning%s)\n", warnings,
                warnings == 1 ? "" : "s");
  } else {
    std::printf(
        "\n%d error%s, %d warning%s: training cannot use this machine as it is; fix the errors "
        "above\n",
        errors, errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  }
}

}  // namespace

void AddDoctorCommand(CLI::App& app) {
  auto f = std::make_shared<DoctorFlags>();
  env::PlannedTraining& plan = f->options.plan;
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check the NVIDIA driver, CUDA, cuDNN, cuBLAS, NCCL, libtorch, CPUs, memory and the data's "
      "disk layer by layer, and say what to fix (exit status 2 when training cannot use the "
      "machine)");
  cmd->add_option(
      "--data", f->options.data,
      "Training data (TFRecord shards or an image folder, a path or an s3://, gs://, http(s):// "
      "URL): check its disk or its store's latency and throughput, and its shard count");
  cmd->add_option("--images-per-s", f->options.images_per_s,
                  "For --data at a URL: the rate its store must feed, in images/s (default: the "
                  "train preset's rate on this machine's CPUs, measured on the data)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch-size", plan.pipeline.batch_size, "Planned images per batch")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--image-size", plan.preset.size, "Planned output image side")
      ->capture_default_str()
      ->check(CLI::Range(8, 4096));
  cmd->add_option("--shuffle-buffer", plan.pipeline.shuffle_buffer,
                  "Planned shuffle buffer, in records")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--layout", f->layout,
                  "Planned output: float32 (NCHW) or uint8 (NHWC, a quarter the bytes)")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "uint8"}));
  cmd->add_option("--threads", plan.threads,
                  "Planned decode threads per training process (0: the usable CPUs shared among "
                  "the processes)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--processes", plan.processes,
                  "Planned training processes (0: one per GPU present)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option(
         "--root", f->options.root,
         "Read /proc, /sys, /dev and /usr/lib below DIR instead of / (a copied or fake system "
         "tree; libraries are still loaded from this machine)")
      ->capture_default_str()
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--json", f->json, "Print one JSON object: ok, checks, gpus, torch, ...");
  cmd->callback([f] {
    f->options.plan.preset.layout = ParseOutputLayout(f->layout);
    if (IsUrl(f->options.data) && f->options.images_per_s == 0) {
      f->options.preset_cpu_seconds_per_image = PresetSecondsPerImage(f->options.data, f->options.plan.preset);
    }
    env::DlopenLibraryLoader loader;
    env::DoctorReport report = env::RunDoctor(f->options, loader, AskTorchBuildInfo());
    if (f->json) {
      std::printf("%s\n", ReportJson(report).dump().c_str());
    } else {
      PrintReport(report);
    }
    std::fflush(stdout);
    if (!report.ok()) throw CLI::RuntimeError(2);
  });
}

}  // namespace imgpipe::cli
