#!/usr/bin/env bash
# Start a one-node SLURM cluster on localhost (Debian 12 packages slurm-wlm + munge, root, no
# systemd needed). Idempotent: a daemon whose pid file points at a live process is left alone.
# Every daemon this script starts is recorded in $STATE/started (its pid file), and
# teardown-slurm.sh stops exactly those, by PID. Recipe: ../shared/slurm-recipe.md.
#
# Accounting: none (AccountingStorageType=accounting_storage/none). Snakemake's SLURM plugin then
# must read job states with squeue (`slurm-status-command: squeue`, or it hangs forever because
# sacct exists but fails). Chosen over slurmdbd + MariaDB because it is two packages instead of
# four, two daemons fewer on a 2-core CI box, no database state to clean, and the test needs
# nothing sacct adds: MinJobAge=3600 keeps finished jobs in `squeue -t all` for an hour, which is
# the job history the test checks (MinJobAge must be >= 3 x the plugin's
# init-seconds-before-status-checks anyway).
#
# Env: SLURM_CGROUP=1 -> real CPU/memory enforcement via cgroup v1 (jobs then need mem_mb >= 200).
set -euo pipefail
STATE=${MILBENCH_SLURM_STATE:-/run/milbench-slurm}
CONF=/etc/slurm/slurm.conf
[ "$(id -u)" = 0 ] || { echo "setup-slurm: must run as root" >&2; exit 2; }
for b in munged slurmctld slurmd sinfo squeue; do
    command -v "$b" >/dev/null || { echo "setup-slurm: $b missing (run .ci/slurm-setup.sh)" >&2; exit 2; }
done
install -d "$STATE"
touch "$STATE/started"

alive() {  # pid file -> 0 if it names a live, non-zombie process
    [ -s "$1" ] || return 1
    local pid; pid=$(cat "$1")
    [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}
record() { grep -qxF "$1" "$STATE/started" || echo "$1" >> "$STATE/started"; }
wait_pidfile() {  # daemons write their pid file after forking
    for _ in $(seq 100); do alive "$1" && return 0; sleep 0.1; done
    echo "setup-slurm: $2 did not start; see $3" >&2; exit 1
}

# 1. munge
MUNGE_PID=/run/munge/munged.pid
if ! alive "$MUNGE_PID"; then
    [ -f /etc/munge/munge.key ] || mungekey --create
    install -d -o munge -g munge -m 755 /run/munge
    su -s /bin/sh munge -c /usr/sbin/munged
    wait_pidfile "$MUNGE_PID" munged /var/log/munge/munged.log
    record "$MUNGE_PID"
fi
munge -n | unmunge >/dev/null

# 2. slurm.conf (only rewritten while no slurm daemon runs)
CTLD_PID=/run/slurm/slurmctld.pid
SLURMD_PID=/run/slurm/slurmd.pid
install -d -o slurm -g slurm /var/spool/slurmctld /var/log/slurm /run/slurm
install -d /var/spool/slurmd
MARK="# Written by milbench tests/slurm/setup-slurm.sh"
if ! alive "$CTLD_PID" && ! alive "$SLURMD_PID"; then
    # Someone else's config is kept aside and put back by teardown-slurm.sh.
    if [ -f "$CONF" ] && ! grep -qxF "$MARK: one node (this machine) on localhost." "$CONF" \
            && [ ! -f "$STATE/slurm.conf.orig" ]; then
        cp -p "$CONF" "$STATE/slurm.conf.orig"
    fi
    touch "$STATE/wrote-conf"
    CPUS=$(getconf _NPROCESSORS_ONLN)  # not nproc: it honours OMP_NUM_THREADS
    MEM=$(( $(free -m | awk '/^Mem:/ {print $2}') - 2048 ))
    if [ "${SLURM_CGROUP:-0}" = 1 ]; then
        PROCTRACK=proctrack/cgroup; TASK=task/cgroup,task/affinity
        cat > /etc/slurm/cgroup.conf <<CG
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=yes
ConstrainRAMSpace=yes
CG
    else
        PROCTRACK=proctrack/linuxproc; TASK=task/affinity
    fi
    cat > "$CONF" <<CONF
$MARK: one node (this machine) on localhost.
ClusterName=ci
SlurmctldHost=localhost
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=$PROCTRACK
TaskPlugin=$TASK
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without DefMemPerCPU a job that gives no --mem holds the whole node and everything serialises.
DefMemPerCPU=1000
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
# Finished jobs stay visible to "squeue -t all" (the plugin's status source and our history).
MinJobAge=3600
KillWait=5
Waittime=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
fi

# 3. slurmctld, then slurmd (the hostname is not "localhost": -N names the node)
if ! alive "$CTLD_PID"; then
    slurmctld
    wait_pidfile "$CTLD_PID" slurmctld /var/log/slurm/slurmctld.log
    record "$CTLD_PID"
fi
if ! alive "$SLURMD_PID"; then
    slurmd -N localhost
    wait_pidfile "$SLURMD_PID" slurmd /var/log/slurm/slurmd.log
    record "$SLURMD_PID"
fi

# 4. wait for the node (resume it if an earlier run left it down/drained)
for i in $(seq 600); do
    st=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
    case "$st" in
        idle|mix|alloc) break ;;
        down*|drain*|drng*) scontrol update nodename=localhost state=resume 2>/dev/null || true ;;
    esac
    sleep 0.1
done
case "$st" in idle|mix|alloc) ;; *)
    echo "setup-slurm: node state '$st' after 60 s; see /var/log/slurm/slurm{ctld,d}.log" >&2; exit 1 ;;
esac
echo "setup-slurm: node localhost $st ($(sinfo -h -o %c) CPUs); started: $(tr '\n' ' ' < "$STATE/started")"
