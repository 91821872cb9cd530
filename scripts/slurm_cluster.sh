#!/usr/bin/env bash
# A real single-node Slurm cluster inside one folder, for the tests of the examples/slurm
# templates (src/cli/slurm_cli_test.py) and for trying them by hand. munged, slurmctld and
# slurmd run as background processes with their own munge key and socket, slurm.conf,
# state, spool, logs and free TCP ports, all in DIR; nothing under /etc is read or written.
#   scripts/slurm_cluster.sh start DIR   installs slurm-wlm and munge (apt-get) if missing,
#                                        starts the three daemons, waits until the node is
#                                        idle and prints `export SLURM_CONF=DIR/slurm.conf`
#                                        (also in DIR/env); a running cluster is left as is
#   scripts/slurm_cluster.sh stop DIR    cancels the cluster's jobs, then stops exactly the
#                                        daemons that start recorded in DIR/pids, and waits
#   scripts/slurm_cluster.sh status DIR  exit 0 when the cluster in DIR runs
# Exit status 77 (CTest's skip) when this machine cannot run a cluster: not root (slurmd
# starts jobs as their user), or Slurm missing and no apt-get to install it. Any other
# failure exits 1 after printing the daemons' logs, with nothing left running.
# The node: NodeName=localhost, CPUs=$(nproc), RealMemory as slurmd measures it, one
# partition "debug" (Default=YES); select/cons_tres with CR_Core, no accounting, no
# cgroups (proctrack/linuxproc, task/none); finished jobs stay visible for 300 s.
set -euo pipefail

usage() { echo "usage: $0 start|stop|status DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
conf="$dir/slurm.conf"
pids="$dir/pids"
export SLURM_CONF="$conf"

# Exit 77 with the reason, also kept in DIR/unavailable for the tests to print.
skip() {
  echo "slurm_cluster: SKIP: $*" >&2
  echo "$*" >"$dir/unavailable"
  exit 77
}
say() { echo "slurm_cluster: $*" >&2; }

# Whether pid $1 runs and its command line mentions this cluster's folder (so a reused
# pid is never taken for ours); a zombie counts as gone.
ours() {
  local pid=$1
  [ -r "/proc/$pid/cmdline" ] || return 1
  [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
  { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF "$dir/"
}

# Every recorded daemon runs (else the gone ones are named on stderr with --say).
running() {
  [ -f "$pids" ] || return 1
  local name pid ok=0
  while read -r name pid; do
    ours "$pid" && continue
    ok=1
    [ "${1:-}" = --say ] && say "$name (pid $pid) exited"
  done <"$pids"
  return $ok
}

print_logs() {
  local f
  for f in "$dir"/log/*; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

# SIGTERM, up to 20 s, then SIGKILL, for each recorded daemon (slurmd first).
stop_daemons() {
  [ -f "$pids" ] || return 0
  local name pid i
  for name in slurmd slurmctld munged; do
    pid=$(awk -v n="$name" '$1 == n {print $2}' "$pids")
    if [ -z "$pid" ] || ! ours "$pid"; then continue; fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do ours "$pid" || break; sleep 0.1; done
    if ours "$pid"; then
      say "$name (pid $pid) ignored SIGTERM for 20 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do ours "$pid" || break; sleep 0.1; done
    fi
  done
  rm -f "$pids"
}

# Cancels every job of this cluster and waits (up to 60 s) until none runs, so that no
# slurmstepd outlives slurmd.
cancel_jobs() {
  local jobs i
  jobs=$(squeue -h -o %A 2>/dev/null) || return 0
  [ -n "$jobs" ] || return 0
  # shellcheck disable=SC2086
  scancel $jobs 2>/dev/null || true
  for ((i = 0; i < 120; i++)); do
    [ -z "$(squeue -h -t RUNNING,COMPLETING,CONFIGURING -o %A 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  say "jobs still running after scancel: $(squeue -h -o '%A %T' | tr '\n' ' ')"
}

# A TCP port no socket of this machine uses now (from /proc/net/tcp*), other than $1,
# below the kernel's ephemeral range (32768-60999) so no outgoing connection takes it.
free_port() {
  local port hex i
  for ((i = 0; i < 1000; i++)); do
    port=$((20000 + RANDOM % 12000))
    [ "$port" = "${1:-}" ] && continue
    hex=$(printf ':%04X ' "$port")
    if ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '{print $2 " " $3}' | grep -qF "$hex"; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

install_slurm() {
  local tools=(munged mungekey slurmctld slurmd sbatch srun squeue sinfo scontrol scancel)
  local missing=0 t
  for t in "${tools[@]}"; do command -v "$t" >/dev/null 2>&1 || missing=1; done
  [ "$missing" -eq 1 ] || return 0
  command -v apt-get >/dev/null 2>&1 || skip "Slurm or munge is not installed and there is no apt-get to install them (install slurm-wlm and munge)"
  say "installing slurm-wlm and munge with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends slurm-wlm munge >&2; then
    apt-get update -q >&2 || skip "apt-get update failed: cannot install slurm-wlm and munge"
    apt-get install -y -q --no-install-recommends slurm-wlm munge >&2 ||
      skip "apt-get install slurm-wlm munge failed"
  fi
  for t in "${tools[@]}"; do
    command -v "$t" >/dev/null 2>&1 || skip "$t is still missing after installing slurm-wlm and munge"
  done
}

write_conf() {
  local ctld_port slurmd_port cpus memory
  ctld_port=$(free_port) || { say "no free TCP port"; return 1; }
  slurmd_port=$(free_port "$ctld_port") || { say "no free TCP port"; return 1; }
  cpus=$(nproc)
  # slurmd drains a node whose configured memory exceeds what it measures: take its own.
  memory=$(slurmd -C 2>/dev/null | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' | head -n1)
  [ -n "$memory" ] || memory=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024))
  cat >"$conf" <<EOF
# Written by scripts/slurm_cluster.sh: a one-node test cluster; everything lives in
# $dir.
ClusterName=imgpipe-test
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
MailProg=/bin/true
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

# Starts "$@" in its own session, detached from this shell's output, and records its pid
# under `name` ($1).
launch() {
  local name=$1
  shift
  setsid "$@" </dev/null >>"$dir/log/$name.out" 2>&1 &
  echo "$name $!" >>"$pids"
}

# Waits up to $1 seconds for `check` ($2...) to succeed while every daemon runs.
wait_for() {
  local seconds=$1 i
  shift
  for ((i = 0; i < seconds * 5; i++)); do
    "$@" && return 0
    running --say || return 1
    sleep 0.2
  done
  say "timed out after ${seconds} s waiting for: $*"
  return 1
}

munge_works() {
  [ -S "$dir/munge/munge.socket" ] && munge -S "$dir/munge/munge.socket" -n 2>/dev/null |
    unmunge -S "$dir/munge/munge.socket" >/dev/null 2>&1
}

node_idle() {
  [ "$(sinfo -h -N -n localhost -o %t 2>/dev/null)" = idle ]
}

fail_start() {
  say "start failed; the daemons' logs:"
  print_logs
  stop_daemons
  exit 1
}

start() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (slurmd runs each job as its user; SlurmUser=root)"
  rm -f "$dir/unavailable"
  if running; then
    say "already running"
    cat "$dir/env"
    return 0
  fi
  stop_daemons  # what is left of an earlier, half-stopped cluster
  rm -f "$dir/env"
  install_slurm
  rm -rf "$dir/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/munge"
  mkdir -p "$dir/state" "$dir/spool" "$dir/run" "$dir/log"
  mkdir -m 0755 "$dir/munge"
  rm -f "$pids"
  touch "$pids"
  mungekey --create --keyfile="$dir/munge/munge.key" 2>"$dir/log/mungekey.out" ||
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  write_conf || fail_start

  # 1. munged (--force: the test folder's parents may be group- or world-writable).
  launch munged munged --foreground --force --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/run/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
  wait_for 20 munge_works || fail_start
  # 2. slurmctld and slurmd, in the foreground of their own sessions.
  launch slurmctld slurmctld -D -i -f "$conf"
  launch slurmd slurmd -D -N localhost -f "$conf"
  # 3. The node registered and idle.
  wait_for 60 node_idle || fail_start
  echo "export SLURM_CONF=$conf" >"$dir/env"
  say "cluster up: $(sinfo -h -o '%P %D node(s), %c CPUs, %m MB, state %t')"
  echo "export SLURM_CONF=$conf"
}

stop() {
  if [ -f "$pids" ] && running; then cancel_jobs; fi
  stop_daemons
  rm -f "$dir/env"
  say "stopped"
}

case "$action" in
  start) start ;;
  stop) stop ;;
  status) running ;;
  *) usage ;;
esac
