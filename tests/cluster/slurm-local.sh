#!/usr/bin/env bash
# slurm-local.sh start|stop — a real single-node Slurm on this machine for the cluster tests:
# munge and slurmctld + slurmd from Debian (slurm-wlm, munge) on localhost, with their state
# under $SLURM_LOCAL_DIR (default /tmp/xtts-slurm). Needs root. `start` returns when the node
# is idle (or fails after 60 s); `stop` kills the daemons and removes the state.
set -euo pipefail
D="${SLURM_LOCAL_DIR:-/tmp/xtts-slurm}"
cmd="${1:?usage: slurm-local.sh start|stop}"

stop() {
  for f in slurmd slurmctld munged; do
    [ -f "$D/$f.pid" ] && kill "$(cat "$D/$f.pid")" 2>/dev/null || true
  done
  sleep 1
  pkill -f "slurmd -f $D/" 2>/dev/null || true
  pkill -f "slurmctld -f $D/" 2>/dev/null || true
  rm -rf "$D"
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: slurm-local.sh start|stop" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "slurm-local.sh: needs root" >&2; exit 2; }
command -v slurmctld >/dev/null && command -v munged >/dev/null ||
  { echo "slurm-local.sh: install slurm-wlm and munge first" >&2; exit 2; }
stop
mkdir -p "$D"/{ctld,spool,log,munge}
chmod 700 "$D/munge"
# munge: its own key, socket and pid under $D
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$D/munge/munge.key"
munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" --pid-file="$D/munged.pid" \
       --log-file="$D/log/munged.log" --seed-file="$D/munge/seed" -f
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2/1024) - 512}' /proc/meminfo)
cat > "$D/slurm.conf" <<CONF
ClusterName=xttslocal
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$D/ctld
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=1001
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=60
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$D/slurm.conf"
slurmctld -f "$D/slurm.conf"
slurmd -f "$D/slurm.conf"
for i in $(seq 1 60); do
  state=$(sinfo -h -N -o '%t' 2>/dev/null | head -1 || true)
  case "$state" in idle*|mix*|alloc*) echo "slurm-local: node $host $state (SLURM_CONF=$D/slurm.conf)"; exit 0 ;; esac
  sleep 1
done
echo "slurm-local: the node did not come up in 60 s" >&2
tail -n 20 "$D"/log/*.log >&2 || true
exit 2
