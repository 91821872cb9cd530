// Where the training data lives: the disks below its file system (rotational or solid
// state, through partitions, device-mapper and md RAID), and its TFRecord shards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "env/system_root.h"

namespace imgpipe::env {

struct PhysicalDisk {
  std::string name;                // "sda", "nvme0n1"
  std::optional<bool> rotational;  // /sys/block/NAME/queue/rotational; nullopt: unknown
};

struct StorageInfo {
  std::string device_number;        // "MAJOR:MINOR" of the file system
  std::string block_device;         // "sda1", "dm-0"; "": no block device (network, overlay, tmpfs)
  std::vector<PhysicalDisk> disks;  // the whole disks below block_device
  std::string filesystem;           // from /proc/self/mountinfo ("ext4", "nfs4"); "": unknown

  bool any_rotational() const;
};

// The disks below block device MAJOR:MINOR: /sys/dev/block/MAJOR:MINOR, a partition's
// parent disk, and the slaves of device-mapper (LVM, dm-crypt) and md devices.
StorageInfo ProbeBlockDevice(const SystemRoot& root, unsigned major, unsigned minor);
// ProbeBlockDevice for the device of `path` (stat(2) of the real path; its device is
// then looked up below `root`). Throws IoError when `path` cannot be stat'ed.
StorageInfo ProbeStorage(const SystemRoot& root, const std::string& path);

struct ShardList {
  std::vector<std::string> files;  // TFRecord files: `path` itself, or those in the folder
  size_t with_index = 0;           // how many have a .idx file
  uint64_t bytes = 0;              // their total size
  // Mean record size from up to 8 of the index files; nullopt without index files.
  std::optional<double> mean_record_bytes;
};
// The TFRecord shards of `path`: a file, or a folder's files with TFRecord names
// (pipeline::HasTfRecordName: not recursive, index and temporary files left out).
ShardList ListShards(const std::string& path);

}  // namespace imgpipe::env
