#!/usr/bin/env bash
# A throwaway single-host Slurm cluster for tests (a recipe measured
# on Debian 12's slurm-wlm 22.05: ready in ~1 s). No systemd, no munge (auth/none), root runs the
# jobs; everything lives in DIR.
#
#   scripts/services/slurm.sh start DIR   writes DIR/slurm.conf, starts slurmctld and slurmd fully
#                                          detached (setsid, stdio to DIR/*.stdout) so the caller
#                                          (a ctest fixture) returns, waits until the node is idle;
#                                          a cluster left running in DIR is stopped first
#   scripts/services/slurm.sh stop DIR    `scontrol shutdown`, then SIGKILL to the pids it started
#                                          if they are still there after 10 s
#   scripts/services/slurm.sh env DIR     prints SLURM_CONF=DIR/slurm.conf
#
# Ports: SLURM_CTLD_PORT (default 20000 + 2 * (cksum of DIR's absolute path mod 2000)) and the
# next one for slurmd, so clusters of different build trees on one machine do not clash. A port
# already taken is an error naming it (set SLURM_CTLD_PORT to another).
# Clients (sbatch, squeue, scontrol, convgate batch --slurm) find the cluster through
# SLURM_CONF=DIR/slurm.conf.
set -euo pipefail

usage() { echo "usage: $0 start|stop|env DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
ACTION=$1
mkdir -p "$2"
D=$(cd "$2" && pwd)
export SLURM_CONF=$D/slurm.conf

# Something answers on 127.0.0.1:PORT (bash's /dev/tcp: no iproute2 needed).
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

write_conf() {
  local host=$1 ctld_port=$2 slurmd_port=$3
  # Timing knobs: sched_interval=1 and batch_sched_delay=0 start array tasks ~1 s after
  # submission; MinJobAge=300 keeps finished tasks (and their exit codes) visible to squeue and
  # scontrol for 5 minutes, long enough for a waiting `convgate batch --slurm` to read them.
  cat > "$D/slurm.conf" <<CONF
ClusterName=convgate-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$D/jobcomp.log
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
SchedulerParameters=batch_sched_delay=0,sched_interval=1
MpiDefault=none
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
}

pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

start() {
  for tool in slurmctld slurmd sinfo scontrol; do
    command -v "$tool" >/dev/null || { echo "slurm.sh: $tool not found (install slurm-wlm: scripts/setup.sh)" >&2; exit 3; }
  done
  if [ -f "$D/pids" ]; then
    read -r ctld slurmd < "$D/pids" || true
    # Left running by a test run that was killed before its cleanup: this folder's own cluster.
    if pid_alive "${ctld:-}" || pid_alive "${slurmd:-}"; then
      echo "slurm: stopping the cluster left running in $D (pids ${ctld:-} ${slurmd:-})"
      stop
    fi
  fi
  local hash ctld_port slurmd_port host
  hash=$(printf '%s' "$D" | cksum | cut -d' ' -f1)
  ctld_port=${SLURM_CTLD_PORT:-$((20000 + 2 * (hash % 2000)))}
  slurmd_port=$((ctld_port + 1))
  for port in "$ctld_port" "$slurmd_port"; do
    if port_in_use "$port"; then
      echo "slurm.sh: port $port is in use; set SLURM_CTLD_PORT to a free pair" >&2
      exit 3
    fi
  done
  host=$(hostname -s)
  rm -rf "$D/state" "$D/spool"
  mkdir -p "$D/state" "$D/spool"
  write_conf "$host" "$ctld_port" "$slurmd_port"
  # setsid and stdio to files: the daemons must not hold the caller's pipes open (ctest waits
  # for them) nor die with its session.
  setsid slurmctld -D -c -i < /dev/null > "$D/slurmctld.stdout" 2>&1 &
  local ctld=$!
  setsid slurmd -D -c < /dev/null > "$D/slurmd.stdout" 2>&1 &
  local slurmd=$!
  echo "$ctld $slurmd" > "$D/pids"
  # A generous deadline: on a loaded machine the daemons take far longer than the usual second.
  local state="" deadline=$((SECONDS + 120))
  while (( SECONDS < deadline )); do
    state=$(sinfo -h -N -o %t 2>/dev/null || true)
    [ "$state" = idle ] && { echo "slurm: ready in $D (ports $ctld_port/$slurmd_port, SLURM_CONF=$SLURM_CONF)"; return; }
    if ! pid_alive "$ctld" || ! pid_alive "$slurmd"; then break; fi
    sleep 0.1
  done
  echo "slurm.sh: waited up to 120 s for the node of the cluster in $D to be idle (state '${state}'); logs:" >&2
  tail -n 20 "$D/slurmctld.log" "$D/slurmd.log" "$D"/*.stdout >&2 2>/dev/null || true
  stop
  exit 3
}

stop() {
  [ -f "$D/pids" ] || { echo "slurm: nothing running in $D"; return; }
  local ctld slurmd
  read -r ctld slurmd < "$D/pids" || true
  scontrol shutdown >/dev/null 2>&1 || true
  for _ in $(seq 1 100); do
    pid_alive "${ctld:-}" || pid_alive "${slurmd:-}" || break
    sleep 0.1
  done
  # Only the daemons this script started, by pid.
  for pid in ${ctld:-} ${slurmd:-}; do
    if pid_alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  rm -f "$D/pids"
  echo "slurm: stopped in $D"
}

case "$ACTION" in
  start) start ;;
  stop) stop ;;
  env) echo "SLURM_CONF=$SLURM_CONF" ;;
  *) usage ;;
esac
