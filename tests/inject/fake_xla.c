/* SPDX-License-Identifier: MIT */
/*
 * fake_xla.c - built as "xla_cuda_plugin.so" (tests/inject.cmake), the name
 * of JAX's CUDA plugin: test_inject loads it before cuInit to be a process
 * that runs XLA (inject.c, latency_policy). It does nothing.
 */
int gt_fake_xla_plugin(void);

int gt_fake_xla_plugin(void)
{
	return 0;
}
