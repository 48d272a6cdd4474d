/* SPDX-License-Identifier: MIT */
/*
 * pageable_h2d: an inference-shaped request loop. Per request: copy the input
 * (--mb [16] MiB, e.g. a batch of images) host->device, run the "model"
 * (a gt_burn kernel over the whole chip, --kernel-ms [0.3]), copy the small
 * output (4 KiB of logits) back, synchronize, answer. With --mode pageable
 * [default] the input lives in malloc()ed memory, so every request pays a
 * staged pageable copy that runs at a fraction of the link's bandwidth; with
 * --mode pinned the same loop uses cudaMallocHost memory (the fix).
 * The article's section 3.4: per-request H2D dominating inference.
 *
 * Options [defaults]: --mode pageable|pinned, --mb X [16], --kernel-ms X [0.3],
 * --seconds S [3] (or --requests N: a fixed count).
 *
 * Expected diagnosis (first finding) with --mode pageable: transfer, pageable
 * H2D copies (share of wall time in HtoD from pageable memory, achieved GB/s
 * well below the pinned rate); fix: pinned (page-locked) buffers, batching.
 * Runs ~3.5 s on an H200.
 */
#include "gt_example.h"

int main(int argc, char **argv)
{
	static const char *const known[] = {"--mode", "--mb", "--kernel-ms", "--seconds",
					    "--requests", NULL};
	gt_check_args(argc, argv, known);
	const char *mode = gt_arg_str(argc, argv, "--mode", "pageable");
	const double mb = gt_arg(argc, argv, "--mb", 16);
	const double kms = gt_arg(argc, argv, "--kernel-ms", 0.3);
	const double secs = gt_arg(argc, argv, "--seconds", 3);
	const long fixed = (long)gt_arg(argc, argv, "--requests", 0);
	const int pinned = !strcmp(mode, "pinned");
	if ((!pinned && strcmp(mode, "pageable")) || mb <= 0 || kms <= 0 || secs <= 0) {
		fprintf(stderr, "pageable_h2d: bad options (--mode pageable|pinned)\n");
		return 2;
	}
	const size_t in_bytes = (size_t)(mb * 1024 * 1024) & ~(size_t)15;
	const int n = (int)(in_bytes / sizeof(float));
	const size_t out_bytes = 4096;
	const int sms = gt_sm_count();

	float *h_in, *h_out, *d_in;
	if (pinned) {
		CK(cudaMallocHost(&h_in, in_bytes));
		CK(cudaMallocHost(&h_out, out_bytes));
	} else {
		h_in = (float *)malloc(in_bytes);
		h_out = (float *)malloc(out_bytes);
		if (!h_in || !h_out) {
			fprintf(stderr, "pageable_h2d: out of host memory\n");
			return 1;
		}
	}
	for (int i = 0; i < n; i++)
		h_in[i] = (float)(i % 255) / 255.0f;
	CK(cudaMalloc(&d_in, in_bytes));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMemcpy(d_in, h_in, in_bytes, cudaMemcpyHostToDevice));
	const int iters = gt_calibrate_burn(d_in, n, 4 * sms, 256, kms, s, NULL);

	long req = 0;
	double lat_sum = 0, lat_max = 0;
	const double t0 = gt_now();
	for (;;) {
		if (fixed ? req >= fixed : gt_now() - t0 >= secs)
			break;
		const double r0 = gt_now();
		h_in[0] = (float)(req % 7); /* a new request's input */
		CK(cudaMemcpyAsync(d_in, h_in, in_bytes, cudaMemcpyHostToDevice, s));
		gt_burn<<<4 * sms, 256, 0, s>>>(d_in, n, iters);
		CK(cudaMemcpyAsync(h_out, d_in, out_bytes, cudaMemcpyDeviceToHost, s));
		CK(cudaStreamSynchronize(s));
		const double lat = gt_now() - r0;
		lat_sum += lat;
		lat_max = lat > lat_max ? lat : lat_max;
		req++;
	}
	const double wall = gt_now() - t0;
	CK(cudaGetLastError());

	printf("{\"example\":\"pageable_h2d\",\"result\":{\"mode\":\"%s\",\"input_bytes\":%zu},"
	       "\"expect_finding\":%s,\"expect_site\":%s,"
	       "\"timing\":{\"wall_s\":%.3f,\"requests\":%ld,\"requests_per_s\":%.1f,"
	       "\"mean_latency_ms\":%.3f,\"max_latency_ms\":%.3f,\"h2d_gb_per_s_upper\":%.2f}}\n",
	       mode, in_bytes, pinned ? "null" : "[\"pageable_copies\",\"transfer_bound\"]",
	       /* with host stacks (gaptrace run --stacks): the copies are called here */
	       pinned ? "null" : "{\"finding\":\"pageable_copies\",\"function\":\"main\"}", wall, req,
	       req / wall, req ? lat_sum * 1e3 / req : 0.0, lat_max * 1e3,
	       req ? (double)in_bytes * req / wall / 1e9 : 0.0);
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d_in));
	if (pinned) {
		CK(cudaFreeHost(h_in));
		CK(cudaFreeHost(h_out));
	} else {
		free(h_in);
		free(h_out);
	}
	return 0;
}
