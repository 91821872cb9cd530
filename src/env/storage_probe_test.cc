#include "env/storage_probe.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "env/env_test_util.h"
#include "record/index.h"
#include "util/error.h"

namespace imgpipe::env {
namespace {

// sysfs as the kernel lays it out: /sys/dev/block/MAJ:MIN and /sys/class/block/NAME
// link into /sys/devices, partitions are folders inside their disk's folder.
void AddSataDisk(FakeSystemTree& tree, bool rotational) {
  std::string disk =
      "/sys/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda";
  tree.Write(disk + "/queue/rotational", rotational ? "1\n" : "0\n");
  tree.Write(disk + "/sda1/partition", "1\n");
  tree.Write(disk + "/sda2/partition", "2\n");
  tree.Link("/sys/dev/block/8:0",
            "../../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda");
  tree.Link("/sys/dev/block/8:1",
            "../../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1");
  tree.Link("/sys/dev/block/8:2",
            "../../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda2");
}

void AddNvmeDisk(FakeSystemTree& tree) {
  std::string disk = "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1";
  tree.Write(disk + "/queue/rotational", "0\n");
  tree.Write(disk + "/nvme0n1p1/partition", "1\n");
  tree.Link("/sys/dev/block/259:1",
            "../../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1/nvme0n1p1");
  tree.Link("/sys/class/block/nvme0n1p1",
            "../../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1/nvme0n1p1");
}

TEST(StorageProbeTest, APartitionLeadsToItsRotationalDisk) {
  FakeSystemTree tree("partition");
  AddSataDisk(tree, /*rotational=*/true);
  tree.Write("/proc/self/mountinfo", "29 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
  StorageInfo info = ProbeBlockDevice(SystemRoot(tree.root()), 8, 1);
  EXPECT_EQ(info.device_number, "8:1");
  EXPECT_EQ(info.block_device, "sda1");
  EXPECT_EQ(info.filesystem, "ext4");
  ASSERT_EQ(info.disks.size(), 1u);
  EXPECT_EQ(info.disks[0].name, "sda");
  EXPECT_EQ(info.disks[0].rotational, true);
  EXPECT_TRUE(info.any_rotational());
}

TEST(StorageProbeTest, AWholeNonRotationalDisk) {
  FakeSystemTree tree("whole_disk");
  AddSataDisk(tree, /*rotational=*/false);
  StorageInfo info = ProbeBlockDevice(SystemRoot(tree.root()), 8, 0);
  EXPECT_EQ(info.block_device, "sda");
  ASSERT_EQ(info.disks.size(), 1u);
  EXPECT_EQ(info.disks[0].rotational, false);
  EXPECT_FALSE(info.any_rotational());
}

TEST(StorageProbeTest, DeviceMapperFollowsItsSlavesToEveryDisk) {
  FakeSystemTree tree("device_mapper");
  AddSataDisk(tree, /*rotational=*/true);
  AddNvmeDisk(tree);
  // An LVM volume over sda2 and nvme0n1p1.
  tree.Write("/sys/devices/virtual/block/dm-0/dm/name", "vg-data\n");
  tree.Write("/sys/devices/virtual/block/dm-0/queue/rotational", "0\n");  // dm's own claim
  tree.Link("/sys/devices/virtual/block/dm-0/slaves/sda2",
            "../../../../pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda2");
  tree.Link("/sys/devices/virtual/block/dm-0/slaves/nvme0n1p1",
            "../../../../pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1/nvme0n1p1");
  tree.Link("/sys/dev/block/253:0", "../../devices/virtual/block/dm-0");
  StorageInfo info = ProbeBlockDevice(SystemRoot(tree.root()), 253, 0);
  EXPECT_EQ(info.block_device, "dm-0");
  ASSERT_EQ(info.disks.size(), 2u);
  EXPECT_EQ(info.disks[0].name, "nvme0n1");
  EXPECT_EQ(info.disks[0].rotational, false);
  EXPECT_EQ(info.disks[1].name, "sda");
  EXPECT_TRUE(info.any_rotational());
}

TEST(StorageProbeTest, AnonymousDeviceUsesTheMountSourceOrHasNoDisk) {
  FakeSystemTree tree("anonymous");
  AddNvmeDisk(tree);
  tree.Write("/proc/self/mountinfo",
             "30 1 0:45 / /home rw,relatime shared:2 - btrfs /dev/nvme0n1p1 rw,ssd\n"
             "31 1 0:46 / /data rw,relatime shared:3 - nfs4 server:/export rw\n");
  StorageInfo btrfs = ProbeBlockDevice(SystemRoot(tree.root()), 0, 45);
  EXPECT_EQ(btrfs.filesystem, "btrfs");
  EXPECT_EQ(btrfs.block_device, "nvme0n1p1");
  ASSERT_EQ(btrfs.disks.size(), 1u);
  EXPECT_EQ(btrfs.disks[0].name, "nvme0n1");
  StorageInfo nfs = ProbeBlockDevice(SystemRoot(tree.root()), 0, 46);
  EXPECT_EQ(nfs.filesystem, "nfs4");
  EXPECT_EQ(nfs.block_device, "");
  EXPECT_TRUE(nfs.disks.empty());
}

TEST(StorageProbeTest, ListsShardsAndMeasuresRecordsFromIndexFiles) {
  FakeSystemTree tree("shards");
  std::string dir = JoinPath(tree.root(), "data");
  MakeDirectories(dir);
  for (std::string name : {"train-00000-of-00003.tfrecord", "train-00001-of-00003.tfrecord",
                           "train-00002-of-00003.tfrecord", "train-00003-of-00003.tfrecord.tmp"}) {
    WriteFileAtomic(JoinPath(dir, name), std::string(1000, 'x'), false);
  }
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "cat\ndog\n", false);
  WriteIndexFile(JoinPath(dir, "train-00000-of-00003.tfrecord.idx"), {{0, 100}, {100, 300}});
  WriteIndexFile(JoinPath(dir, "train-00001-of-00003.tfrecord.idx"), {{0, 200}});
  ShardList shards = ListShards(dir);
  EXPECT_EQ(shards.files.size(), 3u);
  EXPECT_EQ(shards.with_index, 2u);
  EXPECT_EQ(shards.bytes, 3000u);
  ASSERT_TRUE(shards.mean_record_bytes.has_value());
  EXPECT_DOUBLE_EQ(*shards.mean_record_bytes, 200.0);
  EXPECT_EQ(ListShards(JoinPath(dir, "train-00001-of-00003.tfrecord")).files.size(), 1u);
  EXPECT_TRUE(ListShards(JoinPath(dir, "missing")).files.empty());
}

TEST(StorageProbeTest, ThisMachinesTempFolder) {
  std::string path = ::testing::TempDir();
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  StorageInfo info = ProbeStorage(SystemRoot(), path);
  EXPECT_EQ(info.device_number,
            std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)));
  // Whatever the machine: a block device has disks below it, and the rest has none.
  EXPECT_EQ(info.block_device.empty(), info.disks.empty()) << info.block_device;
  EXPECT_THROW(ProbeStorage(SystemRoot(), JoinPath(path, "no/such/path")), IoError);
}

}  // namespace
}  // namespace imgpipe::env
