/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/format.h - the gaptrace record format: records, streams, trace
 * files, the collector control protocol.
 *
 * format/FORMAT.md is the normative description of the bytes; this header is
 * the C view of it. The library depends on libc and libzstd only.
 *
 * Vocabulary
 *   stream  = stream header + frames. A trace file is exactly one recorded
 *             stream; the socket between the injection library and the
 *             collector carries the same bytes.
 *   frame   = fixed 32-byte frame header + payload (one zstd frame, or raw).
 *             Every frame decodes on its own, so a file cut at any byte
 *             reads back every complete frame before the cut.
 *   block   = inside a frame payload: the rows of one record type, columnar.
 *   record  = one row: a kernel, a memcpy, an API call, ...
 *
 * Timestamps: every `*_ns`/`start`/`end`/`ts` field of a record is in the
 * stream's *trace clock* (for the injection library: CUPTI's timestamp).
 * The stream header and GT_REC_CLOCK records pair the trace clock with the
 * host's CLOCK_REALTIME and CLOCK_MONOTONIC, which is how traces of several
 * processes are put on one time axis (gt_clock_map).
 *
 * Errors, the one convention of this header: a function returning int
 * returns 0 (or a count, a length, a bool-like 1) on success and a negative
 * gt_err on failure; gt_strerror() names it. A constructor returning a
 * pointer returns NULL on failure and fills the gt_errinfo it takes (when
 * non-NULL), or sets errno when it takes none (gt_writer_new,
 * gt_seqset_new). A getter returning a pointer returns NULL for "none" (an
 * unknown id), never for an error. Each function's comment names its
 * exceptions to this: gt_kinds_format returns the length it needed, like
 * snprintf; gt_writer_intern answers id 0 when its table is full and counts
 * it (a loss is data, not an error: gt_writer_strings_dropped); void
 * functions cannot fail.
 *
 * Option structs (gt_reader_opts, gt_writer_opts) are size-prefixed, as
 * libbpf's: the first field, sz, is the size of the struct the caller was
 * compiled with; declare one with GT_OPTS, which sets sz:
 *     GT_OPTS(gt_reader_opts, ro, .stop_on_corrupt = 1);
 *     gt_reader *r = gt_reader_open(path, &ro, &ei);
 * The library reads only the fields that lie wholly within sz and takes the
 * others as zero (a field's zero is its default), so a program built with an
 * older, smaller struct keeps working with a newer library. Bytes past the
 * end of the struct this library knows must be zero: a program asking for
 * an option this library does not have is refused (GT_ERR_INVAL, or errno
 * EINVAL) instead of silently getting something else. sz == 0, what
 * `gt_reader_opts ro = {.stop_on_corrupt = 1};` gives, means the struct's
 * first layout (GT_READER_OPTS_SZ_V1, GT_WRITER_OPTS_SZ_V1): every such
 * program was compiled with at least that much, and never more than the
 * fields it could name, so a newer library never reads past what it was
 * given; fields added later are read only with sz set. A sz below
 * sizeof(size_t), or above 4096, is refused. NULL options mean every
 * default.
 *
 * Thread safety: a gt_writer or gt_reader is used by one thread at a time.
 * Distinct objects are independent. The free functions are reentrant.
 */
#ifndef GAPTRACE_FORMAT_H
#define GAPTRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memset, for GT_OPTS */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GT_API __attribute__((visibility("default")))
#else
#define GT_API
#endif

/**
 * GT_OPTS(type, name, ...): declare a size-prefixed option struct `name`
 * of `type` with sz = sizeof(type), every byte (padding too) zero but the
 * designated fields given: GT_OPTS(gt_writer_opts, wo, .frame_rows = 64);
 * (libbpf's LIBBPF_OPTS). The padding matters to a newer library's check
 * that bytes past its own struct are zero, hence GNU C's statement
 * expression where available.
 */
#if defined(__GNUC__)
#define GT_OPTS(type, name, ...)                         \
	type name = ({                                   \
		memset(&name, 0, sizeof(type));          \
		(type){.sz = sizeof(type), __VA_ARGS__}; \
	})
#else
#define GT_OPTS(type, name, ...) type name = {.sz = sizeof(type), __VA_ARGS__}
#endif

/* ------------------------------------------------------------------ */
/* Versions and limits                                                 */
/* ------------------------------------------------------------------ */

/** Format major version written by this library. A reader accepts a stream
 *  whose oldest-compatible major is <= GT_FORMAT_MAJOR. */
#define GT_FORMAT_MAJOR 1
/** Format minor version: bumped when record types or columns are appended. */
#define GT_FORMAT_MINOR 7
/** Oldest major version a reader must understand to read what we write. */
#define GT_FORMAT_OLDEST_MAJOR 1

/** Size of the fixed part of a frame header, in bytes. */
#define GT_FRAME_HEADER_SIZE 32
/** Largest compressed frame payload a reader accepts (decoder cap). */
#define GT_FRAME_MAX_COMPRESSED (16u << 20)
/** Largest uncompressed frame payload a reader accepts (decoder cap). */
#define GT_FRAME_MAX_RAW (64u << 20)
/** Largest stream header accepted (decoder cap). */
#define GT_HEADER_MAX (64u << 10)
/** Largest single interned string, in bytes (decoder cap). */
#define GT_STRING_MAX (64u << 10)
/** Largest number of devices in a stream header. */
#define GT_MAX_DEVICES 64
/** Length of gt_device.name including the terminating NUL. */
#define GT_DEVICE_NAME_MAX 96
/** Longest build id a module record holds (gt_module.build_id, format 1.5). */
#define GT_BUILD_ID_MAX 64
/** zstd window log cap used when decompressing (16 MiB window). */
#define GT_ZSTD_WINDOW_LOG_MAX 24
/** Largest number of records (rows of all blocks) in one frame (decoder cap). */
#define GT_FRAME_MAX_RECORDS (1u << 22)
/** Most records per byte of a frame, its 32-byte header included: a frame
 *  holds at most GT_FRAME_MAX_RECORDS_PER_BYTE * (32 + comp_len) records
 *  (decoder cap, FORMAT.md section 4), so records follow the bytes of the
 *  input (a block of CONST columns would otherwise hold 2^20 rows in ~80
 *  bytes). Any frame of up to 32768 records passes. */
#define GT_FRAME_MAX_RECORDS_PER_BYTE 1024u
/** String ids are < GT_MAX_STRINGS: a writer interns at most this many - 1
 *  strings, and it is the reader's default string table cap. */
#define GT_MAX_STRINGS (1u << 22)

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/** Error codes. Values are pinned: they appear in logs and tests. */
typedef enum gt_err {
	GT_OK = 0,
	GT_ERR_GENERIC = -1,   /**< unspecified failure */
	GT_ERR_NOMEM = -2,     /**< allocation failed */
	GT_ERR_IO = -3,	       /**< read/write failed (errno has details) */
	GT_ERR_MAGIC = -4,     /**< not a gaptrace stream / frame / message */
	GT_ERR_VERSION = -5,   /**< written by an incompatible (newer) major */
	GT_ERR_CHECKSUM = -6,  /**< CRC32C mismatch */
	GT_ERR_TRUNCATED = -7, /**< input ends inside a structure */
	GT_ERR_CORRUPT = -8,   /**< structure is malformed */
	GT_ERR_LIMIT = -9,     /**< a size or count exceeds a decoder cap */
	GT_ERR_ZSTD = -10,     /**< zstd failed */
	GT_ERR_INVAL = -11,    /**< invalid argument */
	GT_ERR_FULL = -12,     /**< no space left (disk full, table full) */
	GT_ERR_CLOSED = -13,   /**< peer closed / object closed */
	GT_ERR_AGAIN = -14,    /**< need more input */
	GT_ERR_RESERVED = -15, /**< reserved bits or fields are not zero */
	GT_ERR_RANGE = -16,    /**< a value does not fit its field */
} gt_err;

/** Static English description of a gt_err code (never NULL). */
GT_API const char *gt_strerror(int err);

/** Where and why a decode failed: filled by functions that take one. */
typedef struct gt_errinfo {
	int code;	 /**< gt_err */
	uint64_t offset; /**< byte offset in the stream where it happened */
	char msg[256];	 /**< human-readable, names the offset and the structure */
} gt_errinfo;

/**
 * The one setter of a gt_errinfo, for every library and the CLI: when ei is
 * non-NULL, sets code, offset and msg (printf-style, cut to fit); returns
 * code either way, so `return gt_errinfo_set(ei, GT_ERR_IO, 0, "%s: %s",
 * path, strerror(errno));` reads as one step. Thread-safe.
 */
GT_API int gt_errinfo_set(gt_errinfo *ei, int code, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* ------------------------------------------------------------------ */
/* Enumerations shared by the producer and the analysis                */
/* ------------------------------------------------------------------ */

/** Record types. Values are wire values; new types are only appended. */
typedef enum gt_rec_type {
	GT_REC_STRING = 1,	  /**< gt_string: interned name */
	GT_REC_DEVICE = 2,	  /**< gt_device: a GPU seen by the process */
	GT_REC_CONTEXT = 3,	  /**< gt_context: CUDA context -> device */
	GT_REC_PROCESS = 4,	  /**< gt_process */
	GT_REC_THREAD = 5,	  /**< gt_thread: OS thread id -> name */
	GT_REC_CLOCK = 6,	  /**< gt_clock: trace clock <-> host clocks */
	GT_REC_MARK = 7,	  /**< gt_mark: delivered up to an instant (format 1.6) */
	GT_REC_KERNEL = 16,	  /**< gt_kernel */
	GT_REC_MEMCPY = 17,	  /**< gt_memcpy */
	GT_REC_MEMSET = 18,	  /**< gt_memset */
	GT_REC_SYNC = 19,	  /**< gt_sync: host blocked on the GPU */
	GT_REC_API = 20,	  /**< gt_api: runtime/driver API call */
	GT_REC_NVTX = 21,	  /**< gt_nvtx: NVTX marker event */
	GT_REC_OVERHEAD = 22,	  /**< gt_overhead: CUPTI/driver overhead span */
	GT_REC_NVML = 32,	  /**< gt_nvml: device sample */
	GT_REC_NVML_PROC = 33,	  /**< gt_nvml_proc: per-process sample */
	GT_REC_GPM = 34,	  /**< gt_gpm: GPM counters over an interval (format 1.3) */
	GT_REC_STACK = 35,	  /**< gt_stack: a distinct host call stack (format 1.4) */
	GT_REC_FRAME = 36,	  /**< gt_frame: one frame of a gt_stack (format 1.4) */
	GT_REC_STACK_SAMPLE = 37, /**< gt_stack_sample: a call that had that stack (1.4) */
	GT_REC_MODULE = 38,	  /**< gt_module: an executable mapping of the process (1.4) */
	GT_REC_NCCL_COLL = 39,	  /**< gt_nccl_coll: one NCCL collective of a rank (1.7) */
	GT_REC_NCCL_P2P = 40,	  /**< gt_nccl_p2p: one NCCL send or receive of a rank (1.7) */
	GT_REC_LOSS = 48,	  /**< gt_loss: data that was lost */
	GT_REC_NOTE = 49,	  /**< gt_note: an event worth telling the user */
} gt_rec_type;

/** Number of distinct record type slots (types are < GT_REC_TYPE_LIMIT). */
#define GT_REC_TYPE_LIMIT 64

/** Memcpy direction. Same values as CUpti_ActivityMemcpyKind. */
typedef enum gt_copy_kind {
	GT_COPY_UNKNOWN = 0,
	GT_COPY_HTOD = 1,
	GT_COPY_DTOH = 2,
	GT_COPY_HTOA = 3,
	GT_COPY_ATOH = 4,
	GT_COPY_ATOA = 5,
	GT_COPY_ATOD = 6,
	GT_COPY_DTOA = 7,
	GT_COPY_DTOD = 8,
	GT_COPY_HTOH = 9,
	GT_COPY_PTOP = 10,
} gt_copy_kind;

/** Memory kind of a copy endpoint. Same values as CUpti_ActivityMemoryKind. */
typedef enum gt_mem_kind {
	GT_MEM_UNKNOWN = 0,
	GT_MEM_PAGEABLE = 1,
	GT_MEM_PINNED = 2,
	GT_MEM_DEVICE = 3,
	GT_MEM_ARRAY = 4,
	GT_MEM_MANAGED = 5,
	GT_MEM_DEVICE_STATIC = 6,
	GT_MEM_MANAGED_STATIC = 7,
} gt_mem_kind;

/** Synchronization type. Same values as CUpti_ActivitySynchronizationType. */
typedef enum gt_sync_type {
	GT_SYNC_UNKNOWN = 0,
	GT_SYNC_EVENT = 1,	 /**< cudaEventSynchronize */
	GT_SYNC_STREAM_WAIT = 2, /**< cudaStreamWaitEvent */
	GT_SYNC_STREAM = 3,	 /**< cudaStreamSynchronize */
	GT_SYNC_CONTEXT = 4,	 /**< cudaDeviceSynchronize / cuCtxSynchronize */
} gt_sync_type;

/** API domain of a gt_api record. */
typedef enum gt_api_domain {
	GT_API_RUNTIME = 1,
	GT_API_DRIVER = 2,
} gt_api_domain;

/** gt_kernel.flags bits. */
enum {
	GT_KFLAG_DEVICE_LAUNCHED = 1u << 0, /**< dynamic parallelism */
	GT_KFLAG_COOPERATIVE = 1u << 1,	    /**< cooperative launch */
	GT_KFLAG_CLUSTER = 1u << 2,	    /**< launched with clusters */
};

/** gt_memcpy.flags / gt_memset.flags bits. */
enum {
	GT_MFLAG_ASYNC = 1u << 0, /**< issued by an *Async call */
};

/** gt_nvtx.flags bits. Same values as CUPTI_ACTIVITY_FLAG_MARKER_*. */
enum {
	GT_NVTX_INSTANT = 1u << 0,
	GT_NVTX_START = 1u << 1,
	GT_NVTX_END = 1u << 2,
};

/** What a gt_loss record counts. */
typedef enum gt_loss_what {
	GT_LOSS_CUPTI_DROPPED = 1,     /**< CUPTI dropped records (its count) */
	GT_LOSS_BUFFER_REFUSED = 2,    /**< buffer pool empty: CUPTI got no buffer */
	GT_LOSS_FRAME_DROPPED = 3,     /**< producer dropped encoded frames (slow sink) */
	GT_LOSS_ENCODE_DROPPED = 4,    /**< records dropped by the encoder (queue full) */
	GT_LOSS_UNKNOWN_RECORD = 5,    /**< CUPTI records of a kind we do not decode */
	GT_LOSS_WRITE_FAILED = 6,      /**< bytes that could not be written (disk) */
	GT_LOSS_STRING_TABLE_FULL = 7, /**< names replaced by id 0 */
	GT_LOSS_UNDELIVERED = 8,       /**< records CUPTI still held when the producer ended
					    (fatal signal, final flush past its deadline) (1.1) */
} gt_loss_what;

/** gt_note.code values: events the report mentions. */
typedef enum gt_note_code {
	GT_NOTE_INFO = 0,
	GT_NOTE_INERT = 1,	    /**< gaptrace disabled itself (text says why) */
	GT_NOTE_CUPTI_TAKEN = 2,    /**< another CUPTI client took the callbacks */
	GT_NOTE_ARMED = 3,	    /**< capture armed (records follow) */
	GT_NOTE_DISARMED = 4,	    /**< capture disarmed */
	GT_NOTE_COLLECTOR_LOST = 5, /**< collector went away; fell back to file */
	GT_NOTE_PROFILER_STOP = 6,  /**< cudaProfilerStop seen */
	GT_NOTE_SIGNAL = 7,	    /**< flushed on a signal */
	GT_NOTE_FORK = 8,	    /**< this stream is a fork child's */
	GT_NOTE_CUPTI_VERSION = 9,  /**< text: runtime CUPTI version/path */
	GT_NOTE_CONFIG = 10,	    /**< text: effective configuration */
} gt_note_code;

/** Activity kinds a producer can capture (bit mask). */
enum {
	GT_KIND_KERNEL = 1u << 0, /**< concurrent kernels */
	GT_KIND_MEMCPY = 1u << 1,
	GT_KIND_MEMSET = 1u << 2,
	GT_KIND_SYNC = 1u << 3,	   /**< CUPTI SYNCHRONIZATION kind */
	GT_KIND_RUNTIME = 1u << 4, /**< runtime API: launch/copy/sync calls only */
	GT_KIND_DRIVER = 1u << 5,  /**< driver API: launch/copy/sync calls only */
	GT_KIND_NVTX = 1u << 6,
	GT_KIND_OVERHEAD = 1u << 7,
	GT_KIND_API_ALL = 1u << 8, /**< every runtime/driver call, not just the cheap set */
	GT_KIND_LATENCY = 1u << 9, /**< queued/submitted timestamps */
	/** A modifier, not a kind: CUPTI records the other kinds as when
	 *  armed, but the producer recycles its buffers unread (no records,
	 *  no capture window): the cost of CUPTI alone ("the CUPTI floor",
	 *  bench/paired). Never in GT_KIND_ALL. */
	GT_KIND_FLOOR = 1u << 10,
};
/** The default capture set. */
#define GT_KIND_DEFAULT                                                                        \
	(GT_KIND_KERNEL | GT_KIND_MEMCPY | GT_KIND_MEMSET | GT_KIND_RUNTIME | GT_KIND_DRIVER | \
	 GT_KIND_NVTX | GT_KIND_OVERHEAD | GT_KIND_LATENCY)
/** Every kind bit defined by this version (GT_KIND_FLOOR is a modifier, not a kind). */
#define GT_KIND_ALL 0x3ffu

/**
 * Parse a kinds list such as "kernel,memcpy,runtime" or "default,-nvtx" or
 * "all". Names: kernel memcpy memset sync runtime driver nvtx overhead
 * api-all latency default all none, and the modifier floor (GT_KIND_FLOOR:
 * "all" does not set it, "none" clears it). A leading '-' removes.
 * @return 0 and *mask set, or GT_ERR_INVAL (then *mask is untouched).
 */
GT_API int gt_kinds_parse(const char *s, uint32_t *mask);

/**
 * Write the mask as a comma-separated list of names into buf (always NUL
 * terminated when cap > 0). @return the length it needed (like snprintf).
 */
GT_API int gt_kinds_format(uint32_t mask, char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/** GT_REC_STRING: an interned string. Ids are unique within a stream;
 *  id 0 is never defined and means "no name". */
typedef struct gt_string {
	uint32_t id;
	uint32_t len;	 /**< bytes, no NUL counted; <= GT_STRING_MAX */
	const char *str; /**< not NUL terminated on write; NUL terminated on read */
} gt_string;

/** GT_REC_DEVICE, and an entry of the stream header's device table. */
typedef struct gt_device {
	uint32_t id;		       /**< CUDA device ordinal in the process */
	uint8_t uuid[16];	       /**< the identity used across processes */
	char name[GT_DEVICE_NAME_MAX]; /**< NUL terminated */
	uint32_t cc_major, cc_minor;   /**< compute capability */
	uint32_t sm_count;
	uint32_t core_clock_khz; /**< max SM clock */
	uint32_t mem_clock_khz;	 /**< max memory clock */
	uint32_t mem_bus_width_bits;
	uint64_t global_mem_bytes;
	uint32_t l2_bytes;
	uint32_t max_threads_per_sm;
	uint32_t max_blocks_per_sm;
	uint32_t max_regs_per_sm;
	uint32_t max_regs_per_block;
	uint32_t max_smem_per_sm;    /**< bytes */
	uint32_t max_smem_per_block; /**< bytes: CUPTI's maxSharedMemoryPerBlock (kernels may opt in
					to more) */
	uint32_t max_threads_per_block;
	uint32_t warp_size;
	uint32_t pci_domain, pci_bus, pci_device;
} gt_device;

/** GT_REC_CONTEXT: a CUDA context and its device. */
typedef struct gt_context {
	uint32_t id;
	uint32_t device_id;
	uint32_t null_stream_id;
} gt_context;

/** GT_REC_PROCESS: a process (the stream's own, or one the collector saw). */
typedef struct gt_process {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;   /**< trace clock */
	uint32_t exe_id;     /**< string id */
	uint32_t cmdline_id; /**< string id */
} gt_process;

/** GT_REC_THREAD: names an OS thread (gettid value). */
typedef struct gt_thread {
	uint32_t pid;
	uint32_t tid;
	uint32_t name_id;
	uint64_t ts;
} gt_thread;

/** GT_REC_CLOCK: one instant read on three clocks. */
typedef struct gt_clock {
	uint64_t trace_ns;
	uint64_t realtime_ns;
	uint64_t monotonic_ns;
} gt_clock;

/**
 * GT_REC_MARK (format 1.6): the producer's delivery mark. Every activity
 * record of the stream that ended before `through` is in this frame or an
 * earlier one; records that come in later frames ended at or after it.
 * A live reader uses it to know that a time window of the stream is
 * complete instead of assuming a delivery delay. A producer that cannot
 * know it (no flush of CUPTI's buffers) writes no mark.
 */
typedef struct gt_mark {
	uint64_t ts;	  /**< when the mark was made (trace clock) */
	uint64_t through; /**< delivered: every record that ended before it */
} gt_mark;

/** GT_REC_KERNEL: one kernel execution. */
typedef struct gt_kernel {
	uint64_t start, end;	/**< ns, trace clock */
	uint64_t queued;	/**< 0 when unknown */
	uint64_t submitted;	/**< 0 when unknown */
	uint64_t graph_node_id; /**< 0 when not from a graph */
	uint32_t device_id, context_id, stream_id;
	uint32_t correlation_id;
	uint32_t name_id;  /**< string id of the mangled name */
	uint32_t graph_id; /**< 0 when not from a graph */
	uint32_t grid_x, grid_y, grid_z;
	uint32_t block_x, block_y, block_z;
	uint32_t cluster_x, cluster_y, cluster_z; /**< 0 when no cluster */
	uint32_t registers;			  /**< per thread */
	uint32_t static_smem;			  /**< bytes per block */
	uint32_t dynamic_smem;			  /**< bytes per block */
	uint32_t local_mem;			  /**< bytes per thread */
	uint32_t flags;				  /**< GT_KFLAG_* */
} gt_kernel;

/** GT_REC_MEMCPY: one copy. */
typedef struct gt_memcpy {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t correlation_id;
	uint32_t graph_id;
	uint32_t peer_device_id; /**< other device of a PTOP copy, else 0 */
	uint8_t copy_kind;	 /**< gt_copy_kind */
	uint8_t src_kind;	 /**< gt_mem_kind */
	uint8_t dst_kind;	 /**< gt_mem_kind */
	uint8_t flags;		 /**< GT_MFLAG_* */
} gt_memcpy;

/** GT_REC_MEMSET: one memset. */
typedef struct gt_memset {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t device_id, context_id, stream_id;
	uint32_t correlation_id;
	uint32_t graph_id;
	uint32_t value;
	uint8_t mem_kind; /**< gt_mem_kind */
	uint8_t flags;	  /**< GT_MFLAG_* */
} gt_memset;

/** GT_REC_SYNC: the host waited for the GPU. */
typedef struct gt_sync {
	uint64_t start, end;
	uint32_t type; /**< gt_sync_type */
	uint32_t context_id;
	uint32_t stream_id; /**< 0 when not a stream sync */
	uint32_t event_id;  /**< 0 when not an event sync */
	uint32_t correlation_id;
	uint32_t thread_id; /**< 0 when unknown (join with gt_api by correlation) */
} gt_sync;

/** GT_REC_API: one runtime or driver API call on a host thread. */
typedef struct gt_api {
	uint64_t start, end;
	uint32_t thread_id;	 /**< OS thread id */
	uint32_t correlation_id; /**< matches the kernel/memcpy it launched */
	uint32_t cbid;		 /**< CUPTI callback id in its domain */
	uint32_t name_id;	 /**< string id of the function name */
	uint32_t status;	 /**< return code (0 = success) */
	uint8_t domain;		 /**< gt_api_domain */
} gt_api;

/** GT_REC_NVTX: one NVTX marker event (ranges come as START + END). */
typedef struct gt_nvtx {
	uint64_t ts;
	uint64_t id;	    /**< pairs START and END */
	uint32_t thread_id; /**< 0 for process-scoped ranges */
	uint32_t name_id;   /**< on START/INSTANT; 0 on END */
	uint32_t domain_id; /**< 0 = default domain */
	uint32_t flags;	    /**< GT_NVTX_* */
} gt_nvtx;

/** GT_REC_OVERHEAD: time spent by CUPTI or the driver on our behalf. */
typedef struct gt_overhead {
	uint64_t start, end;
	uint32_t kind;	      /**< CUpti_ActivityOverheadKind value */
	uint32_t object_kind; /**< 1 process, 2 thread, 3 device... (CUPTI values) */
	uint64_t object_id;
} gt_overhead;

/** GT_REC_NVML: one device sample. Fields not read are UINT32_MAX / UINT64_MAX. */
typedef struct gt_nvml {
	uint64_t ts;
	uint32_t device_id; /**< gt_device.id in this stream */
	uint32_t sm_clock_mhz;
	uint32_t mem_clock_mhz;
	uint32_t power_mw;
	uint32_t temp_c;
	uint32_t gpu_util;	       /**< percent, NVML's sampled "some kernel ran" */
	uint32_t mem_util;	       /**< percent */
	uint64_t clocks_event_reasons; /**< nvmlClocksEventReasons bit mask */
	uint64_t power_violation_ns;   /**< cumulative */
	uint64_t thermal_violation_ns; /**< cumulative */
	uint64_t mem_used_bytes;
	uint64_t energy_mj;	 /**< cumulative since driver load */
	uint32_t power_limit_mw; /**< enforced power limit (format 1.2; 0 in older streams) */
	uint32_t default_power_limit_mw; /**< the board's default limit (format 1.2; 0 in older) */
} gt_nvml;

/** GT_REC_NVML_PROC: one per-process utilization sample. */
typedef struct gt_nvml_proc {
	uint64_t ts;
	uint32_t device_id;
	uint32_t pid;
	uint32_t sm_util;  /**< percent */
	uint32_t mem_util; /**< percent */
} gt_nvml_proc;

/**
 * GT_REC_GPM: one NVML GPM (GPU Performance Monitoring) reading of one GPU,
 * the hardware counters between two GPM samples taken at `start` and `end`
 * (format 1.3). Percentages are in hundredths of a percent (0..10000: 4250
 * = 42.50 %), rates in bytes per second. A metric not read is UINT32_MAX /
 * UINT64_MAX, as in gt_nvml.
 */
typedef struct gt_gpm {
	uint64_t start;		/**< first sample (trace clock) */
	uint64_t end;		/**< second sample */
	uint32_t device_id;	/**< gt_device.id in this stream */
	uint32_t sm_util;	/**< SM activity, 0.01 % (NVML_GPM_METRIC_SM_UTIL) */
	uint32_t sm_occupancy;	/**< resident warps vs the maximum, 0.01 % */
	uint32_t tensor_util;	/**< any tensor pipe, 0.01 % */
	uint32_t fp16_util;	/**< non-tensor FP16 pipe, 0.01 % */
	uint32_t fp32_util;	/**< non-tensor FP32 pipe, 0.01 % */
	uint32_t fp64_util;	/**< non-tensor FP64 pipe, 0.01 % */
	uint32_t dram_bw_util;	/**< DRAM bandwidth vs the maximum, 0.01 % */
	uint64_t pcie_rx_bps;	/**< PCIe to the GPU, bytes/s */
	uint64_t pcie_tx_bps;	/**< PCIe from the GPU, bytes/s */
	uint64_t nvlink_rx_bps; /**< NVLink, all links, received, bytes/s */
	uint64_t nvlink_tx_bps; /**< NVLink, all links, sent, bytes/s */
	/** the PCIe link's capacity per direction, bytes/s, from its current
	 *  generation and width (encoding overhead removed); UINT64_MAX unknown */
	uint64_t pcie_link_bps;
} gt_gpm;

/** gt_stack.flags bits. */
enum {
	GT_STACK_NATIVE_CUT = 1u << 0,	 /**< native frames stopped at the depth cap */
	GT_STACK_PYTHON_CUT = 1u << 1,	 /**< Python frames stopped at a cap (depth, time) */
	GT_STACK_PYTHON_FAULT = 1u << 2, /**< a Python frame could not be read: the
					      frames kept are those read before it */
	GT_STACK_NATIVE_NONE = 1u << 3,	 /**< no native frames (unwinder absent or failed) */
};

/** gt_frame.kind values. */
enum {
	GT_FRAME_NATIVE = 1, /**< a return address (pc) of the process */
	GT_FRAME_PYTHON = 2, /**< a CPython frame: file, function, line */
};

/** gt_stack_sample.trigger values: why the stack was taken. */
enum {
	GT_STACK_AT_WAIT = 1,	/**< a synchronizing or blocking call that lasted at
				     least the threshold (stack taken as it returned) */
	GT_STACK_AT_RESUME = 2, /**< a launch/copy/sync call after at least the
				     threshold of host time without one on its thread */
	GT_STACK_SAMPLED = 3,	/**< one launch in N (GAPTRACE_STACK_SAMPLE) */
};

/**
 * GT_REC_STACK: one distinct host call stack (format 1.4). Its frames follow
 * as GT_REC_FRAME rows with the same id; a stack is written once per stream
 * and referred to by id from GT_REC_STACK_SAMPLE.
 */
typedef struct gt_stack {
	uint32_t id;	  /**< unique within the stream, never 0 */
	uint32_t nframes; /**< frames written for it (native + Python) */
	uint32_t flags;	  /**< GT_STACK_* */
} gt_stack;

/**
 * GT_REC_FRAME: one frame of a stack, innermost first within each kind:
 * the native frames (index 0..) then the Python frames. A native frame is a
 * return address, symbolised by the reader with the GT_REC_MODULE records;
 * a Python frame carries its own file, function and line.
 */
typedef struct gt_frame {
	uint32_t stack_id; /**< gt_stack.id */
	uint32_t index;	   /**< 0 = innermost frame of the stack */
	uint32_t kind;	   /**< GT_FRAME_* */
	uint64_t pc;	   /**< native: the address; Python: 0 */
	uint32_t file_id;  /**< Python: string id of the file name; native: 0 */
	uint32_t func_id;  /**< Python: string id of the function; native: 0 */
	uint32_t line;	   /**< Python: line number (0 unknown); native: 0 */
} gt_frame;

/** GT_REC_STACK_SAMPLE: one API call whose host stack was taken (format 1.4). */
typedef struct gt_stack_sample {
	uint64_t ts;		 /**< when the call began (trace clock) */
	uint64_t dur;		 /**< AT_WAIT: the call's length; AT_RESUME: the host
				      time before it without a call; SAMPLED: 0 */
	uint32_t thread_id;	 /**< OS thread id */
	uint32_t correlation_id; /**< the gt_api record of the call (same domain) */
	uint32_t stack_id;	 /**< gt_stack.id */
	uint32_t trigger;	 /**< GT_STACK_AT_* */
	uint32_t cbid;		 /**< CUPTI callback id of the call */
	uint32_t domain;	 /**< gt_api_domain */
} gt_stack_sample;

/**
 * GT_REC_NCCL_COLL (format 1.7): one collective as NCCL's profiler plugin
 * interface showed it to the injection library, on one rank. start/end are
 * when NCCL started and stopped the event (host side: from the enqueue to
 * the end NCCL reports, not the kernel's GPU time). The same collective on
 * the other ranks has the same comm_hash, func and seq.
 */
typedef struct gt_nccl_coll {
	uint64_t start, end;  /**< ns, trace clock */
	uint64_t comm_hash;   /**< the communicator's hash (same on every rank) */
	uint64_t seq;	      /**< NCCL's sequence number, per (comm, function) */
	uint64_t bytes;	      /**< count x the datatype's size (0: size unknown) */
	uint64_t count;	      /**< elements */
	uint32_t rank;	      /**< this process's rank in comm */
	uint32_t nranks;      /**< ranks of comm (0: unknown, plugin version 3) */
	uint32_t func_id;     /**< string: "AllReduce", "Broadcast", ... */
	uint32_t datatype_id; /**< string: NCCL's datatype name */
	uint32_t algo_id;     /**< string: "RING", "TREE", ... (0: not given) */
	uint32_t proto_id;    /**< string: "LL", "LL128", "SIMPLE" (0: not given) */
	uint32_t root;	      /**< root rank of rooted collectives (as NCCL gives it) */
	uint32_t nchannels;   /**< channels NCCL chose */
	uint32_t nwarps;      /**< warps per channel */
	uint32_t thread_id;   /**< OS thread that started the event */
	uint32_t version;     /**< profiler plugin interface version NCCL used (3..6) */
} gt_nccl_coll;

/** GT_REC_NCCL_P2P (format 1.7): one NCCL send or receive of a rank. */
typedef struct gt_nccl_p2p {
	uint64_t start, end;  /**< ns, trace clock */
	uint64_t comm_hash;   /**< the communicator's hash */
	uint64_t bytes;	      /**< count x the datatype's size (0: size unknown) */
	uint64_t count;	      /**< elements */
	uint32_t rank;	      /**< this process's rank in comm */
	uint32_t nranks;      /**< ranks of comm (0: unknown) */
	uint32_t peer;	      /**< the other rank */
	uint32_t func_id;     /**< string: "Send" or "Recv" */
	uint32_t datatype_id; /**< string: NCCL's datatype name */
	uint32_t nchannels;   /**< channels (0: not given, plugin version 3) */
	uint32_t thread_id;   /**< OS thread that started the event */
	uint32_t version;     /**< profiler plugin interface version (3..6) */
} gt_nccl_p2p;

/** GT_REC_MODULE: an executable file mapping of the traced process (format
 *  1.4), as /proc/self/maps showed it, so native frames can be symbolised. */
typedef struct gt_module {
	uint64_t ts;	  /**< when it was read (trace clock) */
	uint64_t start;	  /**< first address of the mapping */
	uint64_t end;	  /**< one past its last address */
	uint64_t offset;  /**< file offset of `start` */
	uint32_t path_id; /**< string id of the file's path */
	/* The file's identity when the module was read (format 1.5; 0 and an
	 * empty build id when unknown, as in every older trace): what a reader
	 * checks before it symbolises with a file of that path. */
	uint64_t file_size;	/**< bytes (stat st_size), 0 unknown */
	uint64_t file_mtime_ns; /**< st_mtim in ns since the epoch, 0 unknown */
	uint32_t build_id_len;	/**< bytes of build_id used, <= GT_BUILD_ID_MAX; 0 unknown */
	uint8_t build_id[GT_BUILD_ID_MAX]; /**< the NT_GNU_BUILD_ID note's bytes */
} gt_module;

/** GT_REC_LOSS: something was lost. Every report prints these. */
typedef struct gt_loss {
	uint64_t start, end; /**< span over which it happened (trace clock) */
	uint32_t what;	     /**< gt_loss_what */
	uint64_t count;	     /**< records (or frames for FRAME_DROPPED) */
	uint64_t bytes;	     /**< bytes, when known */
	uint32_t reason_id;  /**< string id of a detail text, or 0 */
} gt_loss;

/** GT_REC_NOTE: an event the report should mention. */
typedef struct gt_note {
	uint64_t ts;
	uint32_t code;	  /**< gt_note_code */
	uint32_t text_id; /**< string id */
} gt_note;

/** One decoded record: `type` says which member is valid. */
typedef struct gt_record {
	uint32_t type; /**< gt_rec_type */
	union {
		gt_string string;
		gt_device device;
		gt_context context;
		gt_process process;
		gt_thread thread;
		gt_clock clock;
		gt_mark mark;
		gt_kernel kernel;
		gt_memcpy memcpy;
		gt_memset memset;
		gt_sync sync;
		gt_api api;
		gt_nvtx nvtx;
		gt_overhead overhead;
		gt_nvml nvml;
		gt_nvml_proc nvml_proc;
		gt_gpm gpm;
		gt_stack stack;
		gt_frame frame;
		gt_stack_sample stack_sample;
		gt_module module;
		gt_nccl_coll nccl_coll;
		gt_nccl_p2p nccl_p2p;
		gt_loss loss;
		gt_note note;
	};
} gt_record;

/** Human name of a record type ("kernel"), or NULL when unknown. */
GT_API const char *gt_rec_type_name(uint32_t type);
/** "HtoD", "DtoH", ... never NULL. */
GT_API const char *gt_copy_kind_name(uint32_t kind);
/** "pageable", "pinned", "device", ... never NULL. */
GT_API const char *gt_mem_kind_name(uint32_t kind);
/** "event", "stream_wait_event", "stream", "context", ... never NULL. */
GT_API const char *gt_sync_type_name(uint32_t type);
/** "cupti_dropped", ... never NULL. */
GT_API const char *gt_loss_what_name(uint32_t what);

/**
 * Column i (wire order, from 0) of record type `type`: the name of the
 * field it fills (as in FORMAT.md's field tables), and in *is_bytes
 * (when non-NULL) whether it is a BYTES column. For tools that print
 * or export columns. @return NULL for an unknown type or i past the end.
 */
GT_API const char *gt_rec_col_name(uint32_t type, unsigned i, int *is_bytes);

/* ------------------------------------------------------------------ */
/* Stream header                                                       */
/* ------------------------------------------------------------------ */

/** Who produced a stream (gt_stream_header.producer). */
typedef enum gt_producer {
	GT_PRODUCER_UNKNOWN = 0,
	GT_PRODUCER_INJECT = 1,	   /**< libgaptrace_inject.so in a CUDA process */
	GT_PRODUCER_COLLECTOR = 2, /**< the collector (NVML samples etc.) */
	GT_PRODUCER_SYNTH = 3,	   /**< the synthetic trace generator */
} gt_producer;

/** The stream header: the first bytes of every stream and trace file. */
typedef struct gt_stream_header {
	uint16_t major, minor, oldest_major; /**< filled by the encoder */
	uint16_t flags;			     /**< reserved, 0 */
	uint32_t producer;		     /**< gt_producer */
	uint32_t pid, ppid;
	uint64_t trace_ns;	 /**< one instant, trace clock */
	uint64_t realtime_ns;	 /**< same instant, CLOCK_REALTIME */
	uint64_t monotonic_ns;	 /**< same instant, CLOCK_MONOTONIC */
	uint32_t cupti_version;	 /**< cuptiGetVersion(), 0 if none */
	uint32_t driver_version; /**< cuDriverGetVersion(), 0 if unknown */
	uint32_t kinds;		 /**< GT_KIND_* enabled at start */
	char hostname[256];
	char cmdline[1024];	   /**< argv joined by spaces, cut */
	char producer_version[64]; /**< e.g. "gaptrace 0.1.0" */
	char session[64];	   /**< collector session id, or "" */
	uint32_t ndevices;
	gt_device devices[GT_MAX_DEVICES];
} gt_stream_header;

/** Fill the version fields and zero the rest. */
GT_API void gt_stream_header_init(gt_stream_header *h);

/**
 * Encode a header into buf. @return the encoded length (> 0), or
 * GT_ERR_LIMIT when cap is too small (call with cap 0 to learn the size).
 */
GT_API int gt_stream_header_encode(const gt_stream_header *h, uint8_t *buf, size_t cap);

/**
 * Length of the whole header, read from its first 24 bytes.
 * @return the length, GT_ERR_AGAIN if len < 24, or GT_ERR_MAGIC /
 *         GT_ERR_LIMIT / GT_ERR_CORRUPT.
 */
GT_API int gt_stream_header_peek_len(const uint8_t *buf, size_t len);

/**
 * Decode a complete header (buf holds at least the peeked length).
 * Checks magic, CRC and version compatibility: a stream whose oldest
 * compatible major is newer than GT_FORMAT_MAJOR gives GT_ERR_VERSION with
 * both versions in ei->msg. Unknown trailing fields are skipped.
 * @return the header length consumed, or a negative gt_err (ei filled).
 */
GT_API int gt_stream_header_decode(const uint8_t *buf, size_t len, gt_stream_header *h,
				   gt_errinfo *ei);

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

/** Frame flag bits (gt_frame_info.flags). */
enum {
	GT_FRAME_ZSTD = 1u << 0, /**< payload is one zstd frame; else raw */
};

/** A decoded frame header. */
typedef struct gt_frame_info {
	uint32_t comp_len; /**< payload bytes that follow the 32-byte header */
	uint32_t raw_len;  /**< payload bytes after decompression */
	uint32_t flags;	   /**< GT_FRAME_* */
	uint32_t nrecords; /**< rows in the frame (all blocks) */
	uint64_t seq;	   /**< producer's frame sequence number, from 0 */
	uint32_t crc;	   /**< CRC32C of header bytes 0..27 and the payload */
} gt_frame_info;

/**
 * Decode and sanity-check a 32-byte frame header (magic, caps, reserved
 * bits). Does not check the CRC (it covers the payload too).
 * @return 0 or GT_ERR_MAGIC / GT_ERR_LIMIT / GT_ERR_RESERVED / GT_ERR_AGAIN.
 */
GT_API int gt_frame_header_decode(const uint8_t *buf, size_t len, gt_frame_info *fi);

/** Check a frame's CRC given its decoded header and payload.
 *  @return 0 or GT_ERR_CHECKSUM. */
GT_API int gt_frame_verify(const uint8_t *hdr32, const uint8_t *payload, const gt_frame_info *fi);

/** CRC32C (Castagnoli) of buf, continuing from crc (start with 0). */
GT_API uint32_t gt_crc32c(uint32_t crc, const void *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */

/**
 * Output callback: receives exactly one whole stream header or one whole
 * frame per call, so a sink that drops must drop whole calls.
 * @return 0, or a negative gt_err (the writer returns it to its caller; the
 *         frame counts as lost but the writer stays usable).
 */
typedef int (*gt_sink_fn)(void *user, const void *buf, size_t len);

/** Writer options, size-prefixed (see "Option structs" at the top):
 *  declare with GT_OPTS, or zero-initialize and set what you need. */
typedef struct gt_writer_opts {
	size_t sz;		   /**< sizeof(gt_writer_opts) (GT_OPTS sets it); 0 = the
					first layout, GT_WRITER_OPTS_SZ_V1 */
	int zstd_level;		   /**< 0 = default (1); negative = zstd "fast" levels */
	uint32_t frame_rows;	   /**< record rows per frame before an automatic flush;
					0 = 32768, at most 32768 (every frame then passes
					GT_FRAME_MAX_RECORDS_PER_BYTE whatever its size) */
	uint32_t max_strings;	   /**< intern table cap (strings); 0 = 1 << 20,
					at most GT_MAX_STRINGS - 1 */
	uint64_t max_string_bytes; /**< intern table cap (bytes); 0 = 256 MiB */
	int no_compress;	   /**< 1: store every frame uncompressed (debugging; the
					example stream of FORMAT.md) */
} gt_writer_opts;
/** Size of gt_writer_opts's first layout (sz through no_compress). */
#define GT_WRITER_OPTS_SZ_V1 36

typedef struct gt_writer gt_writer;

/**
 * Create a writer. The sink is called from gt_writer_begin, gt_writer_add*
 * (when a frame fills up) and gt_writer_flush, never from gt_writer_intern.
 *
 * Memory: each record type in use holds a chunk of 256 rows and its
 * encoded columns (about twice the encoded bytes of a frame, kept between
 * frames); the intern table holds every string until gt_writer_free (capped
 * by max_strings / max_string_bytes); the frame buffers are bounded by the
 * frame budget (a frame payload never exceeds GT_FRAME_MAX_COMPRESSED
 * bytes, so every frame a writer emits passes every reader's caps).
 * @return NULL on allocation failure (errno = ENOMEM) or on options this
 *         library cannot read (errno = EINVAL: see "Option structs").
 */
GT_API gt_writer *gt_writer_new(const gt_writer_opts *opts, gt_sink_fn sink, void *user);

/** Free a writer (accepts NULL). Does not flush: call gt_writer_flush first. */
GT_API void gt_writer_free(gt_writer *w);

/**
 * Encode the stream header and pass it to the sink. Call once, first.
 * @return 0; GT_ERR_INVAL (NULL w or h, or called again after it
 *         succeeded); gt_stream_header_encode's error (h cannot be encoded);
 *         GT_ERR_NOMEM; or the sink's error (then it may be called again).
 */
GT_API int gt_writer_begin(gt_writer *w, const gt_stream_header *h);

/**
 * Append one record (any type but GT_REC_STRING, which gt_writer_intern
 * writes). Copies what it needs. May flush a full frame to the sink.
 * @return 0; GT_ERR_INVAL for a bad type; GT_ERR_NOMEM when the record
 *         could not be stored (it is not added); or the error of the flush
 *         this record triggered (the sink's, or NOMEM): the record was added
 *         and went down with that frame (see gt_writer_flush).
 */
GT_API int gt_writer_add(gt_writer *w, const gt_record *rec);

/** Typed shortcuts for gt_writer_add (same semantics, no union copy). */
GT_API int gt_writer_add_kernel(gt_writer *w, const gt_kernel *k);
GT_API int gt_writer_add_memcpy(gt_writer *w, const gt_memcpy *m);
GT_API int gt_writer_add_api(gt_writer *w, const gt_api *a);

/**
 * Intern a string: returns its id (ids are 1, 2, 3... in order of first
 * sight). A new string is written as a GT_REC_STRING row at the front of
 * the next frame, before any record that could use it; if the sink refuses
 * that frame, the string goes out again with the following one, so names
 * stay resolvable after a sink failure. Strings longer than GT_STRING_MAX
 * are cut. When the table is full (or memory runs out) returns 0 and counts
 * it (gt_writer_strings_dropped). Never calls the sink, never fails otherwise.
 */
GT_API uint32_t gt_writer_intern(gt_writer *w, const char *s, size_t len);

/**
 * Queue every string interned so far for the next flush again (O(1); the
 * flush sends them in strings-only frames when they exceed one frame's
 * string budget). Call after switching the sink to a new destination (e.g.
 * a fallback file after the collector went away), so that the new
 * destination can resolve all names. @return 0, or GT_ERR_INVAL for NULL.
 */
GT_API int gt_writer_resend_strings(gt_writer *w);

/** Number of intern requests answered with 0 because the table was full. */
GT_API uint64_t gt_writer_strings_dropped(const gt_writer *w);

/**
 * Encode pending records (and strings not yet accepted by the sink) as one
 * frame and pass it to the sink; strings that exceed one frame's budget go
 * first in strings-only frames. No-op (returns 0) when nothing is pending.
 * Every frame built takes the next sequence number, whether or not the sink
 * accepted it, so readers see refused frames as a sequence gap.
 * On failure (the sink's error, or GT_ERR_NOMEM) the pending records are
 * dropped and counted in gt_writer_stats.lost_records (the writer does not
 * write a GT_REC_LOSS itself: the producer knows the time span and why);
 * pending strings are kept and retried. The writer stays usable.
 */
GT_API int gt_writer_flush(gt_writer *w);

/** Rows waiting for a flush: records plus strings the sink has not accepted. */
GT_API uint32_t gt_writer_pending(const gt_writer *w);

/** Sequence number the next frame will get. */
GT_API uint64_t gt_writer_next_seq(const gt_writer *w);

/** Statistics of a writer. */
typedef struct gt_writer_stats {
	uint64_t records;      /**< rows (records and strings) in frames flushed */
	uint64_t frames;       /**< frames flushed, accepted by the sink or not
				    (accepted = frames - sink_errors when the header went through) */
	uint64_t raw_bytes;    /**< payload bytes before compression, frames flushed */
	uint64_t out_bytes;    /**< bytes the sink accepted (header + frames) */
	uint64_t sink_errors;  /**< sink calls refused (frames, or the header) */
	uint64_t lost_records; /**< record rows dropped: refused frames, out of memory */
} gt_writer_stats;

/** Copy the writer's statistics. */
GT_API void gt_writer_get_stats(const gt_writer *w, gt_writer_stats *st);

/**
 * A ready-made sink writing to a file descriptor: user points to an int fd
 * (a file, a socket or a pipe). Never raises SIGPIPE (sockets: send with
 * MSG_NOSIGNAL; pipes: SIGPIPE blocked around the write), so a collector
 * that went away cannot kill the traced process. Retries EINTR and short
 * writes. Non-blocking fds: when nothing could be written the call returns
 * GT_ERR_AGAIN and the frame is not sent at all; once part of a frame is
 * out, it waits (up to 1 s at a time without progress) to send the rest,
 * so frames are never cut by the sink itself.
 * @return 0; GT_ERR_AGAIN (see above); GT_ERR_CLOSED (EPIPE, ECONNRESET:
 *         the peer is gone); GT_ERR_FULL (ENOSPC, EDQUOT); GT_ERR_IO
 *         (anything else, or a stall of 1 s mid-frame). It truncates
 *         nothing: what was written stays.
 */
GT_API int gt_sink_fd(void *user, const void *buf, size_t len);

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

/** Reader options, size-prefixed (see "Option structs" at the top):
 *  declare with GT_OPTS, or zero-initialize and set what you need. */
typedef struct gt_reader_opts {
	size_t sz;		   /**< sizeof(gt_reader_opts) (GT_OPTS sets it); 0 = the
					first layout, GT_READER_OPTS_SZ_V1 */
	int stop_on_corrupt;	   /**< 1: stop at the first bad frame; 0: resync and go on */
	uint64_t max_string_bytes; /**< total interned bytes cap; 0 = 512 MiB */
	uint32_t max_strings;	   /**< interned strings cap; 0 = 1 << 22 */
	/**
	 * Record budget, for readers that keep what they read (0 = none): at
	 * most this many records per byte of the input (its size when known: a
	 * regular file or a memory buffer; else the bytes read up to the end of
	 * the frame at hand). The first frame that would pass it and every frame
	 * after it are checked (checksum, sequence number) and counted
	 * (gt_reader_stats.budget_*), but their records are not returned; the
	 * log callback hears of it once, with the offset. Not an error, in
	 * strict mode either. A frame itself holds at most
	 * GT_FRAME_MAX_RECORDS_PER_BYTE records per byte: this is for callers
	 * whose memory grows with the records (the analysis uses 256).
	 */
	uint32_t max_records_per_byte;
} gt_reader_opts;
/** Size of gt_reader_opts's first layout (sz through max_records_per_byte). */
#define GT_READER_OPTS_SZ_V1 32

/** What a reader has seen so far (final after gt_reader_next returns 0). */
typedef struct gt_reader_stats {
	uint64_t bytes;		   /**< bytes consumed, header included */
	uint64_t frames;	   /**< good frames */
	uint64_t records;	   /**< records returned */
	uint64_t bad_frames;	   /**< damaged places skipped: each run of unreadable bytes
					between good frames counts once, and so does each
					checksum-valid frame with a malformed payload */
	uint64_t bad_bytes;	   /**< bytes in those damaged places */
	uint64_t tail_bytes;	   /**< bytes of an incomplete frame at the end (a cut file) */
	uint64_t seq_missing;	   /**< sequence numbers never seen between good frames
					(refused by a sink, dropped, or damaged) */
	uint64_t skipped_blocks;   /**< blocks of unknown record types skipped */
	uint64_t first_bad_offset; /**< offset of the first problem, or UINT64_MAX */
	uint64_t strings_dropped;  /**< strings not kept: id or table caps exceeded */
	uint64_t budget_frames;	   /**< good frames not read: over the record budget
					(gt_reader_opts.max_records_per_byte) */
	uint64_t budget_records;   /**< the records of those frames (their headers') */
	uint64_t budget_offset;	   /**< offset of the first of them, or UINT64_MAX */
	uint64_t dup_frames;	   /**< good frames skipped: their sequence number was
					read already (a frame written twice, a file
					appended to itself, the same stream read twice
					through a shared gt_seqset) */
	uint64_t backward_frames;  /**< good frames read whose sequence number is lower
					than the frame before (out of order, or two
					streams in one file); no stream writes them */
} gt_reader_stats;

/**
 * Called for every problem the reader steps over (a skipped frame, a
 * sequence gap, a cut tail) when stop_on_corrupt is 0. ei->offset says where.
 */
typedef void (*gt_reader_log_fn)(void *user, const gt_errinfo *ei);

typedef struct gt_reader gt_reader;

/**
 * Open a trace file for reading without ever blocking on it: a FIFO (whose
 * open(2) waits for a writer), a directory, a socket or a device is refused
 * at once (GT_ERR_INVAL, the message says what it is); only regular files
 * (or symbolic links to them) are opened. The returned fd is in blocking
 * mode, O_CLOEXEC; the caller closes it.
 * @return the fd, or a negative gt_err with *ei filled (GT_ERR_IO and the
 *         strerror text when open or fstat fails).
 */
GT_API int gt_trace_file_open(const char *path, gt_errinfo *ei);

/**
 * The trace files of a directory: every entry named `*.gtrace` not starting
 * with '.', as "dir/name", in name order (regular or not: opening them says
 * what is wrong with one that is not). The one directory walk of the tools.
 * @return 0 with *paths and *n set (free with gt_trace_dir_free; *n may be
 *         0), or a negative gt_err with *ei filled (the directory cannot be
 *         read, GT_ERR_NOMEM).
 */
GT_API int gt_trace_dir_list(const char *dir, char ***paths, size_t *n, gt_errinfo *ei);

/** Free what gt_trace_dir_list returned (accepts NULL). */
GT_API void gt_trace_dir_free(char **paths, size_t n);

/**
 * Open a trace file and read its header. @return NULL on failure with *ei
 * filled (a missing file gives GT_ERR_IO and the strerror text; a FIFO or
 * anything else that is not a regular file GT_ERR_INVAL, at once: see
 * gt_trace_file_open; options this library cannot read GT_ERR_INVAL: see
 * "Option structs").
 */
GT_API gt_reader *gt_reader_open(const char *path, const gt_reader_opts *opts, gt_errinfo *ei);

/** Same, over an open fd (file, pipe or socket). The reader does not close it. */
GT_API gt_reader *gt_reader_open_fd(int fd, const gt_reader_opts *opts, gt_errinfo *ei);

/** Same, over a memory buffer the caller keeps alive until gt_reader_close. */
GT_API gt_reader *gt_reader_open_mem(const void *buf, size_t len, const gt_reader_opts *opts,
				     gt_errinfo *ei);

/** Close a reader (accepts NULL). Closes the file opened by gt_reader_open. */
GT_API void gt_reader_close(gt_reader *r);

/** Install a problem callback (see gt_reader_log_fn). */
GT_API void gt_reader_set_log(gt_reader *r, gt_reader_log_fn fn, void *user);

/** The stream header (valid until gt_reader_close). */
GT_API const gt_stream_header *gt_reader_header(const gt_reader *r);

/**
 * Next record. Strings referenced by later records are interned
 * automatically (see gt_reader_string). Pointers inside *rec (gt_string.str)
 * stay valid until the next call.
 * @return 1 with *rec filled; 0 at the end of the stream (a cut tail or
 *         skipped frames are in the stats, not errors); a negative gt_err on
 *         a fatal error (I/O, or a bad frame with stop_on_corrupt), with
 *         gt_reader_error() describing it.
 */
GT_API int gt_reader_next(gt_reader *r, gt_record *rec);

/**
 * The sequence numbers of the frames read from one stream. A frame whose
 * number a reader finds in its set was read already: it is skipped as a
 * duplicate (gt_reader_stats.dup_frames) and its records are not returned.
 * Each reader has its own set; readers of the files of one stream (a trace
 * continued in a fallback file, the same file given twice, a copy of it)
 * can share one, so no frame is read twice across them. Not thread-safe:
 * the readers sharing a set are used one after the other.
 */
typedef struct gt_seqset gt_seqset;

/** A new, empty set, or NULL with errno ENOMEM. */
GT_API gt_seqset *gt_seqset_new(void);
/** Free a set (accepts NULL); no reader may use it any more. */
GT_API void gt_seqset_free(gt_seqset *s);
/** Make r use s (shared, owned by the caller, which keeps it alive until r
 *  is closed) instead of its own set; call before the first gt_reader_next.
 *  NULL goes back to the reader's own set. */
GT_API void gt_reader_share_seqs(gt_reader *r, gt_seqset *s);

/** Interned string by id, NUL terminated, valid until close; NULL if unknown. */
GT_API const char *gt_reader_string(const gt_reader *r, uint32_t id);

/** Statistics so far. */
GT_API const gt_reader_stats *gt_reader_get_stats(const gt_reader *r);

/** The last error (code 0 when none). */
GT_API const gt_errinfo *gt_reader_error(const gt_reader *r);

/** Statistics of a recovery (gt_trace_recover). */
typedef struct gt_recover_stats {
	uint64_t frames_kept;
	uint64_t frames_dropped;
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t bytes_lost; /**< bytes of the input not carried over */
} gt_recover_stats;

/**
 * Rewrite a damaged trace: copy its header and every frame whose checksum
 * and payload verify, drop the rest (cut tail, corrupt frames). The output
 * is written to a temporary name beside out_path and renamed when complete,
 * so out_path is never left half-written. in_path may not equal out_path.
 * @return 0 or a negative gt_err (ei filled).
 */
GT_API int gt_trace_recover(const char *in_path, const char *out_path, gt_recover_stats *st,
			    gt_errinfo *ei);

/* ------------------------------------------------------------------ */
/* Clock mapping                                                       */
/* ------------------------------------------------------------------ */

/** Maps a stream's trace clock to CLOCK_REALTIME (ns) piecewise-linearly. */
typedef struct gt_clock_map {
	int64_t offset; /**< realtime - trace at the anchor */
	uint64_t anchor_trace;
	double slope; /**< d(realtime)/d(trace), 1.0 when unknown */
} gt_clock_map;

/** Initialize a map from a stream header's clock triple. */
GT_API void gt_clock_map_init(gt_clock_map *m, const gt_stream_header *h);
/** Refine the map with a later GT_REC_CLOCK triple (estimates the slope). */
GT_API void gt_clock_map_update(gt_clock_map *m, const gt_clock *c);
/** Convert a trace-clock timestamp to realtime ns. */
GT_API uint64_t gt_clock_map_apply(const gt_clock_map *m, uint64_t trace_ns);

/**
 * The one slicing rule (`--from/--to`, gt_analysis_opts from_ns/to_ns):
 * whether a record of trace-clock times [start, end], mapped to realtime
 * with m, lies in the half-open window [from_ns, to_ns) (realtime ns; 0 =
 * no bound on that side). Every reader that slices records uses it (the
 * analysis's loader, the exports that read records themselves), so that
 * every output of one slice keeps the same records.
 *
 *  - an instant (end == start; an end before the start counts as the
 *    start) is kept when from_ns <= start < to_ns: one at exactly from_ns
 *    is in, one at exactly to_ns out;
 *  - a span (end > start) is kept when it overlaps the window, start <
 *    to_ns and end > from_ns: one that ends at exactly from_ns or starts
 *    at exactly to_ns is out (it has no nanosecond inside).
 *
 * Both are "start < to_ns, and start >= from_ns or end > from_ns". Only
 * reads m (thread-safe on a map no one updates meanwhile).
 * @return 1 keep, 0 drop.
 */
GT_API int gt_clock_map_in_slice(const gt_clock_map *m, uint64_t from_ns, uint64_t to_ns,
				 uint64_t start, uint64_t end);

/* ------------------------------------------------------------------ */
/* Control protocol (collector -> producer)                            */
/* ------------------------------------------------------------------ */

/** Control message types. */
typedef enum gt_ctl_type {
	GT_CTL_ACCEPT = 1,   /**< handshake OK: arg0 = collector major<<16|minor,
				  arg1 = GT_KIND_* to capture now (0 = stay dormant) */
	GT_CTL_MISMATCH = 2, /**< handshake refused: arg0 = collector major<<16|minor,
				  arg1 = collector oldest major; text = why. Then close. */
	GT_CTL_ARM = 3,	     /**< start capturing arg0 = GT_KIND_* for arg1 ns (0 = until DISARM) */
	GT_CTL_DISARM = 4,   /**< stop capturing, flush what is buffered */
	GT_CTL_FLUSH = 5,    /**< flush buffered records now */
	GT_CTL_BYE = 6,	     /**< collector is going away: finish or fall back to file */
	GT_CTL_LIVE = 7,     /**< (1.6) the collector analyses live: while armed, send a
				  GT_REC_MARK about every arg0 ns (0 = stop) */
} gt_ctl_type;

/** Size of the fixed part of a control message. */
#define GT_CTL_HEADER_SIZE 28
/** Largest control message text. */
#define GT_CTL_TEXT_MAX 200

/** A control message. */
typedef struct gt_ctl {
	uint32_t type; /**< gt_ctl_type */
	uint64_t arg0, arg1;
	char text[GT_CTL_TEXT_MAX + 1]; /**< NUL terminated, may be empty */
} gt_ctl;

/** Encode a message. @return its length, or GT_ERR_LIMIT if cap is short. */
GT_API int gt_ctl_encode(const gt_ctl *m, uint8_t *buf, size_t cap);

/**
 * Decode one message from the front of buf. A type this version does not
 * know decodes normally (m->type tells): ignore it, a newer collector may
 * send it.
 * @return bytes consumed (> 0), GT_ERR_AGAIN if more bytes are needed, or
 *         GT_ERR_MAGIC / GT_ERR_LIMIT (text too long) / GT_ERR_CORRUPT
 *         (type 0) / GT_ERR_CHECKSUM.
 */
GT_API int gt_ctl_decode(const uint8_t *buf, size_t len, gt_ctl *m);

/** Library version string, e.g. "0.1.0". */
GT_API const char *gt_version(void);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_FORMAT_H */
