/* SPDX-License-Identifier: MIT */
/*
 * The GPM metrics (NVML GPU Performance Monitoring, issue 14) as every
 * output names them: one table in gt_gpm_metric order, and the value of a
 * metric in a raw reading (gt_gpm: hundredths of a percent, bytes/s).
 */
#include "ex_internal.h"

const ex_gpm_def ex_gpm_defs[GT_GPM_COUNT] = {
	[GT_GPM_SM_ACTIVE] = {"SM active", "%", "SM Active"},
	[GT_GPM_SM_OCCUPANCY] = {"SM occupancy", "%", "SM Occupancy"},
	[GT_GPM_TENSOR] = {"tensor pipe", "%", "Tensor"},
	[GT_GPM_FP16] = {"FP16 pipe", "%", "FP16"},
	[GT_GPM_FP32] = {"FP32 pipe", "%", "FP32"},
	[GT_GPM_FP64] = {"FP64 pipe", "%", "FP64"},
	[GT_GPM_DRAM_BW] = {"DRAM bandwidth", "%", "DRAM BW"},
	[GT_GPM_PCIE_RX] = {"PCIe rx", "B/s", "PCIe RX"},
	[GT_GPM_PCIE_TX] = {"PCIe tx", "B/s", "PCIe TX"},
	[GT_GPM_NVLINK_RX] = {"NVLink rx", "B/s", "NVLink RX"},
	[GT_GPM_NVLINK_TX] = {"NVLink tx", "B/s", "NVLink TX"},
};

static double pct(uint32_t v)
{
	return v == UINT32_MAX ? -1 : v / 100.0;
}

static double bps(uint64_t v)
{
	return v == UINT64_MAX ? -1 : (double)v;
}

double ex_gpm_value(const gt_gpm *g, int m)
{
	switch (m) {
	case GT_GPM_SM_ACTIVE: return pct(g->sm_util);
	case GT_GPM_SM_OCCUPANCY: return pct(g->sm_occupancy);
	case GT_GPM_TENSOR: return pct(g->tensor_util);
	case GT_GPM_FP16: return pct(g->fp16_util);
	case GT_GPM_FP32: return pct(g->fp32_util);
	case GT_GPM_FP64: return pct(g->fp64_util);
	case GT_GPM_DRAM_BW: return pct(g->dram_bw_util);
	case GT_GPM_PCIE_RX: return bps(g->pcie_rx_bps);
	case GT_GPM_PCIE_TX: return bps(g->pcie_tx_bps);
	case GT_GPM_NVLINK_RX: return bps(g->nvlink_rx_bps);
	case GT_GPM_NVLINK_TX: return bps(g->nvlink_tx_bps);
	default: return -1;
	}
}
