#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "convert/convert_output.h"
#include "convert/converter.h"
#include "convert/summary_json.h"
#include "image/jpeg_transcode.h"

namespace imgpipe::cli {
namespace {

struct ConvertFlags {
  ConvertOptions options;
  std::string split = "train=1";
  std::string shard_size = "256MB";
  std::string verify = VerifyModeName(ImageExampleOptions{}.verify);
  std::string non_jpeg = NonJpegPolicyName(ImageExampleOptions{}.non_jpeg);
  bool json = false;
};

void PrintSummary(const ConvertOptions& options, const ConvertSummary& s) {
  if (options.finalize) {
    std::printf("finalized %s: %llu shards checked (counts, CRC-32C of every shard and index) "
                "in %.1f s\n",
                options.output.c_str(), static_cast<unsigned long long>(s.shards_done), s.seconds);
  } else {
    std::printf("converted %s -> %s in %.1f s (%.1f MB/s read)\n", options.input.c_str(),
                options.output.c_str(), s.seconds,
                s.input_bytes_this_run / (s.seconds > 0 ? s.seconds : 1e-9) / 1e6);
    std::printf("shards: %llu of %llu done (%llu this run, %llu kept from an earlier run)\n",
                static_cast<unsigned long long>(s.shards_done),
                static_cast<unsigned long long>(s.shards_total),
                static_cast<unsigned long long>(s.shards_this_run),
                static_cast<unsigned long long>(s.shards_resumed));
    if (s.shards_uploaded > 0) {
      std::printf("uploaded %llu shards to %s (staged in %s)\n",
                  static_cast<unsigned long long>(s.shards_uploaded), options.output.c_str(),
                  WorkFolder(options).c_str());
    }
  }
  if (s.complete) {
    std::printf("written %llu + rejected %llu = inputs %llu (see %s/rejects.csv)\n",
                static_cast<unsigned long long>(s.written),
                static_cast<unsigned long long>(s.rejected),
                static_cast<unsigned long long>(s.inputs), options.output.c_str());
    if (options.image.jpeg_restart_interval > 0) {
      std::printf("%s\n", DescribeRestartMarkers(s, options.image.jpeg_restart_interval).c_str());
    }
  } else if (s.shards_done == s.shards_total) {
    std::printf("all %llu shards are done: run the same command with --finalize (and "
                "--num-workers %d) to check them and write dataset.json\n",
                static_cast<unsigned long long>(s.shards_total), options.num_workers);
  } else {
    std::printf("incomplete: other workers' shards are missing; when every worker has "
                "finished, run the same command with --finalize to check the shards and "
                "write dataset.json\n");
  }
}

}  // namespace

void AddConvertCommand(CLI::App& app) {
  auto flags = std::make_shared<ConvertFlags>();
  ConvertOptions& o = flags->options;
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert an image folder (one sub-folder per class), a CSV/JSONL manifest or "
                 "TFRecord data into sharded TFRecord files of tf.train.Example records");
  cmd->add_option("--input", o.input, "Image folder, .csv/.jsonl manifest (path,label; also at an "
                  "s3://, gs:// or http(s):// URL, its relative paths objects beside it), or "
                  "TFRecord data (a folder of shards in any layout --data reads, a file or a "
                  "glob pattern), re-sharded split by split")
      ->required();
  cmd->add_option("--output", o.output, "Output folder, or an s3://BUCKET/PREFIX or "
                  "gs://BUCKET/PREFIX: each shard is uploaded as it finishes (index, part file, "
                  "shard last; multipart above 64 MiB), each object appearing only whole")
      ->required();
  cmd->add_option("--staging-dir", o.staging_dir,
                  "For an s3:// or gs:// --output: the local folder shards are written into "
                  "before they are uploaded (at most two shards at a time; a --resume run "
                  "uploads the finished ones it finds there; default: "
                  "$TMPDIR/imgpipe-staging/<the URL>-<hash>, /tmp without TMPDIR)");
  cmd->add_option("--split", flags->split, "Splits and fractions, e.g. train=0.9,validation=0.1")
      ->capture_default_str();
  cmd->add_option("--shard-size", flags->shard_size, "Target shard size (e.g. 256MB, 1GiB)")
      ->capture_default_str();
  cmd->add_option("--min-shards", o.plan.min_shards, "Minimum shards per split")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o.threads, "Worker threads (0: all available CPUs)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o.plan.seed, "Seed of the shuffle that orders files into shards")
      ->capture_default_str();
  cmd->add_option("--verify", flags->verify, "Validation per image: header or decode")
      ->capture_default_str()->check(CLI::IsMember({"header", "decode"}));
  cmd->add_option("--non-jpeg", flags->non_jpeg,
                  "PNG, BMP, TIFF, ... inputs: reencode (store as JPEG) or reject")
      ->capture_default_str()->check(CLI::IsMember({"reencode", "reject"}));
  cmd->add_option("--jpeg-quality", o.image.jpeg_quality, "Quality of re-encoded JPEGs")
      ->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--max-resolution", o.image.max_resolution,
                  "Resize images whose longer side exceeds N to that longer side (FFCV's "
                  "max_resolution; 0: store every image at its size)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--jpeg-restart-interval", o.image.jpeg_restart_interval,
                  "Rewrite every stored JPEG losslessly (same pixels) with a restart marker "
                  "every N MCUs, so that the train and eval presets' crop decodes "
                  "entropy-decode only the crop's MCUs (1, the default: fastest for crops; "
                  "files ~8% larger, conversion 3-6x slower; 0: store JPEGs as given)")
      ->capture_default_str()->check(CLI::Range(0, kMaxJpegRestartInterval));
  cmd->add_option("--max-pixels", o.image.max_pixels,
                  "Reject images with more pixels (decompression bombs)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Keep shards finished by an earlier run of the same plan");
  cmd->add_option("--worker", o.worker, "This worker's index (for multi-machine conversion)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-workers", o.num_workers, "Number of workers sharing the conversion")
      ->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_flag("--finalize", o.finalize,
                "After the workers of a conversion (same options): check that every planned "
                "shard is finished, reading each shard and index to check the CRC-32C its "
                "worker recorded, then write labels.txt, dataset.json and rejects.csv; fails "
                "naming the missing shards and the workers (of --num-workers) to rerun");
  cmd->add_flag("--json", flags->json, "Print the summary as JSON");

  cmd->callback([flags] {
    ConvertOptions options = flags->options;
    options.plan.splits = ParseSplits(flags->split);
    options.plan.shard_bytes = ParseByteSize(flags->shard_size);
    options.image.verify = ParseVerifyMode(flags->verify);
    options.image.non_jpeg = ParseNonJpegPolicy(flags->non_jpeg);
    ProgressBar bar("img");
    ConvertSummary summary = RunConvert(options, [&bar](const ConvertProgress& p) {
      bar.Update(p.done, p.total, p.bytes_done);
    });
    bar.Finish();
    if (flags->json) {
      std::printf("%s\n", ConvertSummaryJson(summary).c_str());
    } else {
      PrintSummary(options, summary);
    }
  });
}

}  // namespace imgpipe::cli
