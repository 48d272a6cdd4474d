/* SPDX-License-Identifier: MIT */
/*
 * periodic_stall: a training-shaped loop that stops feeding the GPU every N
 * steps. Each step queues K full-chip kernels (--kernel-ms each); every
 * --every steps the host synchronizes and then spends --stall-ms on CPU work
 * (stands for checkpoint serialization, logging, metrics) or sleeping
 * (--stall sleep: stands for blocking I/O). Utilization is a square wave:
 * the article's first shape, "periodic wave" (the BERT story: checkpoint and
 * log writes every few hundred steps starving the GPU).
 *
 * Options [defaults]: --every N [10], --step-kernels K [5], --kernel-ms X [4],
 * --stall-ms X [150], --stall cpu|sleep [cpu], --seconds S [4].
 * Period = every * step time + stall, about 350 ms by default; the program
 * measures it on the host (interval between stall starts) and prints it as
 * "expect_period_ms".
 *
 * Expected diagnosis (first finding): periodic_wave with period ~=
 * expect_period_ms and ~40% of each period idle; the idle time's cause:
 * host_busy (no thread in CUDA after a sync). Fix: move the periodic work off
 * the training thread / do it less often.
 * Runs ~4.5 s on an H200.
 */
#include "gt_example.h"

#include <unistd.h>

int main(int argc, char **argv)
{
	static const char *const known[] = {"--every",    "--step-kernels", "--kernel-ms",
					    "--stall-ms", "--stall",        "--seconds",
					    NULL};
	gt_check_args(argc, argv, known);
	const int every = (int)gt_arg(argc, argv, "--every", 10);
	const int kper = (int)gt_arg(argc, argv, "--step-kernels", 5);
	const double kms = gt_arg(argc, argv, "--kernel-ms", 4);
	const double stall_ms = gt_arg(argc, argv, "--stall-ms", 150);
	const char *stall = gt_arg_str(argc, argv, "--stall", "cpu");
	const double secs = gt_arg(argc, argv, "--seconds", 4);
	const int use_sleep = !strcmp(stall, "sleep");
	if (every < 1 || kper < 1 || kms <= 0 || stall_ms < 0 || secs <= 0 ||
	    (!use_sleep && strcmp(stall, "cpu"))) {
		fprintf(stderr, "periodic_stall: bad options (--stall cpu|sleep)\n");
		return 2;
	}
	gt_burner b;
	gt_burner_init(&b, 1 << 22, 4 * gt_sm_count(), 256, kms);

	long steps = 0, periods = 0;
	double first_stall = 0, last_stall = 0, stall_sum = 0;
	const double t0 = gt_now();
	while (gt_now() - t0 < secs) {
		gt_burner_launch(&b, kper);
		steps++;
		if (steps % every == 0) {
			CK(cudaStreamSynchronize(b.s));
			const double ts = gt_now();
			if (!periods)
				first_stall = ts;
			last_stall = ts;
			periods++;
			if (use_sleep)
				usleep((useconds_t)(stall_ms * 1e3));
			else
				gt_cpu_work(stall_ms);
			stall_sum += gt_now() - ts;
		}
	}
	CK(cudaStreamSynchronize(b.s));
	const double wall = gt_now() - t0;
	const double period_ms = periods > 1 ? (last_stall - first_stall) * 1e3 / (periods - 1) : 0;

	printf("{\"example\":\"periodic_stall\",\"result\":{\"every\":%d,\"stall\":\"%s\"},"
	       "\"expect_finding\":[\"periodic_stall\"],\"expect_period_ms\":%.1f,"
	       "\"timing\":{\"wall_s\":%.3f,\"steps\":%ld,\"periods\":%ld,\"mean_stall_ms\":%.1f,"
	       "\"idle_share_expected\":%.3f}}\n",
	       every, stall, period_ms, wall, steps, periods,
	       periods ? stall_sum * 1e3 / periods : 0.0,
	       period_ms > 0 ? stall_sum * 1e3 / periods / period_ms : 0.0);
	gt_burner_free(&b);
	return 0;
}
