#!/usr/bin/env bash
# CI step: install a one-node SLURM (Debian 12 packages) so tests/test_slurm.py runs for real.
# Called from .ci/run before pytest; needs root (apt). Without root it only says so and exits 0,
# and tests/test_slurm.py then skips with that reason.
#
# Minimal set: slurm-wlm (slurmctld, slurmd, client tools) + munge. No slurmdbd/MariaDB: the
# cluster runs without accounting and the Snakemake plugin reads job states with squeue
# (tests/slurm/setup-slurm.sh explains the choice). The daemons are started by the test itself
# (tests/slurm/setup-slurm.sh), not here; the postinst's "policy-rc.d denied execution of start"
# is expected and harmless.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
    echo "slurm-setup: not root, SLURM not installed (tests/test_slurm.py will skip)"
    exit 0
fi
if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
        && command -v squeue >/dev/null; then
    echo "slurm-setup: already installed ($(slurmctld -V))"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
[ -f /etc/munge/munge.key ] || mungekey --create
echo "slurm-setup: installed $(slurmctld -V), munge $(dpkg-query -W -f '${Version}' munge)"
