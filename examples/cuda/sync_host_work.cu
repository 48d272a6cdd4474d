/* SPDX-License-Identifier: MIT */
/*
 * sync_host_work: the host waits for the GPU every step, then does CPU work
 * before it queues the next step, so the GPU sits idle for the whole CPU
 * part. The C twin of examples/torch/item_metric.py (loss.item() followed by
 * a Python-side metric): the article's section 3.2 story, a ~120 ms CPU gap
 * per iteration after loss.item().
 *
 * Per step: K [4] full-chip kernels of --kernel-ms [2.5] each (~10 ms of GPU
 * work), cudaStreamSynchronize, then --host-ms [10] of CPU work.
 * Options [defaults]: --step-kernels K [4], --kernel-ms X [2.5],
 * --host-ms X [10], --seconds S [3].
 *
 * Expected diagnosis (first finding): sync_turnaround: ~50% of wall time the
 * GPU is idle right after a synchronize returned, with the thread outside
 * CUDA (host_busy is the neighbouring class). Fix: don't synchronize every
 * step / compute the metric every N steps or off-thread.
 * Runs ~3.5 s on an H200.
 */
#include "gt_example.h"

int main(int argc, char **argv)
{
	static const char *const known[] = {"--step-kernels", "--kernel-ms", "--host-ms",
					    "--seconds", NULL};
	gt_check_args(argc, argv, known);
	const int kper = (int)gt_arg(argc, argv, "--step-kernels", 4);
	const double kms = gt_arg(argc, argv, "--kernel-ms", 2.5);
	const double hms = gt_arg(argc, argv, "--host-ms", 10);
	const double secs = gt_arg(argc, argv, "--seconds", 3);
	if (kper < 1 || kms <= 0 || hms < 0 || secs <= 0) {
		fprintf(stderr, "sync_host_work: bad options\n");
		return 2;
	}
	gt_burner b;
	gt_burner_init(&b, 1 << 22, 4 * gt_sm_count(), 256, kms);

	long steps = 0;
	double host_s = 0;
	const double t0 = gt_now();
	while (gt_now() - t0 < secs) {
		gt_burner_launch(&b, kper);
		CK(cudaStreamSynchronize(b.s));
		const double h0 = gt_now();
		gt_cpu_work(hms);
		host_s += gt_now() - h0;
		steps++;
	}
	const double wall = gt_now() - t0;

	printf("{\"example\":\"sync_host_work\",\"result\":{\"step_kernels\":%d},"
	       "\"expect_finding\":[\"sync_turnaround\",\"host_busy\"],"
	       "\"timing\":{\"wall_s\":%.3f,\"steps\":%ld,\"host_share\":%.3f}}\n",
	       kper, wall, steps, host_s / wall);
	gt_burner_free(&b);
	return 0;
}
