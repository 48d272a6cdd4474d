/* SPDX-License-Identifier: MIT */
/*
 * The column schema of every record type: the single source of truth from
 * which the writer's encoders and the reader's decoders are generated.
 * FORMAT.md's field tables list the same columns in the same order; a test
 * (test_format.c, "schema_matches_spec") compares the two.
 *
 * GT_COLS_<TYPE>(X, T) calls X(T, kind, field, codec) once per column, in
 * wire order. kind is
 *   U     an unsigned integer field of the record struct
 *   STR   gt_string.str/len (a BYTES column)
 *   UUID  a uint8_t[16] field (a BYTES column of 16-byte values)
 *   NAME  a char[GT_DEVICE_NAME_MAX] field (a BYTES column, < 96 bytes)
 *   BID   a uint8_t[GT_BUILD_ID_MAX] field and its length, field_len (a
 *         BYTES column, <= 64 bytes)
 * codec is the writer's default codec (CONST is chosen automatically when
 * all rows of a block are equal). REL columns are relative to column 0 and
 * only used on 64-bit fields (reader.c asserts it), so a reader can check
 * every value's range while validating a frame, before it returns a record.
 *
 * Columns are only ever appended (FORMAT.md, "Evolution").
 */
#ifndef GT_SCHEMA_H
#define GT_SCHEMA_H

#include <stdint.h>

#include "gt_internal.h"

#define GT_COLS_STRING(X, T) \
	X(T, U, id, DELTA)   \
	X(T, STR, str, BYTES)

#define GT_COLS_DEVICE(X, T)                  \
	X(T, U, id, PLAIN)                    \
	X(T, UUID, uuid, BYTES)               \
	X(T, NAME, name, BYTES)               \
	X(T, U, cc_major, PLAIN)              \
	X(T, U, cc_minor, PLAIN)              \
	X(T, U, sm_count, PLAIN)              \
	X(T, U, core_clock_khz, PLAIN)        \
	X(T, U, mem_clock_khz, PLAIN)         \
	X(T, U, mem_bus_width_bits, PLAIN)    \
	X(T, U, global_mem_bytes, PLAIN)      \
	X(T, U, l2_bytes, PLAIN)              \
	X(T, U, max_threads_per_sm, PLAIN)    \
	X(T, U, max_blocks_per_sm, PLAIN)     \
	X(T, U, max_regs_per_sm, PLAIN)       \
	X(T, U, max_regs_per_block, PLAIN)    \
	X(T, U, max_smem_per_sm, PLAIN)       \
	X(T, U, max_smem_per_block, PLAIN)    \
	X(T, U, max_threads_per_block, PLAIN) \
	X(T, U, warp_size, PLAIN)             \
	X(T, U, pci_domain, PLAIN)            \
	X(T, U, pci_bus, PLAIN)               \
	X(T, U, pci_device, PLAIN)

#define GT_COLS_CONTEXT(X, T)     \
	X(T, U, id, PLAIN)        \
	X(T, U, device_id, PLAIN) \
	X(T, U, null_stream_id, PLAIN)

#define GT_COLS_PROCESS(X, T)    \
	X(T, U, pid, PLAIN)      \
	X(T, U, ppid, PLAIN)     \
	X(T, U, start_ns, PLAIN) \
	X(T, U, exe_id, PLAIN)   \
	X(T, U, cmdline_id, PLAIN)

#define GT_COLS_THREAD(X, T) \
	X(T, U, ts, DELTA)   \
	X(T, U, pid, PLAIN)  \
	X(T, U, tid, PLAIN)  \
	X(T, U, name_id, PLAIN)

#define GT_COLS_CLOCK(X, T)       \
	X(T, U, trace_ns, DELTA)  \
	X(T, U, realtime_ns, REL) \
	X(T, U, monotonic_ns, REL)

#define GT_COLS_MARK(X, T) \
	X(T, U, ts, DELTA) \
	X(T, U, through, REL)

#define GT_COLS_KERNEL(X, T)           \
	X(T, U, start, DELTA)          \
	X(T, U, end, REL)              \
	X(T, U, queued, REL)           \
	X(T, U, submitted, REL)        \
	X(T, U, graph_node_id, PLAIN)  \
	X(T, U, device_id, PLAIN)      \
	X(T, U, context_id, PLAIN)     \
	X(T, U, stream_id, PLAIN)      \
	X(T, U, correlation_id, DELTA) \
	X(T, U, name_id, PLAIN)        \
	X(T, U, graph_id, PLAIN)       \
	X(T, U, grid_x, PLAIN)         \
	X(T, U, grid_y, PLAIN)         \
	X(T, U, grid_z, PLAIN)         \
	X(T, U, block_x, PLAIN)        \
	X(T, U, block_y, PLAIN)        \
	X(T, U, block_z, PLAIN)        \
	X(T, U, cluster_x, PLAIN)      \
	X(T, U, cluster_y, PLAIN)      \
	X(T, U, cluster_z, PLAIN)      \
	X(T, U, registers, PLAIN)      \
	X(T, U, static_smem, PLAIN)    \
	X(T, U, dynamic_smem, PLAIN)   \
	X(T, U, local_mem, PLAIN)      \
	X(T, U, flags, PLAIN)

#define GT_COLS_MEMCPY(X, T)           \
	X(T, U, start, DELTA)          \
	X(T, U, end, REL)              \
	X(T, U, bytes, PLAIN)          \
	X(T, U, device_id, PLAIN)      \
	X(T, U, context_id, PLAIN)     \
	X(T, U, stream_id, PLAIN)      \
	X(T, U, correlation_id, DELTA) \
	X(T, U, graph_id, PLAIN)       \
	X(T, U, peer_device_id, PLAIN) \
	X(T, U, copy_kind, PLAIN)      \
	X(T, U, src_kind, PLAIN)       \
	X(T, U, dst_kind, PLAIN)       \
	X(T, U, flags, PLAIN)

#define GT_COLS_MEMSET(X, T)           \
	X(T, U, start, DELTA)          \
	X(T, U, end, REL)              \
	X(T, U, bytes, PLAIN)          \
	X(T, U, device_id, PLAIN)      \
	X(T, U, context_id, PLAIN)     \
	X(T, U, stream_id, PLAIN)      \
	X(T, U, correlation_id, DELTA) \
	X(T, U, graph_id, PLAIN)       \
	X(T, U, value, PLAIN)          \
	X(T, U, mem_kind, PLAIN)       \
	X(T, U, flags, PLAIN)

#define GT_COLS_SYNC(X, T)             \
	X(T, U, start, DELTA)          \
	X(T, U, end, REL)              \
	X(T, U, type, PLAIN)           \
	X(T, U, context_id, PLAIN)     \
	X(T, U, stream_id, PLAIN)      \
	X(T, U, event_id, PLAIN)       \
	X(T, U, correlation_id, DELTA) \
	X(T, U, thread_id, PLAIN)

#define GT_COLS_API(X, T)              \
	X(T, U, start, DELTA)          \
	X(T, U, end, REL)              \
	X(T, U, thread_id, PLAIN)      \
	X(T, U, correlation_id, DELTA) \
	X(T, U, cbid, PLAIN)           \
	X(T, U, name_id, PLAIN)        \
	X(T, U, status, PLAIN)         \
	X(T, U, domain, PLAIN)

#define GT_COLS_NVTX(X, T)        \
	X(T, U, ts, DELTA)        \
	X(T, U, id, DELTA)        \
	X(T, U, thread_id, PLAIN) \
	X(T, U, name_id, PLAIN)   \
	X(T, U, domain_id, PLAIN) \
	X(T, U, flags, PLAIN)

#define GT_COLS_OVERHEAD(X, T)      \
	X(T, U, start, DELTA)       \
	X(T, U, end, REL)           \
	X(T, U, kind, PLAIN)        \
	X(T, U, object_kind, PLAIN) \
	X(T, U, object_id, PLAIN)

#define GT_COLS_NVML(X, T)                   \
	X(T, U, ts, DELTA)                   \
	X(T, U, device_id, PLAIN)            \
	X(T, U, sm_clock_mhz, PLAIN)         \
	X(T, U, mem_clock_mhz, PLAIN)        \
	X(T, U, power_mw, PLAIN)             \
	X(T, U, temp_c, PLAIN)               \
	X(T, U, gpu_util, PLAIN)             \
	X(T, U, mem_util, PLAIN)             \
	X(T, U, clocks_event_reasons, PLAIN) \
	X(T, U, power_violation_ns, DELTA)   \
	X(T, U, thermal_violation_ns, DELTA) \
	X(T, U, mem_used_bytes, PLAIN)       \
	X(T, U, energy_mj, DELTA)            \
	X(T, U, power_limit_mw, PLAIN)       \
	X(T, U, default_power_limit_mw, PLAIN)

#define GT_COLS_NVML_PROC(X, T)   \
	X(T, U, ts, DELTA)        \
	X(T, U, device_id, PLAIN) \
	X(T, U, pid, PLAIN)       \
	X(T, U, sm_util, PLAIN)   \
	X(T, U, mem_util, PLAIN)

#define GT_COLS_GPM(X, T)             \
	X(T, U, start, DELTA)         \
	X(T, U, end, REL)             \
	X(T, U, device_id, PLAIN)     \
	X(T, U, sm_util, PLAIN)       \
	X(T, U, sm_occupancy, PLAIN)  \
	X(T, U, tensor_util, PLAIN)   \
	X(T, U, fp16_util, PLAIN)     \
	X(T, U, fp32_util, PLAIN)     \
	X(T, U, fp64_util, PLAIN)     \
	X(T, U, dram_bw_util, PLAIN)  \
	X(T, U, pcie_rx_bps, PLAIN)   \
	X(T, U, pcie_tx_bps, PLAIN)   \
	X(T, U, nvlink_rx_bps, PLAIN) \
	X(T, U, nvlink_tx_bps, PLAIN) \
	X(T, U, pcie_link_bps, PLAIN)

#define GT_COLS_STACK(X, T)     \
	X(T, U, id, DELTA)      \
	X(T, U, nframes, PLAIN) \
	X(T, U, flags, PLAIN)

#define GT_COLS_FRAME(X, T)      \
	X(T, U, stack_id, DELTA) \
	X(T, U, index, PLAIN)    \
	X(T, U, kind, PLAIN)     \
	X(T, U, pc, PLAIN)       \
	X(T, U, file_id, PLAIN)  \
	X(T, U, func_id, PLAIN)  \
	X(T, U, line, PLAIN)

#define GT_COLS_STACK_SAMPLE(X, T)     \
	X(T, U, ts, DELTA)             \
	X(T, U, dur, PLAIN)            \
	X(T, U, thread_id, PLAIN)      \
	X(T, U, correlation_id, DELTA) \
	X(T, U, stack_id, PLAIN)       \
	X(T, U, trigger, PLAIN)        \
	X(T, U, cbid, PLAIN)           \
	X(T, U, domain, PLAIN)

#define GT_COLS_MODULE(X, T)          \
	X(T, U, ts, DELTA)            \
	X(T, U, start, PLAIN)         \
	X(T, U, end, PLAIN)           \
	X(T, U, offset, PLAIN)        \
	X(T, U, path_id, PLAIN)       \
	X(T, U, file_size, PLAIN)     \
	X(T, U, file_mtime_ns, PLAIN) \
	X(T, BID, build_id, BYTES)

#define GT_COLS_NCCL_COLL(X, T)     \
	X(T, U, start, DELTA)       \
	X(T, U, end, REL)           \
	X(T, U, comm_hash, PLAIN)   \
	X(T, U, seq, DELTA)         \
	X(T, U, rank, PLAIN)        \
	X(T, U, nranks, PLAIN)      \
	X(T, U, func_id, PLAIN)     \
	X(T, U, bytes, PLAIN)       \
	X(T, U, count, PLAIN)       \
	X(T, U, datatype_id, PLAIN) \
	X(T, U, algo_id, PLAIN)     \
	X(T, U, proto_id, PLAIN)    \
	X(T, U, root, PLAIN)        \
	X(T, U, nchannels, PLAIN)   \
	X(T, U, nwarps, PLAIN)      \
	X(T, U, thread_id, PLAIN)   \
	X(T, U, version, PLAIN)

#define GT_COLS_NCCL_P2P(X, T)      \
	X(T, U, start, DELTA)       \
	X(T, U, end, REL)           \
	X(T, U, comm_hash, PLAIN)   \
	X(T, U, rank, PLAIN)        \
	X(T, U, nranks, PLAIN)      \
	X(T, U, peer, PLAIN)        \
	X(T, U, func_id, PLAIN)     \
	X(T, U, bytes, PLAIN)       \
	X(T, U, count, PLAIN)       \
	X(T, U, datatype_id, PLAIN) \
	X(T, U, nchannels, PLAIN)   \
	X(T, U, thread_id, PLAIN)   \
	X(T, U, version, PLAIN)

#define GT_COLS_LOSS(X, T)    \
	X(T, U, start, DELTA) \
	X(T, U, end, REL)     \
	X(T, U, what, PLAIN)  \
	X(T, U, count, PLAIN) \
	X(T, U, bytes, PLAIN) \
	X(T, U, reason_id, PLAIN)

#define GT_COLS_NOTE(X, T)   \
	X(T, U, ts, DELTA)   \
	X(T, U, code, PLAIN) \
	X(T, U, text_id, PLAIN)

/*
 * Every record type: R(ENUM_SUFFIX, union member, struct type, GT_COLS_ macro).
 * Order = the order blocks appear in a frame (strings first, so names are
 * known before the records that use them).
 */
#define GT_RECORD_TYPES(R)                                                   \
	R(STRING, string, gt_string, GT_COLS_STRING)                         \
	R(DEVICE, device, gt_device, GT_COLS_DEVICE)                         \
	R(CONTEXT, context, gt_context, GT_COLS_CONTEXT)                     \
	R(PROCESS, process, gt_process, GT_COLS_PROCESS)                     \
	R(THREAD, thread, gt_thread, GT_COLS_THREAD)                         \
	R(CLOCK, clock, gt_clock, GT_COLS_CLOCK)                             \
	R(MARK, mark, gt_mark, GT_COLS_MARK)                                 \
	R(KERNEL, kernel, gt_kernel, GT_COLS_KERNEL)                         \
	R(MEMCPY, memcpy, gt_memcpy, GT_COLS_MEMCPY)                         \
	R(MEMSET, memset, gt_memset, GT_COLS_MEMSET)                         \
	R(SYNC, sync, gt_sync, GT_COLS_SYNC)                                 \
	R(API, api, gt_api, GT_COLS_API)                                     \
	R(NVTX, nvtx, gt_nvtx, GT_COLS_NVTX)                                 \
	R(OVERHEAD, overhead, gt_overhead, GT_COLS_OVERHEAD)                 \
	R(NVML, nvml, gt_nvml, GT_COLS_NVML)                                 \
	R(NVML_PROC, nvml_proc, gt_nvml_proc, GT_COLS_NVML_PROC)             \
	R(GPM, gpm, gt_gpm, GT_COLS_GPM)                                     \
	R(STACK, stack, gt_stack, GT_COLS_STACK)                             \
	R(FRAME, frame, gt_frame, GT_COLS_FRAME)                             \
	R(STACK_SAMPLE, stack_sample, gt_stack_sample, GT_COLS_STACK_SAMPLE) \
	R(MODULE, module, gt_module, GT_COLS_MODULE)                         \
	R(NCCL_COLL, nccl_coll, gt_nccl_coll, GT_COLS_NCCL_COLL)             \
	R(NCCL_P2P, nccl_p2p, gt_nccl_p2p, GT_COLS_NCCL_P2P)                 \
	R(LOSS, loss, gt_loss, GT_COLS_LOSS)                                 \
	R(NOTE, note, gt_note, GT_COLS_NOTE)

/* Column counts: GT_NCOLS_KERNEL etc. */
#define GT_SCHEMA_COUNT_(T, kind, field, codec) +1
#define GT_SCHEMA_NCOLS_(E, m, S, COLS) enum { GT_NCOLS_##E = 0 COLS(GT_SCHEMA_COUNT_, _) };
GT_RECORD_TYPES(GT_SCHEMA_NCOLS_)
#undef GT_SCHEMA_NCOLS_

/** Column description for the reader, tests and tools. */
typedef struct gt_col_desc {
	const char *name;
	int codec;    /**< writer's default codec */
	int is_bytes; /**< STR/UUID/NAME/BID: must be a BYTES column */
	uint64_t max; /**< integer: largest value the field holds; BYTES: longest value */
	int exact;    /**< BYTES: a value is 0 or exactly `max` bytes long (UUID) */
} gt_col_desc;

/** Columns of a record type, or NULL when the type is unknown. */
GT_HIDDEN const gt_col_desc *gt_schema_cols(uint32_t type, unsigned *ncols);

#endif /* GT_SCHEMA_H */
