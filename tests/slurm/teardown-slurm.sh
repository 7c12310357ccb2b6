#!/usr/bin/env bash
# Stop the daemons that setup-slurm.sh started (listed by pid file in $STATE/started), in reverse
# start order, by PID only (never by process name); wait for each to exit (SIGKILL after 30 s).
# Daemons that were already running before setup are not in the list and are left alone.
# Stopped daemons may linger as <defunct> zombies where PID 1 does not reap them: harmless.
# Then the slurm.conf that setup wrote is removed (a config found before setup is put back):
# with a slurm.conf naming a controller that is down, `scontrol show config` waits ~9 s, and
# snakemake-executor-plugin-slurm runs it at import, i.e. in EVERY `snakemake` call, local ones
# included; without a slurm.conf it fails in milliseconds.
set -uo pipefail
STATE=${MILBENCH_SLURM_STATE:-/run/milbench-slurm}
if [ ! -f "$STATE/started" ] && [ ! -f "$STATE/wrote-conf" ]; then
    echo "teardown-slurm: nothing recorded in $STATE"; exit 0
fi
touch "$STATE/started"
running() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
tac "$STATE/started" | while read -r pidfile; do
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    if running "$pid"; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 300); do running "$pid" || break; sleep 0.1; done
        running "$pid" && kill -KILL "$pid" 2>/dev/null
        echo "teardown-slurm: stopped $(basename "$pidfile" .pid) (pid $pid)"
    fi
    rm -f "$pidfile"
done
rm -f "$STATE/started"
if [ -f "$STATE/wrote-conf" ]; then
    if [ -f "$STATE/slurm.conf.orig" ]; then
        mv -f "$STATE/slurm.conf.orig" /etc/slurm/slurm.conf
    else
        rm -f /etc/slurm/slurm.conf
    fi
    rm -f "$STATE/wrote-conf"
    echo "teardown-slurm: removed the slurm.conf written by setup-slurm.sh"
fi
