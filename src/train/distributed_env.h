// Where a process stands in a data-parallel job, from its launcher's variables (without
// libtorch: the CLI includes it).
#pragma once

#include <string>

namespace imgpipe::train {

// Where this process stands in a job, as launchers tell it.
struct DistributedEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // processes on this machine (they share its cores)
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;

  // Reads torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
  // MASTER_ADDR, MASTER_PORT), else Slurm's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
  // SLURM_NTASKS_PER_NODE) or Open MPI's (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK,
  // _LOCAL_SIZE), else a single process. Throws
  // std::invalid_argument naming the variable when a value is malformed or inconsistent.
  static DistributedEnv FromEnvironment();
};

}  // namespace imgpipe::train
