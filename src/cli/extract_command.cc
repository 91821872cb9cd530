#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_commands.h"
#include "cli/data_options.h"
#include "cli/loader_flags.h"
#include "cli/progress_bar.h"
#include "extract/feature_extractor.h"
#include "extract/worker_processes.h"
#include "util/error.h"
#include "util/subprocess.h"

namespace imgpipe::cli {
namespace {

struct ExtractFlags {
  extract::ExtractOptions options;
  std::string dtype = "fp32";
  int nproc = 1;
  bool json = false;
};

nlohmann::json SummaryJson(const extract::ExtractOptions& o, const extract::ExtractSummary& s) {
  return {{"output", o.output},
          {"complete", s.complete},
          {"dimension", s.dimension},
          {"rows", s.rows_total},
          {"failures", s.failures_total},
          {"rows_this_run", s.rows_this_run},
          {"failures_this_run", s.failures_this_run},
          {"shards_total", s.shards_total},
          {"shards_done", s.shards_done},
          {"shards_this_run", s.shards_this_run},
          {"shards_resumed", s.shards_resumed},
          {"seconds", s.seconds},
          {"images_per_s", s.images_per_s},
          {"input_wait_fraction", s.input_wait_fraction}};
}

void PrintSummary(const extract::ExtractOptions& o, const extract::ExtractSummary& s) {
  if (o.finalize) {
    std::printf("finalized %s: %zu shards checked (rows, CRC-32C of every array)\n",
                o.output.c_str(), s.shards_done);
  } else {
    std::printf("extracted %llu rows in %.1f s: %.1f images/s; the model waited for input "
                "%.0f%% of the time\n",
                static_cast<unsigned long long>(s.rows_this_run), s.seconds, s.images_per_s,
                100 * s.input_wait_fraction);
    std::printf("shards: %zu of %zu done (%zu this run, %zu kept from an earlier run)\n",
                s.shards_done, s.shards_total, s.shards_this_run, s.shards_resumed);
  }
  if (s.complete) {
    std::printf("%s: %llu rows of %lld features; %llu failed (zero rows, listed in "
                "failures.csv)\n",
                o.output.c_str(), static_cast<unsigned long long>(s.rows_total),
                static_cast<long long>(s.dimension), static_cast<unsigned long long>(s.failures_total));
  } else if (s.shards_done == s.shards_total) {
    std::printf("all %zu shards are done: run the same command with --finalize (and "
                "--num-workers %d) to check them and write features.json\n",
                s.shards_total, o.num_workers);
  } else {
    std::printf("incomplete: other workers' shards are missing; when every worker has "
                "finished, run the same command with --finalize to check the shards and "
                "write features.json\n");
  }
}

}  // namespace

void AddExtractCommand(CLI::App& app) {
  auto flags = std::make_shared<ExtractFlags>();
  extract::ExtractOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand("extract", ModelCommandDescription("extract"));
  cmd->add_option("--data", o.data, std::string(kDataDoc) + ", or a CSV/JSONL manifest")
      ->required();
  AddDataSourceOptions(cmd, o.source);
  AddStorageCacheOptions(cmd);
  cmd->add_option("--model", o.model,
                  "imgpipe checkpoint, or TorchScript file (e.g. torch.jit.script(model).save())")
      ->required();
  cmd->add_option("--out", o.output, "Output folder")->required();
  AddLoaderFlag(cmd, "split", o.split);  // extract's default: "" (every file)
  cmd->add_option("--layer", o.layer,
                  "penultimate (the input of the final Linear layer), logits, or a submodule "
                  "name of a TorchScript model (e.g. layer4)")
      ->capture_default_str();
  cmd->add_option("--dtype", flags->dtype, "Feature dtype in the .npy files: fp32 or fp16")
      ->capture_default_str()->check(CLI::IsMember({"fp32", "fp16"}));
  cmd->add_option("--batch-size", o.batch_size, "Images per forward pass")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--image-size", o.image_size,
                  "Eval crop size (resize to size*256/224, center crop); 0: the checkpoint's, "
                  "224 for TorchScript")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  AddDraftDecodeFlag(cmd, o.draft_decode);
  cmd->add_option("--shard-rows", o.shard_rows, "Image folder input: rows per output shard")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o.threads,
                  "Preprocessing and libtorch threads per process (0: all available CPUs, "
                  "shared out among --nproc processes)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--nproc", flags->nproc,
                  "Local processes sharing the shards (this one and N-1 workers)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--resume", o.resume, "Keep shards finished by an earlier run of the same plan");
  cmd->add_option("--worker", o.worker,
                  "This process's part: shards i with i % num-workers == worker (job schedulers)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-workers", o.num_workers, "Number of workers sharing the shards")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--finalize", o.finalize,
                "After the workers of an extraction (same options): check that every shard is "
                "finished, reading each array to check the CRC-32C its worker recorded, then "
                "write features.json and failures.csv; fails naming the missing shards and "
                "the workers (of --num-workers) to rerun");
  cmd->add_flag("--json", flags->json, "Print the summary as JSON");

  cmd->callback([flags] {
    extract::ExtractOptions options = flags->options;
    options.dtype = flags->dtype == "fp16" ? "float16" : "float32";
    ProgressBar bar("shard");
    auto progress = [&bar](const extract::ExtractProgress& p) {
      bar.Update(p.shards_done, p.shards_total, 0, std::to_string(p.rows_done) + " img");
    };
    extract::ExtractSummary summary;
    if (flags->nproc > 1) {
      if (options.num_workers != 1) throw Error("--nproc and --num-workers exclude each other");
      if (options.finalize) throw Error("--nproc and --finalize exclude each other");
      const int nproc = flags->nproc;
      summary = extract::RunExtractProcesses(options, nproc, [nproc](int worker, int threads) {
        return extract::WorkerCommandLine(OwnCommandLine(), worker, nproc, threads);
      }, progress);
    } else {
      summary = extract::RunExtract(options, progress);
    }
    bar.Finish();
    if (flags->json) {
      std::printf("%s\n", SummaryJson(options, summary).dump().c_str());
    } else {
      PrintSummary(options, summary);
    }
  });
}

}  // namespace imgpipe::cli
