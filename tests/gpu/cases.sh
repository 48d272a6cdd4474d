# SPDX-License-Identifier: MIT
# tests/gpu/cases.sh: the diagnosis suite (issue 5), sourced after lib.sh by
# diagnose_all.sh (full size, ~3-5 s each) and record_traces.sh (small size,
# traces of ~1-2 MB for examples/traces/). Each example prints the finding
# it expects ("expect_finding") itself, so only the commands live here.

# shellcheck disable=SC2034 # used by the scripts that source this file
DIAG_CASES="tiny_kernels small_grid pageable_h2d periodic_stall sync_host_work healthy_compute
tiny_ops eager_mlp item_metric d2h_storm slow_loader periodic_ckpt two_procs two_procs_hidden
healthy_matmul conv_train conv_host gemm_power graph_storm low_occupancy membw nvtx_steps"

# example_cmd NAME full|small: set CMD to the command line of a suite case.
# Returns 1 when the example cannot be built.
example_cmd()
{
	local name=$1 size=$2 b
	local t="examples/torch"
	CMD=()
	case "$name.$size" in
	tiny_kernels.full) b=$(ex_bin tiny_kernels) && CMD=("$b") ;;
	tiny_kernels.small) b=$(ex_bin tiny_kernels) && CMD=("$b" --n 20000 --warmup 100) ;;
	small_grid.full) b=$(ex_bin small_grid) && CMD=("$b") ;;
	small_grid.small) b=$(ex_bin small_grid) && CMD=("$b" --seconds 1) ;;
	pageable_h2d.full) b=$(ex_bin pageable_h2d) && CMD=("$b") ;;
	pageable_h2d.small) b=$(ex_bin pageable_h2d) && CMD=("$b" --seconds 1) ;;
	periodic_stall.full) b=$(ex_bin periodic_stall) && CMD=("$b") ;;
	periodic_stall.small) b=$(ex_bin periodic_stall) && CMD=("$b" --seconds 2) ;;
	sync_host_work.full) b=$(ex_bin sync_host_work) && CMD=("$b") ;;
	sync_host_work.small) b=$(ex_bin sync_host_work) && CMD=("$b" --seconds 1) ;;
	healthy_compute.full) b=$(ex_bin healthy_compute) && CMD=("$b") ;;
	healthy_compute.small) b=$(ex_bin healthy_compute) && CMD=("$b" --seconds 1.5) ;;
	tiny_ops.full) CMD=("$PYTHON" "$t/tiny_ops.py") ;;
	tiny_ops.small) CMD=("$PYTHON" "$t/tiny_ops.py" --seconds 1) ;;
	eager_mlp.full) CMD=("$PYTHON" "$t/eager_mlp.py" --steps 1500) ;;
	eager_mlp.small) CMD=("$PYTHON" "$t/eager_mlp.py" --steps 100) ;;
	item_metric.full) CMD=("$PYTHON" "$t/item_metric.py") ;;
	item_metric.small) CMD=("$PYTHON" "$t/item_metric.py" --seconds 1.5) ;;
	d2h_storm.full) CMD=("$PYTHON" "$t/d2h_storm.py") ;;
	d2h_storm.small) CMD=("$PYTHON" "$t/d2h_storm.py" --seconds 1.5) ;;
	slow_loader.full) CMD=("$PYTHON" "$t/slow_loader.py") ;;
	slow_loader.small) CMD=("$PYTHON" "$t/slow_loader.py" --seconds 1.5) ;;
	periodic_ckpt.full) CMD=("$PYTHON" "$t/periodic_ckpt.py") ;;
	periodic_ckpt.small) CMD=("$PYTHON" "$t/periodic_ckpt.py" --seconds 3 --every 10) ;;
	two_procs.full) CMD=("$PYTHON" "$t/two_procs.py") ;;
	two_procs.small) CMD=("$PYTHON" "$t/two_procs.py" --seconds 1.5) ;;
	two_procs_hidden.full) CMD=("$PYTHON" "$t/two_procs.py" --neighbour-untraced) ;;
	two_procs_hidden.small) CMD=("$PYTHON" "$t/two_procs.py" --neighbour-untraced --seconds 1.5) ;;
	healthy_matmul.full) CMD=("$PYTHON" "$t/healthy_matmul.py") ;;
	healthy_matmul.small) CMD=("$PYTHON" "$t/healthy_matmul.py" --seconds 1.5) ;;
	conv_train.full) CMD=("$PYTHON" "$t/conv_train.py") ;;
	conv_train.small) CMD=("$PYTHON" "$t/conv_train.py" --seconds 1.5) ;;
	low_occupancy.full) b=$(ex_bin low_occupancy) && CMD=("$b") ;;
	low_occupancy.small) b=$(ex_bin low_occupancy) && CMD=("$b" --seconds 1) ;;
	membw.full) CMD=("$PYTHON" "$t/membw.py") ;;
	membw.small) CMD=("$PYTHON" "$t/membw.py" --seconds 2) ;;
	conv_host.full) CMD=("$PYTHON" "$t/conv_train.py" --host-bound) ;;
	conv_host.small) CMD=("$PYTHON" "$t/conv_train.py" --host-bound --seconds 1.5) ;;
	gemm_power.full) CMD=("$PYTHON" "$t/gemm_power.py") ;;
	gemm_power.small) CMD=("$PYTHON" "$t/gemm_power.py" --seconds 3) ;;
	graph_storm.full) CMD=("$PYTHON" "$t/graph_storm.py") ;;
	graph_storm.small) CMD=("$PYTHON" "$t/graph_storm.py" --steps 400) ;;
	nvtx_steps.full) b=$(ex_bin nvtx_steps) && CMD=("$b" --steps 200 --slow-step 150) ;;
	nvtx_steps.small) b=$(ex_bin nvtx_steps) && CMD=("$b") ;;
	*) return 1 ;;
	esac
	[ "${#CMD[@]}" -gt 0 ]
}
