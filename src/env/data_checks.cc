#include "env/data_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "env/check_list.h"
#include "io/storage.h"
#include "util/byte_size.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::env {
namespace {

// Below this many CPUs per GPU, JPEG decode usually starves a ResNet-50-class model on
// a current GPU (one core decodes and crops a few hundred ImageNet images per second).
constexpr int kCpusPerGpu = 4;

// host: CPUs against the decode threads and the GPUs.
void CheckCpus(DoctorReport* r, const PlannedTraining& plan) {
  const CpuInfo& cpus = r->cpus;
  std::string cpu_detail = Plural(cpus.usable, "CPU", "CPUs") + " usable (" + cpus.allowed_source;
  if (cpus.cgroup_quota) {
    char quota[32];
    std::snprintf(quota, sizeof(quota), "%.1f", *cpus.cgroup_quota);
    cpu_detail += std::string(", cgroup quota ") + quota + " CPUs";
  }
  cpu_detail += ")";
  int threads = plan.threads > 0 ? plan.threads : std::max(1, cpus.usable / r->processes);
  int planned = threads * r->processes;
  cpu_detail += "; " + Plural(threads, "decode thread", "decode threads") + " x " +
                Plural(r->processes, "process", "processes");
  if (planned > cpus.usable) {
    Add(r, "host", "CPUs", CheckStatus::kWarning,
        cpu_detail + " = " + std::to_string(planned) + " threads compete for " +
            std::to_string(cpus.usable) + " CPUs",
        "use --threads " + std::to_string(std::max(1, cpus.usable / r->processes)) +
            " (or 0: the usable CPUs shared among the processes)");
  } else {
    Add(r, "host", "CPUs", CheckStatus::kOk, cpu_detail);
  }
  int gpus = r->driver.GpuCount();
  if (gpus > 0 && cpus.usable < kCpusPerGpu * gpus) {
    Add(r, "host", "CPUs per GPU", CheckStatus::kWarning,
        Plural(cpus.usable, "CPU", "CPUs") + " for " + Plural(gpus, "GPU", "GPUs") +
            ": JPEG decode will likely starve the GPUs (plan on " + std::to_string(kCpusPerGpu) +
            " or more CPUs per GPU)",
        "give the job more CPUs, store smaller images (convert at a 256-320 pixel shorter side), "
        "and use --layout uint8 with normalisation on the GPU; imgpipe bench measures the rate");
  }
}

// The loader options `plan` stands for, on rank 0 of `processes`.
loader::LoaderOptions PlannedLoaderOptions(const PlannedTraining& plan, int processes) {
  loader::LoaderOptions o;
  o.batch_size = plan.pipeline.batch_size;
  o.image_size = plan.preset.size;
  o.layout = OutputLayoutName(plan.preset.layout);
  o.shuffle_buffer = plan.pipeline.shuffle_buffer;
  o.world_size = processes;
  return o;
}

// What the memory fix says: the options the Loader's refusal names, as flags.
constexpr char kMemoryFix[] =
    "lower --batch-size, --image-size or --shuffle-buffer, or use --layout uint8 (a quarter of float32)";

// host: the Loader's buffers (its own estimate, every process) against its RAM budget
// and the memory available; sets r->loader_memory and r->planned_buffer_bytes.
void CheckMemory(DoctorReport* r, const PlannedTraining& plan, const DataProbe& data) {
  const loader::MemoryNeed& need = r->loader_memory = PlannedLoaderMemory(plan, *r, data.record_bytes);
  const uint64_t planned = r->planned_buffer_bytes = need.minimum_bytes * static_cast<uint64_t>(r->processes);
  const std::string text = "planned buffers " + FormatBytes(planned) + " (" +
                           Plural(r->processes, "process", "processes") + " x the Loader's " +
                           loader::MemoryTerms(need) + "; batches of " + std::to_string(plan.pipeline.batch_size) +
                           " images, records of " + FormatBytes(static_cast<uint64_t>(data.record_bytes)) + " " +
                           data.record_bytes_source + ")";
  const std::optional<uint64_t> usable = r->memory.usable_bytes();
  if (!usable || !r->memory.total_bytes) {
    Add(r, "host", "memory", CheckStatus::kInfo, text + "; available memory unknown (no /proc/meminfo)");
  } else if (!loader::MemoryFits(need)) {
    Add(r, "host", "memory", CheckStatus::kError,
        text + ": one process's " + FormatBytes(need.minimum_bytes) + " exceed the Loader's RAM budget, half of " +
            FormatBytes(*r->memory.total_bytes) + ": it refuses these options",
        kMemoryFix);
  } else if (planned > *usable) {
    Add(r, "host", "memory", CheckStatus::kError,
        text + " exceed the " + FormatBytes(*usable) + " available: the out-of-memory killer will stop training",
        kMemoryFix);
  } else if (planned * 2 > *usable) {
    Add(r, "host", "memory", CheckStatus::kWarning,
        text + " take more than half of the " + FormatBytes(*usable) +
            " available, leaving little for the model, pinned memory and the page cache",
        kMemoryFix);
  } else {
    Add(r, "host", "memory", CheckStatus::kOk, text + " of " + FormatBytes(*usable) + " available");
  }
}

// Words for a disk name: virtio and Xen disks report rotational=1 whatever is below.
std::string DiskNote(const PhysicalDisk& disk) {
  if (disk.name.rfind("vd", 0) == 0 || disk.name.rfind("xvd", 0) == 0) {
    return "; a virtual disk, and VMs often report rotational=1 whatever the storage below";
  }
  return "";
}

// data: the disks below the data path.
void CheckStorage(DoctorReport* r, const std::string& data) {
  const StorageInfo& s = *r->storage;
  std::vector<std::string> names;
  for (const PhysicalDisk& disk : s.disks) names.push_back(disk.name);
  std::string where = data + " is on " + (s.filesystem.empty() ? "" : s.filesystem + " on ");
  std::string via =
      s.disks.size() == 1 && s.disks[0].name == s.block_device ? "" : " via " + s.block_device;
  if (s.block_device.empty()) {
    Add(r, "data", "storage", CheckStatus::kInfo,
        where + "device " + s.device_number +
            ", which has no local disk (a network, overlay or memory file system)",
        "for network storage use large shards (100 MB or more) read several at once, or copy the "
        "data to a local SSD");
    return;
  }
  for (const PhysicalDisk& disk : s.disks) {
    if (disk.rotational.value_or(false)) {
      Add(r, "data", "storage", CheckStatus::kWarning,
          where + "a rotational disk (" + disk.name + via + DiskNote(disk) + ")" +
              ": shuffled reads of many files seek and wait",
          "put the shards on an SSD or NVMe drive (or local scratch); keep shards large (100 MB or "
          "more) "
          "and read a few at once rather than many small files");
      return;
    }
  }
  bool all_known = std::all_of(s.disks.begin(), s.disks.end(),
                               [](const PhysicalDisk& d) { return d.rotational.has_value(); });
  if (s.disks.empty() || !all_known) {
    Add(r, "data", "storage", CheckStatus::kInfo,
        where + s.block_device + ": whether it is rotational is unknown");
  } else {
    Add(r, "data", "storage", CheckStatus::kOk,
        where + "solid-state storage (" + Join(names, ", ") + via + ")");
  }
}

// data: the shard count against processes and parallel readers.
void CheckShards(DoctorReport* r, const PlannedTraining& plan, const std::string& data) {
  const ShardList& shards = *r->shards;
  size_t count = shards.files.size();
  if (count == 0) {
    Add(r, "data", "shards", CheckStatus::kInfo,
        "no TFRecord shards in " + data + " (an image folder?): one file per image reads slower",
        "convert it once: imgpipe convert --input " + data + " --output SHARDS_DIR");
    return;
  }
  // Each process reads its own shards (file-level sharding) with up to cycle_length
  // files at once, one reader thread each, at most one per CPU.
  int cpus_per_process = std::max(1, r->cpus.usable / r->processes);
  int readers_per_process = std::max(1, std::min(plan.pipeline.cycle_length, cpus_per_process));
  size_t readers = static_cast<size_t>(readers_per_process) * static_cast<size_t>(r->processes);
  std::string detail = Plural(static_cast<int>(count), "shard", "shards") + " (" +
                       FormatBytes(shards.bytes) + ", " + std::to_string(shards.with_index) +
                       " with .idx index files) for " + std::to_string(readers) +
                       " parallel readers (" + Plural(r->processes, "process", "processes") +
                       " x " + std::to_string(readers_per_process) + ")";
  std::string more_shards = "reconvert with more shards (imgpipe convert --min-shards " +
                            std::to_string(readers * 4) + ")";
  if (count < static_cast<size_t>(r->processes)) {
    bool indexed = shards.with_index == count;
    Add(r, "data", "shards", indexed ? CheckStatus::kWarning : CheckStatus::kError,
        detail +
            ": fewer shards than processes, so each process reads part of every shard "
            "(record-level DATA sharding)" +
            (indexed ? "" : ", which needs the .idx index files that are missing"),
        indexed ? more_shards
                : more_shards +
                      "; imgpipe convert writes the .idx files (for other shards: DALI's "
                      "tfrecord2idx)");
  } else if (count < readers) {
    Add(r, "data", "shards", CheckStatus::kWarning,
        detail + ": fewer shards than readers, so readers sit idle and epochs mix fewer files",
        more_shards + ", or shard by record (ShardPolicy kData, from the .idx files)");
  } else {
    Add(r, "data", "shards", CheckStatus::kOk, detail);
  }
}

// What to check when a store cannot be listed or read.
constexpr char kStoreFix[] =
    "check the --data URL, the credentials (AWS_*, GCS_*, GOOGLE_OAUTH_ACCESS_TOKEN) and AWS_ENDPOINT_URL";

// "12.3" with one decimal.
std::string Fixed1(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// The rate the store must feed: the user's, or the planned decode threads (all processes)
// over the train preset's CPU time per image; 0 when neither is known.
double NeededImagesPerSecond(const DoctorReport& r, const DoctorOptions& options) {
  if (options.images_per_s > 0) return options.images_per_s;
  if (options.preset_cpu_seconds_per_image <= 0) return 0;
  const int threads = options.plan.threads > 0 ? options.plan.threads * r.processes : std::max(1, r.cpus.usable);
  return threads / options.preset_cpu_seconds_per_image;
}

// data: a URL's store, its latency and throughput against the rate the pipeline takes.
void CheckNetwork(DoctorReport* r, const DoctorOptions& options, double record_bytes) {
  const NetworkProbe& n = *r->network;
  if (!n.error.empty()) {
    Add(r, "data", "network", CheckStatus::kError, "reading " + options.data + " failed: " + n.error,
        kStoreFix);
    return;
  }
  std::string detail = "latency " + Fixed1(n.latency_ms) + " ms; ranged reads of " +
                       FormatBytes(options.network.piece_bytes) + ": " + Fixed1(n.one_connection_mb_per_s) +
                       " MB/s on one connection, " + Fixed1(n.many_connections_mb_per_s) + " MB/s on " +
                       std::to_string(n.connections) + " connections";
  r->needed_images_per_s = NeededImagesPerSecond(*r, options);
  if (r->needed_images_per_s <= 0) {
    Add(r, "data", "network", CheckStatus::kInfo, detail);
    return;
  }
  const double needed_mb_per_s = r->needed_images_per_s * record_bytes / 1e6;
  const std::string source = options.images_per_s > 0 ? "given" : "the train preset on this machine's CPUs";
  detail += "; the pipeline takes " + Fixed1(needed_mb_per_s) + " MB/s (" + Fixed1(r->needed_images_per_s) +
            " images/s, " + source + ", x " + FormatBytes(static_cast<uint64_t>(record_bytes)) + ")";
  const std::string cache = "imgpipe reads several shards at once; --cache-dir keeps them on local disk "
                            "for the epochs after the first";
  if (n.many_connections_mb_per_s >= 1.25 * needed_mb_per_s) {
    Add(r, "data", "network", CheckStatus::kOk, detail + ": it can feed the pipeline");
  } else if (n.many_connections_mb_per_s >= needed_mb_per_s) {
    Add(r, "data", "network", CheckStatus::kWarning, detail + ": just enough, with little headroom",
        cache + "; or read from a store in the same region");
  } else {
    Add(r, "data", "network", CheckStatus::kWarning,
        detail + ": too slow, the pipeline will wait on the network (at most " +
            Fixed1(n.many_connections_mb_per_s * 1e6 / record_bytes) + " images/s)",
        "train from --cache-dir (local disk after the first epoch), copy the shards to local disk, or read "
        "from a store in the same region");
  }
}

// Fills r->storage, shards and network for `data`; throws Error as the storage does.
void ProbeData(const SystemRoot& root, const std::string& data, const NetworkProbeOptions& network,
               DoctorReport* r, DataProbe* probe) {
  probe->exists = IsUrl(data) ? IsStorageFolder(data) || StorageExists(data) : PathExists(data);
  if (!probe->exists) return;
  if (!IsUrl(data)) {
    try {
      r->storage = ProbeStorage(root, data);
    } catch (const Error&) {
      // Stat failed although the path exists (a race): the storage line is left out.
    }
  }
  r->shards = ListShards(data);
  if (IsUrl(data)) r->network = ProbeNetworkStore(r->shards->files, network);
  if (r->shards->mean_record_bytes) {
    probe->record_bytes = *r->shards->mean_record_bytes;
    probe->record_bytes_source = "(measured from the index files)";
  }
}

}  // namespace

DataProbe ProbeHostAndData(const SystemRoot& root, const DoctorOptions& options, DoctorReport* r) {
  r->cpus = ProbeCpus(root);
  r->memory = ProbeMemory(root);
  r->processes = options.plan.processes > 0 ? options.plan.processes : std::max(1, r->driver.GpuCount());
  DataProbe probe;
  if (options.data.empty()) return probe;
  try {
    ProbeData(root, options.data, options.network, r, &probe);
  } catch (const Error& e) {  // a URL's listing or HEAD failed (credentials, endpoint)
    probe.error = e.what();
  }
  return probe;
}

loader::MemoryNeed PlannedLoaderMemory(const PlannedTraining& plan, const DoctorReport& r, double record_bytes) {
  loader::LoaderData data;
  data.mean_record_bytes = static_cast<uint64_t>(record_bytes);
  if (r.shards) data.paths = r.shards->files;
  const bool counted = r.shards && r.shards->bytes > 0 && record_bytes > 0;
  data.samples = counted ? std::llround(static_cast<double>(r.shards->bytes) / record_bytes)
                         : static_cast<int64_t>(plan.pipeline.shuffle_buffer) * r.processes;
  const uint64_t total = r.memory.total_bytes.value_or(0);
  return loader::EstimateMemory(data, PlannedLoaderOptions(plan, r.processes), {total, total});
}

void CheckHost(DoctorReport* r, const PlannedTraining& plan, const DataProbe& data) {
  CheckCpus(r, plan);
  CheckMemory(r, plan, data);
}

void CheckData(DoctorReport* r, const DoctorOptions& options, const DataProbe& data) {
  if (options.data.empty()) {
    Add(r, "data", "data", CheckStatus::kInfo, "no --data given: storage and shards not checked");
  } else if (!data.error.empty()) {
    Add(r, "data", "data", CheckStatus::kError, data.error, kStoreFix);
  } else if (!data.exists) {
    Add(r, "data", "data", CheckStatus::kError, options.data + " does not exist", "check the --data path");
  } else {
    if (r->storage) CheckStorage(r, options.data);
    CheckShards(r, options.plan, options.data);
    if (r->network) CheckNetwork(r, options, data.record_bytes);
  }
}

}  // namespace imgpipe::env
