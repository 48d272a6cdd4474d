#!/bin/sh
# SPDX-License-Identifier: MIT
# Slurm TaskProlog: every task of every job on the node runs with gaptrace
# injected, dormant (slurm.conf: TaskProlog=/etc/slurm/gaptrace-task-prolog.sh).
# Slurm reads the task's environment from the "export NAME=value" lines this
# prints. The collector labels the GPU series with hpc_job from the task's
# SLURM_JOB_ID.
#
# Jobs run as their submitters: the node's collector takes them all with
# --producers any (gaptrace-collector.service); without it only the jobs of
# the collector's user are traced and the others run normally, untraced.
echo "export CUDA_INJECTION64_PATH=/usr/local/lib/gaptrace/libgaptrace_inject.so"
echo "export GAPTRACE_DORMANT=1"
echo "export GAPTRACE_SOCKET=/run/gaptrace/collector.sock"
