#include "env/storage_probe.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "io/storage.h"
#include "pipeline/tfrecord_files.h"
#include "record/index.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::env {
namespace {

constexpr int kMaxDeviceDepth = 8;  // dm on md on partitions is 3; loops are cut
constexpr size_t kIndexFilesSampled = 8;

// Adds the whole disks below the sysfs device folder `folder` (root-relative, resolved).
void CollectDisks(const SystemRoot& root, const std::string& folder, int depth,
                  std::vector<PhysicalDisk>* disks) {
  if (depth > kMaxDeviceDepth) return;
  // 1. Device-mapper and md devices sit on their slaves.
  std::vector<std::string> slaves = root.List(folder + "/slaves");
  if (!slaves.empty()) {
    for (const std::string& slave : slaves) {
      if (std::optional<std::string> resolved = root.Resolve(folder + "/slaves/" + slave)) {
        CollectDisks(root, *resolved, depth + 1, disks);
      }
    }
    return;
  }
  // 2. A partition's folder is inside its disk's folder.
  if (root.Exists(folder + "/partition")) {
    CollectDisks(root, DirName(folder), depth + 1, disks);
    return;
  }
  // 3. A whole disk.
  PhysicalDisk disk;
  disk.name = BaseName(folder);
  if (std::optional<int64_t> rotational = root.ReadInteger(folder + "/queue/rotational")) {
    disk.rotational = *rotational != 0;
  }
  bool seen = std::any_of(disks->begin(), disks->end(),
                          [&](const PhysicalDisk& d) { return d.name == disk.name; });
  if (!seen) disks->push_back(disk);
}

struct MountEntry {
  std::string filesystem;  // "ext4"
  std::string source;      // "/dev/sda1"
};

// The mount with device MAJOR:MINOR in /proc/self/mountinfo
// ("36 35 8:1 / /data rw,relatime shared:1 - ext4 /dev/sda1 rw").
MountEntry MountOf(const SystemRoot& root, const std::string& device_number) {
  for (const std::string& line :
       SplitAndTrim(root.ReadText("/proc/self/mountinfo").value_or(""), '\n')) {
    std::vector<std::string> fields = SplitAndTrim(line, ' ');
    size_t separator = std::find(fields.begin(), fields.end(), "-") - fields.begin();
    if (fields.size() > 2 && fields[2] == device_number && separator + 2 < fields.size()) {
      return {fields[separator + 1], fields[separator + 2]};
    }
  }
  return {};
}

}  // namespace

bool StorageInfo::any_rotational() const {
  return std::any_of(disks.begin(), disks.end(),
                     [](const PhysicalDisk& d) { return d.rotational.value_or(false); });
}

StorageInfo ProbeBlockDevice(const SystemRoot& root, unsigned major, unsigned minor) {
  StorageInfo info;
  info.device_number = std::to_string(major) + ":" + std::to_string(minor);
  MountEntry mount = MountOf(root, info.device_number);
  info.filesystem = mount.filesystem;
  std::optional<std::string> folder = root.Resolve("/sys/dev/block/" + info.device_number);
  // File systems on an anonymous device number (btrfs) name their block device as
  // the mount's source (/dev/sda2, or a link such as /dev/mapper/vg-home to ../dm-0).
  if (!folder && mount.source.rfind("/dev/", 0) == 0) {
    std::string device = BaseName(root.Resolve(mount.source).value_or(mount.source));
    folder = root.Resolve("/sys/class/block/" + device);
  }
  if (!folder) return info;
  info.block_device = BaseName(*folder);
  CollectDisks(root, *folder, 0, &info.disks);
  return info;
}

StorageInfo ProbeStorage(const SystemRoot& root, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw IoError(path, "stat", errno);
  return ProbeBlockDevice(root, major(st.st_dev), minor(st.st_dev));
}

ShardList ListShards(const std::string& path) {
  ShardList shards;
  std::vector<std::string> indexes;  // the .idx files present, in shard order
  if (IsStorageFolder(path)) {
    // 1. A folder or prefix: its TFRecord files, their sizes from the listing where it
    // has them (local, s3://, gs://), and which have a .idx beside them.
    std::vector<StorageEntry> entries;
    bool sized = true;
    try {
      entries = ListStorageFolderSizes(path);  // regular files only
    } catch (const InvalidArgument&) {         // http(s): names only
      sized = false;
      for (std::string& name : ListStorageFolder(path)) entries.push_back({std::move(name), 0});
    }
    std::set<std::string> names;
    for (const StorageEntry& e : entries) names.insert(e.name);
    for (const StorageEntry& e : entries) {
      if (!pipeline::HasTfRecordName(e.name)) continue;
      const std::string file = JoinPath(path, e.name);
      shards.files.push_back(file);
      shards.bytes += sized ? e.size : StorageSize(file);
      if (names.count(e.name + ".idx") > 0) indexes.push_back(IndexPathFor(file));
    }
  } else if (StorageExists(path)) {
    shards.files.push_back(path);
    shards.bytes = StorageSize(path);
    if (StorageExists(IndexPathFor(path))) indexes.push_back(IndexPathFor(path));
  }
  shards.with_index = indexes.size();
  uint64_t sampled_bytes = 0, sampled_records = 0;
  size_t sampled = 0;
  // 2. The mean record size from the first index files (read, not asked for again).
  for (const std::string& index : indexes) {
    if (sampled == kIndexFilesSampled) break;
    try {
      for (const IndexEntry& entry : ReadIndexFile(index)) {
        sampled_bytes += entry.size;
        ++sampled_records;
      }
      ++sampled;
    } catch (const Error&) {
      // A broken index does not change the estimate; `imgpipe inspect` reports it.
    }
  }
  if (sampled_records > 0) {
    shards.mean_record_bytes =
        static_cast<double>(sampled_bytes) / static_cast<double>(sampled_records);
  }
  return shards;
}

}  // namespace imgpipe::env
