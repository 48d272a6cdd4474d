/* SPDX-License-Identifier: MIT */
/*
 * gaptrace/collector.h - the side-car collector: receives the streams of
 * traced processes over a unix socket and writes one trace file per process,
 * samples NVML, and relays arm/disarm commands to producers.
 *
 * One gt_collector is one epoll loop on one thread (the caller of
 * gt_collector_run). Producers connect to its socket, send a stream header,
 * get GT_CTL_ACCEPT or GT_CTL_MISMATCH (format.h) and then send frames, which
 * the collector verifies (header caps, CRC32C) and appends unchanged to
 * `<trace_dir>/<pid>.gtrace`. Only whole verified frames are written, so a
 * crash of the producer or of the collector loses at most the frame in
 * flight. A peer that breaks the protocol is dropped with one log line; its
 * file keeps every good frame; other peers are never affected.
 *
 * Files and permissions
 *   The producer socket lives in a private directory: created with mode 0700
 *   when missing; an existing one must be a real directory (not a symlink)
 *   owned by the effective uid with no group/other permission bits, else
 *   gt_collector_new refuses it. A peer is served only when SO_PEERCRED says
 *   it runs as the same uid or as root. The control socket `control.sock`
 *   lives beside the producer socket, under the same rules. Traces are
 *   private (directory 0700, files 0600) unless share_group gives them to
 *   one group (0750 / 0640).
 *
 * Control protocol (control.sock, unix SOCK_STREAM, text)
 *   A client sends request lines (at most GT_CONTROL_LINE_MAX bytes, ending
 *   in '\n'); for each request the collector answers zero or more data lines
 *   and then exactly one final line that starts with "ok" or "error ".
 *   Several requests may be sent on one connection, one after the other.
 *
 *     list                        one line per connected producer:
 *                                   "peer PID STATE kinds=K frames=N records=N
 *                                    bytes=N gaps=N file=PATH"
 *                                 (STATE: handshake, dormant, armed;
 *                                  K: gt_kinds_format names), then "ok N"
 *     stats                       "ok peers=N total=N refused=N dropped=N
 *                                  frames=N records=N bytes=N gaps=N
 *                                  unwritten=N nvml=N max=N mem=N budget=N
 *                                  waiting=N lost_frames=N lost_records=N"
 *                                  (see gt_collector_stats: max = peers_max,
 *                                  mem = mem_used, budget = mem_budget,
 *                                  waiting = peers_waiting)
 *     arm <pid|all> <kinds> <ns>  send GT_CTL_ARM(kinds, ns) (kinds in
 *                                 gt_kinds_parse syntax, no spaces; ns = 0:
 *                                 until disarmed, else 1 ms..366 days:
 *                                 gt_duration_ok) -> "ok N" (producers told)
 *     disarm <pid|all>            send GT_CTL_DISARM -> "ok N"
 *     flush <pid|all>             send GT_CTL_FLUSH -> "ok N"
 *
 *   "all" also changes what later producers are told at connect time:
 *   `arm all K NS` makes new producers start armed with K (and, when NS > 0,
 *   the collector disarms them when the NS window ends); `disarm all` makes
 *   them start dormant. A pid that matches no connected producer answers
 *   "error no producer with pid P". Unknown requests answer "error ...".
 *
 * Thread safety: gt_collector_run runs on one thread. gt_collector_stop is
 * async-signal-safe and may be called from any thread or a signal handler.
 * gt_collector_get_stats, gt_collector_peers, gt_collector_arm/disarm/flush
 * and the path getters may be called from any thread while run is active.
 * gt_collector_close is called once, after gt_collector_run has returned
 * (or was never called).
 */
#ifndef GAPTRACE_COLLECTOR_H
#define GAPTRACE_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "gaptrace/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

/** Log levels passed to a gt_log_fn. */
typedef enum gt_log_level {
	GT_LOG_ERROR = 0, /**< something failed: data was or will be lost */
	GT_LOG_WARN = 1,  /**< a peer was refused or dropped, a file stopped */
	GT_LOG_INFO = 2,  /**< start/stop, NVML availability */
	GT_LOG_DEBUG = 3, /**< per-connection detail */
} gt_log_level;

/**
 * Log callback. msg is one line without a trailing newline, valid for the
 * call only. Called from the collector's threads (loop or NVML sampler), so
 * it must be thread-safe when both are running.
 */
typedef void (*gt_log_fn)(void *user, int level, const char *msg);

/* ------------------------------------------------------------------ */
/* Producers as the collector sees them                                */
/* ------------------------------------------------------------------ */

/** Lifecycle of one producer connection (gt_peer_info.state). */
typedef enum gt_peer_state {
	GT_PEER_HANDSHAKE = 0, /**< connected, stream header not complete yet */
	GT_PEER_DORMANT = 1,   /**< accepted, not capturing */
	GT_PEER_ARMED = 2,     /**< accepted, capturing */
	GT_PEER_CLOSED = 3,    /**< ended its stream cleanly */
	GT_PEER_DROPPED = 4,   /**< dropped for a protocol error or a stall */
	GT_PEER_REFUSED = 5,   /**< refused at the handshake (never accepted) */
} gt_peer_state;

/** Name of a gt_peer_state ("handshake", "dormant", ...), never NULL. */
GT_API const char *gt_peer_state_name(int state);

/** What the collector knows about one producer connection. */
typedef struct gt_peer_info {
	uint64_t id;		   /**< connection number, from 1 */
	uint32_t pid;		   /**< from the stream header (SO_PEERCRED until then) */
	uint32_t uid;		   /**< SO_PEERCRED */
	int state;		   /**< gt_peer_state */
	uint32_t kinds;		   /**< GT_KIND_* it was last told to capture */
	uint64_t frames;	   /**< verified frames */
	uint64_t records;	   /**< sum of the frames' record counts */
	uint64_t bytes;		   /**< stream bytes received, header included */
	uint64_t seq_gaps;	   /**< frames missing by sequence number */
	uint64_t frames_unwritten; /**< verified frames not written (disk full) */
	uint64_t connect_ns;	   /**< CLOCK_REALTIME at accept */
	uint64_t end_ns;	   /**< CLOCK_REALTIME at the end, 0 while connected */
	char path[512];		   /**< trace file, "" before the handshake */
	char cmdline[160];	   /**< start of the header's cmdline */
	char reason[256];	   /**< why it was refused/dropped, else "" */
	/** frames received in part and discarded when the connection ended
	 *  inside them (stall, EOF, drop, close), and the records their headers
	 *  announced (0 when the header itself was incomplete) */
	uint64_t frames_lost;
	uint64_t records_lost;
} gt_peer_info;

/** gt_peer_fn events. */
typedef enum gt_peer_event {
	GT_PEER_CONNECTED = 1,	  /**< handshake accepted */
	GT_PEER_DISCONNECTED = 2, /**< an accepted peer ended (closed or dropped) */
} gt_peer_event;

/** Called on the loop thread when a producer is accepted or goes away. */
typedef void (*gt_peer_fn)(void *user, int event, const gt_peer_info *p);

/* ------------------------------------------------------------------ */
/* NVML                                                                */
/* ------------------------------------------------------------------ */

/* Structures with the byte layout of NVML's own (nvml.h), so that the
 * functions dlsym'd from libnvidia-ml.so.1 fill them directly. */

/** nvmlMemory_t */
typedef struct gt_nvml_memory {
	unsigned long long total, free, used;
} gt_nvml_memory;

/** nvmlUtilization_t */
typedef struct gt_nvml_utilization {
	unsigned int gpu, memory;
} gt_nvml_utilization;

/** nvmlViolationTime_t */
typedef struct gt_nvml_violation {
	unsigned long long reference_time; /**< µs, CPU timestamp */
	unsigned long long violation_time; /**< ns, cumulative */
} gt_nvml_violation;

/** nvmlProcessUtilizationSample_t */
typedef struct gt_nvml_proc_sample {
	unsigned int pid;
	unsigned long long timestamp; /**< µs, CPU timestamp (CLOCK_REALTIME) */
	unsigned int sm_util, mem_util, enc_util, dec_util;
} gt_nvml_proc_sample;

/** nvmlPciInfo_t (v3) */
typedef struct gt_nvml_pci {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
} gt_nvml_pci;

/** nvmlGpmSample_t: a GPM sample buffer (nvmlGpmSampleAlloc). */
typedef struct gt_nvml_gpm_sample {
	void *handle;
} gt_nvml_gpm_sample;

/** nvmlGpmSupport_t */
typedef struct gt_nvml_gpm_support {
	unsigned int version;	   /**< IN: GT_NVML_GPM_SUPPORT_VERSION */
	unsigned int is_supported; /**< OUT: isSupportedDevice */
} gt_nvml_gpm_support;

/** nvmlGpmMetric_t */
typedef struct gt_nvml_gpm_metric {
	unsigned int metric_id; /**< IN: NVML_GPM_METRIC_* */
	int nvml_return;	/**< OUT: 0 when value is valid */
	double value;		/**< OUT */
	struct {
		char *short_name, *long_name, *unit;
	} info; /**< OUT, may be NULL */
} gt_nvml_gpm_metric;

/** Room for metrics in gt_nvml_gpm_metrics_get: NVML's own array is
 *  NVML_GPM_METRIC_MAX long (98 in R520, 333 in R550) and grows with new
 *  drivers; ours is larger, so a driver newer than this header never
 *  reaches past it. Only num_metrics entries are read and written. */
#define GT_NVML_GPM_METRICS_CAP 1024

/** nvmlGpmMetricsGet_t */
typedef struct gt_nvml_gpm_metrics_get {
	unsigned int version;		     /**< IN: GT_NVML_GPM_METRICS_GET_VERSION */
	unsigned int num_metrics;	     /**< IN: entries of metrics[] to fill */
	gt_nvml_gpm_sample sample1, sample2; /**< IN: the older and the newer sample */
	gt_nvml_gpm_metric metrics[GT_NVML_GPM_METRICS_CAP];
} gt_nvml_gpm_metrics_get;

#define GT_NVML_GPM_SUPPORT_VERSION 1	  /**< NVML_GPM_SUPPORT_VERSION */
#define GT_NVML_GPM_METRICS_GET_VERSION 1 /**< NVML_GPM_METRICS_GET_VERSION */

/** The NVML_GPM_METRIC_* ids the sampler reads (nvmlGpmMetricId_t values). */
enum {
	GT_NVML_GPM_SM_UTIL = 2,
	GT_NVML_GPM_SM_OCCUPANCY = 3,
	GT_NVML_GPM_ANY_TENSOR_UTIL = 5,
	GT_NVML_GPM_DRAM_BW_UTIL = 10,
	GT_NVML_GPM_FP64_UTIL = 11,
	GT_NVML_GPM_FP32_UTIL = 12,
	GT_NVML_GPM_FP16_UTIL = 13,
	GT_NVML_GPM_PCIE_TX_PER_SEC = 20,	  /**< MiB/s */
	GT_NVML_GPM_PCIE_RX_PER_SEC = 21,	  /**< MiB/s */
	GT_NVML_GPM_NVLINK_TOTAL_RX_PER_SEC = 60, /**< MiB/s */
	GT_NVML_GPM_NVLINK_TOTAL_TX_PER_SEC = 61, /**< MiB/s */
};

/** NVML return codes the sampler distinguishes (nvmlReturn_t values). */
enum {
	GT_NVML_SUCCESS = 0,
	GT_NVML_ERROR_NOT_SUPPORTED = 3,
	GT_NVML_ERROR_NO_PERMISSION = 4,
	GT_NVML_ERROR_NOT_FOUND = 6,
	GT_NVML_ERROR_INSUFFICIENT_SIZE = 7,
};

/**
 * The NVML functions the sampler calls, with NVML's signatures (a device is
 * an nvmlDevice_t, i.e. a pointer; enums are ints; returns nvmlReturn_t).
 * The sampler fills one with dlsym from libnvidia-ml.so.1; tests pass their
 * own. A NULL member means "not available": the metric reads as not
 * supported. init, device_count and device_handle are required.
 */
typedef struct gt_nvml_api {
	int (*init)(void);				    /**< nvmlInit_v2 */
	int (*shutdown)(void);				    /**< nvmlShutdown */
	int (*device_count)(unsigned int *n);		    /**< nvmlDeviceGetCount_v2 */
	int (*device_handle)(unsigned int idx, void **dev); /**< nvmlDeviceGetHandleByIndex_v2 */
	int (*device_name)(void *dev, char *buf, unsigned int len); /**< nvmlDeviceGetName */
	int (*device_uuid)(void *dev, char *buf, unsigned int len); /**< nvmlDeviceGetUUID */
	int (*device_pci)(void *dev, gt_nvml_pci *pci);		    /**< nvmlDeviceGetPciInfo_v3 */
	int (*cuda_cc)(void *dev, int *major,
		       int *minor); /**< nvmlDeviceGetCudaComputeCapability */
	int (*max_clock)(void *dev, int type, unsigned int *mhz); /**< nvmlDeviceGetMaxClockInfo */
	int (*clock)(void *dev, int type, unsigned int *mhz);	  /**< nvmlDeviceGetClockInfo */
	int (*memory)(void *dev, gt_nvml_memory *m);		  /**< nvmlDeviceGetMemoryInfo */
	int (*power)(void *dev, unsigned int *mw);		  /**< nvmlDeviceGetPowerUsage */
	int (*temperature)(void *dev, int sensor, unsigned int *c); /**< nvmlDeviceGetTemperature */
	int (*utilization)(void *dev, gt_nvml_utilization *u); /**< nvmlDeviceGetUtilizationRates */
	/** nvmlDeviceGetCurrentClocksEventReasons (or ...ClocksThrottleReasons) */
	int (*clocks_event_reasons)(void *dev, unsigned long long *reasons);
	/** nvmlDeviceGetViolationStatus (policy 0 = power, 1 = thermal) */
	int (*violation)(void *dev, int policy, gt_nvml_violation *v);
	int (*energy)(void *dev,
		      unsigned long long *mj); /**< nvmlDeviceGetTotalEnergyConsumption */
	/** nvmlDeviceGetProcessUtilization */
	int (*process_utilization)(void *dev, gt_nvml_proc_sample *s, unsigned int *count,
				   unsigned long long last_seen_us);
	int (*cuda_driver_version)(int *v);		 /**< nvmlSystemGetCudaDriverVersion_v2 */
	int (*power_limit)(void *dev, unsigned int *mw); /**< nvmlDeviceGetEnforcedPowerLimit */
	/** nvmlDeviceGetPowerManagementDefaultLimit */
	int (*default_power_limit)(void *dev, unsigned int *mw);
	/* GPM (R520 and later drivers; Hopper and newer data-center GPUs).
	 * All five are needed; any one NULL turns GPM off. */
	/** nvmlGpmQueryDeviceSupport */
	int (*gpm_query_support)(void *dev, gt_nvml_gpm_support *s);
	int (*gpm_sample_alloc)(gt_nvml_gpm_sample *s);		/**< nvmlGpmSampleAlloc */
	int (*gpm_sample_free)(gt_nvml_gpm_sample s);		/**< nvmlGpmSampleFree */
	int (*gpm_sample_get)(void *dev, gt_nvml_gpm_sample s); /**< nvmlGpmSampleGet */
	int (*gpm_metrics_get)(gt_nvml_gpm_metrics_get *m);	/**< nvmlGpmMetricsGet */
	/** nvmlDeviceGetMigMode (current, pending; 1 = enabled); NULL: no MIG */
	int (*mig_mode)(void *dev, unsigned int *current, unsigned int *pending);
	/** nvmlDeviceGetCurrPcieLinkGeneration (1..6); NULL or failing: link unknown */
	int (*pcie_link_gen)(void *dev, unsigned int *gen);
	/** nvmlDeviceGetCurrPcieLinkWidth (lanes); NULL or failing: link unknown */
	int (*pcie_link_width)(void *dev, unsigned int *width);
} gt_nvml_api;

/**
 * Default NVML rates. Every NVML query is an ioctl into the kernel driver (an
 * RPC to the GPU's firmware on GSP GPUs) that serializes with the traced
 * program's own driver calls, so the sampler asks for little:
 * GT_NVML_DEFAULT_HZ samples per second of the fast set (SM clock, power,
 * temperature, utilization, clocks-event reasons: what the analysis reads)
 * and GT_NVML_DEFAULT_SLOW_HZ of the slow set (per-process utilization,
 * memory clock, memory used, violation counters, energy, power limits).
 */
#define GT_NVML_DEFAULT_HZ 10
#define GT_NVML_DEFAULT_SLOW_HZ 1
/**
 * GPM readings (GT_REC_GPM rows) per second per GPU: default and maximum.
 * NVML computes GPM metrics between two samples that must be at least
 * 100 ms apart, so the rate is never above 10 Hz (a larger request is
 * lowered to it), and successive samples of a GPU are always >= 1/gpm_hz
 * apart, scheduling delays included.
 */
#define GT_GPM_DEFAULT_HZ 10
#define GT_GPM_MAX_HZ 10

/**
 * A PCIe link's capacity per direction in bytes/s, as the sampler writes
 * it in gt_gpm.pcie_link_bps: the generation's transfer rate (gen 1 2.5 and
 * gen 2 5 GT/s, 8b/10b; gen 3 8, gen 4 16, gen 5 32, gen 6 64 GT/s,
 * 128b/130b) times the lanes, over 8, rounded (gen 4 x16: 31507692308).
 * UINT64_MAX for a generation outside 1..6 or a width outside 1..32.
 */
uint64_t gt_pcie_link_bps(unsigned int gen, unsigned int width);

/** Options of an NVML sampler; zero-initialize and set what you need. */
/**
 * A copy of the bytes the collector receives, for the live analysis
 * (gaptrace/live.h): each accepted producer's stream header (GT_TAP_HEADER),
 * every verified frame (GT_TAP_FRAME: whether or not its trace file could
 * take it), and the end of the stream (GT_TAP_END: buf NULL); the NVML
 * sampler's own stream likewise, as stream 0. Producer streams are numbered
 * by connection (1, 2, ...; never reused). Called on the collector's loop
 * thread (producers) or the NVML thread (stream 0), with buf valid during
 * the call only: it must copy and return at once, never block.
 */
typedef void (*gt_tap_fn)(void *user, uint64_t stream, int what, uint32_t pid, const void *buf,
			  size_t len);
enum { GT_TAP_HEADER = 1, GT_TAP_FRAME = 2, GT_TAP_END = 3 };

typedef struct gt_nvml_opts {
	const char *path; /**< trace file to create (O_EXCL); NULL: none (the
			       frames go to the tap only) */
	unsigned int hz;  /**< fast-set samples per second; 0 = GT_NVML_DEFAULT_HZ */
	/** slow-set samples per second (per-process utilization, memory,
	 *  violation counters, energy), at most hz; 0 = GT_NVML_DEFAULT_SLOW_HZ */
	unsigned int proc_hz;
	/** GPM readings per second per GPU; 0 = GT_GPM_DEFAULT_HZ, at most
	 *  GT_GPM_MAX_HZ (GPM needs >= 100 ms between samples) */
	unsigned int gpm_hz;
	int gpm_off;		/**< 1: no GPM readings at all */
	const char *lib;	/**< library to dlopen; NULL = "libnvidia-ml.so.1" */
	const gt_nvml_api *api; /**< use this table instead of dlopen (tests) */
	const char *session;	/**< copied into the stream header */
	gt_log_fn log;		/**< may be NULL */
	void *log_user;
	/** 0: the file is created 0600 (private). 1: 0640, owned by group
	 *  group_gid (see gt_collector_opts.share_group). */
	int share_group;
	uint32_t group_gid;
	gt_tap_fn tap; /**< may be NULL: every header and frame written, as stream 0
			    (gt_collector_opts.tap), on the sampler's thread */
	void *tap_user;
} gt_nvml_opts;

typedef struct gt_nvml_sampler gt_nvml_sampler;

/** Counters of a sampler. */
typedef struct gt_nvml_stats {
	uint32_t devices;      /**< GPUs sampled */
	uint64_t samples;      /**< GT_REC_NVML rows written */
	uint64_t proc_samples; /**< GT_REC_NVML_PROC rows written */
	uint64_t gpm_samples;  /**< GT_REC_GPM rows written */
	uint32_t gpm_devices;  /**< GPUs whose GPM counters are read now */
	uint64_t frames;       /**< frames written */
	int write_error;       /**< gt_err of the write that stopped the file, or 0 */
} gt_nvml_stats;

/**
 * Load NVML (or use opts->api), read the device table, create opts->path
 * (producer GT_PRODUCER_COLLECTOR, trace clock = CLOCK_REALTIME, one
 * GT_REC_DEVICE per GPU keyed by the UUID parsed from NVML's "GPU-..."
 * string) and start the sampling thread. Each sample is one GT_REC_NVML row
 * per GPU; a metric NVML does not support reads UINT32_MAX / UINT64_MAX and
 * is not asked again, and so do the slow-set fields of a row sampled
 * between two slow-set samples. Where the GPU supports GPM, one GT_REC_GPM
 * row per GPU per 1/gpm_hz s holds its hardware counters between two GPM
 * samples; where it does not (functions missing, unsupported GPU, MIG, no
 * permission, any error, then or later), one note says why and GPM stays off
 * on that GPU: never an error. Frames are flushed about once a second, so a crash
 * loses at most a second of samples. A failed write (disk full) truncates
 * the file back to its last whole frame, logs once and stops sampling.
 *
 * @return the sampler, or NULL with *err set: GT_ERR_IO when NVML cannot be
 *         loaded or initialized (logged once at WARN: "NVML not available"),
 *         GT_ERR_CLOSED when it reports no GPU (no file is created in
 *         either case), GT_ERR_INVAL, GT_ERR_NOMEM, or the file's error.
 */
GT_API gt_nvml_sampler *gt_nvml_start(const gt_nvml_opts *opts, int *err);

/** Stop the thread, flush and close the file, shut NVML down, free.
 *  Accepts NULL. Not thread-safe against itself. */
GT_API void gt_nvml_stop(gt_nvml_sampler *s);

/** Copy the sampler's counters (thread-safe). */
GT_API void gt_nvml_get_stats(gt_nvml_sampler *s, gt_nvml_stats *st);

/**
 * Parse an NVML UUID string ("GPU-8e2b7a1c-...", "MIG-...", or bare hex with
 * dashes) into 16 bytes. @return 0, or GT_ERR_INVAL (out zeroed).
 */
GT_API int gt_nvml_parse_uuid(const char *s, uint8_t out[16]);

/* ------------------------------------------------------------------ */
/* The collector                                                       */
/* ------------------------------------------------------------------ */

/** Collector options; zero-initialize and set what you need. */
/**
 * A control request the collector does not know (not list, stats, arm,
 * disarm, flush): line is the request without its newline. @return a
 * malloc'd answer (data lines, then one final line starting "ok" or
 * "error", each ending in '\n'), which the collector frees; NULL: unknown
 * request. Called on the loop thread; must not block.
 */
typedef char *(*gt_control_ext_fn)(void *user, const char *line);

typedef struct gt_collector_opts {
	const char *trace_dir; /**< required; created when missing (see share_group) */
	/**
	 * 0: trace_dir is used as is, created when missing. 1: trace_dir is a
	 * name to make unique (a default name such as gaptrace-YYYYmmdd-HHMMSS):
	 * the collector creates the first of trace_dir, trace_dir-1,
	 * trace_dir-2, ... (up to -9999) that does not exist yet, with one mkdir
	 * each, so collectors started at the same time never share one; an
	 * existing one is never used. gt_collector_trace_dir() says which.
	 */
	int trace_dir_unique;
	const char *socket_path; /**< NULL = gt_collector_default_socket() */
	uint32_t kinds;		 /**< GT_KIND_* new producers are told to capture; 0 = default */
	int dormant;		 /**< 1: new producers are told kinds 0 (until `arm all`) */
	const char *session;	 /**< informational; logged, and copied into nvml.gtrace */
	unsigned int handshake_timeout_ms; /**< header must arrive within; 0 = 2000 */
	unsigned int stall_timeout_ms;	   /**< a started frame must finish within; 0 = 10000 */
	unsigned int max_peers;		   /**< producers at once; 0 = 1024 (lowered
						to what RLIMIT_NOFILE allows) */
	unsigned int nvml_hz;		   /**< 0 = no NVML sampling (gaptrace run and
						collector pass GT_NVML_DEFAULT_HZ) */
	unsigned int nvml_proc_hz;	   /**< see gt_nvml_opts.proc_hz */
	unsigned int gpm_hz;		   /**< see gt_nvml_opts.gpm_hz */
	int gpm_off;			   /**< see gt_nvml_opts.gpm_off */
	const char *nvml_lib;		   /**< see gt_nvml_opts.lib */
	const gt_nvml_api *nvml_api;	   /**< see gt_nvml_opts.api */
	gt_log_fn log;			   /**< may be NULL (nothing is logged) */
	void *log_user;
	gt_peer_fn on_peer; /**< may be NULL */
	void *peer_user;
	/**
	 * Who may read the traces. 0 (default): private, like perf and
	 * Perfetto traces: the trace directory is created 0700 and every file
	 * in it (per-process traces, nvml.gtrace) 0600, whatever the umask.
	 * 1: shared with group group_gid: the directory is created 0750 and the
	 * files 0640, all owned by that group (the caller must be in it, or be
	 * root: gt_group_parse checks). A trace directory that already exists
	 * keeps its owner and mode; only the files follow this rule.
	 */
	int share_group;
	uint32_t group_gid;
	/**
	 * Who may stream traces to the collector (producers). Control clients
	 * (capture, top, the live answers) are always its own uid or root.
	 * GT_PRODUCERS_OWN (0, default): its own uid and root; the socket
	 * directory is private (0700), the producer socket 0600.
	 * GT_PRODUCERS_GROUP: also every process of group producers_gid: the
	 * socket directory is made 0710 and the producer socket 0660, both of
	 * that group, so the kernel lets only its members (effective or
	 * supplementary group) connect; for producers the file permissions
	 * are then the check, not the uid.
	 * GT_PRODUCERS_ANY: every local process (0711 and 0666).
	 * The directory must be ours and not a symlink; its mode is set to the
	 * one above. A producer of another uid can only add a stream (a trace
	 * file, the live windows): it cannot arm, list or read anything.
	 */
	int producers;
	uint32_t producers_gid;
	/**
	 * One budget, in bytes, for the memory of every connection buffer (what
	 * producers and control clients sent that is not consumed yet, half-
	 * received frames included, and what is queued to them). 0 =
	 * GT_COLLECTOR_MEM_BUDGET_DEFAULT; less than GT_COLLECTOR_MEM_BUDGET_MIN
	 * is raised to it. Enforced before allocating: a producer whose bytes do
	 * not fit is not read until memory frees (backpressure, oldest waiter
	 * first); nothing it sent is dropped for it. A frame larger than 3/4 of
	 * the budget can never fit: its producer is dropped with a logged
	 * reason. See gt_collector_new for the whole policy.
	 */
	size_t mem_budget;
	/** 1: write no trace file (nor nvml.gtrace; trace_dir is not created):
	 *  what arrives goes to the tap only (the live analysis). */
	int no_files;
	gt_tap_fn tap; /**< may be NULL: see gt_tap_fn */
	void *tap_user;
	gt_control_ext_fn control_ext; /**< may be NULL: see gt_control_ext_fn */
	void *control_user;
	/**
	 * Delivery marks for the live analysis (format 1.6). Nonzero: right
	 * after GT_CTL_ACCEPT every producer is sent GT_CTL_LIVE with arg0 =
	 * live_mark_ns, asking it for a GT_REC_MARK about every live_mark_ns
	 * while armed (a producer that cannot mark ignores it). 0 (default):
	 * no GT_CTL_LIVE is sent.
	 */
	uint64_t live_mark_ns;
} gt_collector_opts;

/** Default gt_collector_opts.mem_budget: 256 MiB. */
#define GT_COLLECTOR_MEM_BUDGET_DEFAULT ((size_t)256 << 20)
/** Smallest gt_collector_opts.mem_budget: 4 MiB. */
#define GT_COLLECTOR_MEM_BUDGET_MIN ((size_t)4 << 20)

/** Totals of a collector (gt_collector_get_stats). */
typedef struct gt_collector_stats {
	uint32_t peers_active;	/**< accepted producers connected now */
	uint32_t peers_pending; /**< connections still in the handshake */
	uint64_t peers_total;	/**< producers accepted since start */
	uint64_t peers_refused; /**< refused: uid, magic, version, timeout, full */
	uint64_t peers_dropped; /**< accepted, then dropped for an error or stall */
	uint64_t frames;	/**< verified frames, all producers */
	uint64_t records;
	uint64_t bytes;		   /**< bytes received from producers */
	uint64_t seq_gaps;	   /**< frames producers lost before sending */
	uint64_t frames_unwritten; /**< verified frames not written (disk full) */
	uint64_t nvml_samples;	   /**< GT_REC_NVML rows written */
	uint32_t nvml_devices;	   /**< GPUs sampled (0: NVML off or absent) */
	uint32_t peers_max;	   /**< producers served at once: max_peers, lowered to
					what RLIMIT_NOFILE allows (see gt_collector_new) */
	uint64_t mem_budget;	   /**< gt_collector_opts.mem_budget in force */
	uint64_t mem_used;	   /**< bytes of connection buffers charged now */
	uint64_t mem_peak;	   /**< most mem_used ever (never above mem_budget) */
	uint32_t peers_waiting;	   /**< connections not read now: waiting for memory */
	uint64_t frames_lost;	   /**< frames discarded half-received (gt_peer_info) */
	uint64_t records_lost;	   /**< records those frames' headers announced */
} gt_collector_stats;

typedef struct gt_collector gt_collector;

/** Longest control request line, '\n' included. */
#define GT_CONTROL_LINE_MAX 512

/**
 * Create a collector: prepare the private socket directory, bind the
 * producer socket and control.sock (a stale socket file left by a dead
 * collector is replaced; a live one gives GT_ERR_INVAL "already running"),
 * create the trace directory, start the NVML sampler when nvml_hz > 0.
 *
 * Descriptor limit: an accepted producer holds two descriptors (socket and
 * trace file). From RLIMIT_NOFILE's soft limit and the descriptors open at
 * this call, the collector derives how many producers it serves at once
 * (at most max_peers; gt_collector_stats.peers_max), how many control
 * connections (at most 32) and how many refusals it holds for their answer
 * (at most 16). A producer over the cap gets MISMATCH "collector full" (or,
 * when 16 refusals already wait, its connection is closed at once); either
 * way it writes its own trace file. The first time says so once in the log.
 * Should the process run out of descriptors all the same (the host program
 * took them), waiting connections are closed at once with the help of a
 * spare descriptor, accepting pauses until the next 100 ms tick, and the
 * log says so once: the loop never spins and stays responsive.
 *
 * Memory budget: every connection buffer is charged to opts->mem_budget
 * before it is allocated, so the collector's connection memory never
 * exceeds it (plus about 2 KiB of bookkeeping per connection). A
 * connection's first 256 KiB of input may use the whole budget; a frame
 * larger than that is reserved whole when its header arrives (so a frame
 * once begun can always complete; bytes are still allocated only as they
 * arrive) and may use only 3/4 of it, so that producers of ordinary frames
 * keep flowing while big frames wait. A connection refused memory is not
 * read (taken out of epoll) until memory frees; waiters are served oldest
 * first and the time they wait does not count against stall_timeout_ms,
 * unless every connection holding memory waits: then those that waited
 * stall_timeout_ms are dropped, with a reason. A new connection that gets
 * no memory for its stream header within handshake_timeout_ms is refused
 * (MISMATCH; the producer writes its own file). The first wait of a busy
 * spell is logged once (WARN). A frame that can never fit is dropped, as is
 * a frame that does not complete within stall_timeout_ms; frames lost half-
 * received are counted (gt_peer_info.frames_lost, records_lost).
 *
 * @return the collector, or NULL with *ei filled (ei may be NULL).
 */
GT_API gt_collector *gt_collector_new(const gt_collector_opts *opts, gt_errinfo *ei);

/**
 * Serve producers until gt_collector_stop. @return 0, or a negative gt_err
 * when the loop itself failed (epoll), which is logged.
 */
GT_API int gt_collector_run(gt_collector *c);

/** Make gt_collector_run return soon. Async-signal-safe, any thread. */
GT_API void gt_collector_stop(gt_collector *c);

/**
 * Close: read what connected producers already sent (whole frames only),
 * send them GT_CTL_BYE, close every file, stop NVML, remove the sockets (and
 * the socket directory when this collector created it and it is empty),
 * free. Accepts NULL. Call after gt_collector_run returned.
 */
GT_API void gt_collector_close(gt_collector *c);

/** Copy the totals. Thread-safe. */
GT_API void gt_collector_get_stats(gt_collector *c, gt_collector_stats *st);

/** Ended connections whose gt_peer_info gt_collector_peers still returns. */
#define GT_PEER_HISTORY 256

/**
 * Copy up to cap peer records into out, in connection order: every
 * producer connected now (in the handshake included) and the last
 * GT_PEER_HISTORY connections that ended (refused ones included). Older
 * ones are forgotten, so the collector's memory does not grow with the
 * number of connections it served. Thread-safe.
 * @return the number of records there are (may exceed cap).
 */
GT_API size_t gt_collector_peers(gt_collector *c, gt_peer_info *out, size_t cap);

/**
 * Queue an arm / disarm / flush for the producers with this pid (0 = all,
 * with the "all" semantics of the control protocol). Applied by the loop
 * thread soon after; thread-safe, not async-signal-safe.
 * @return 0, GT_ERR_INVAL (arm: duration_ns fails gt_duration_ok),
 *         GT_ERR_NOMEM, or GT_ERR_CLOSED after close began.
 */
GT_API int gt_collector_arm(gt_collector *c, uint32_t pid, uint32_t kinds, uint64_t duration_ns);
GT_API int gt_collector_disarm(gt_collector *c, uint32_t pid);
GT_API int gt_collector_flush(gt_collector *c, uint32_t pid);

/** Producer socket path (valid until close). */
GT_API const char *gt_collector_socket_path(const gt_collector *c);
/** Control socket path (valid until close). */
GT_API const char *gt_collector_control_path(const gt_collector *c);
/** Trace directory (valid until close): gt_collector_opts.trace_dir, or with
 *  trace_dir_unique the name taken. */
GT_API const char *gt_collector_trace_dir(const gt_collector *c);
/** 1 when this collector created its trace directory, 0 when it existed
 *  (or c is NULL). A caller that finds nothing was traced may remove a
 *  directory the collector created, after gt_collector_close. */
GT_API int gt_collector_trace_dir_created(const gt_collector *c);
/** NVML trace file, or NULL when no sampler runs (valid until close). */
GT_API const char *gt_collector_nvml_path(const gt_collector *c);

/* ------------------------------------------------------------------ */
/* Helpers shared by the CLI and tests                                 */
/* ------------------------------------------------------------------ */

/**
 * The default producer socket: $XDG_RUNTIME_DIR/gaptrace/collector.sock when
 * XDG_RUNTIME_DIR is set (and absolute), else /tmp/gaptrace-<uid>/collector.sock.
 * @return the length written (like snprintf), or GT_ERR_LIMIT if cap is short.
 */
GT_API int gt_collector_default_socket(char *buf, size_t cap);

/** The control socket beside a producer socket: dirname(sock)/control.sock.
 *  @return the length, or GT_ERR_LIMIT. */
GT_API int gt_collector_control_for(const char *socket_path, char *buf, size_t cap);

/**
 * Send one control request and read the whole answer (data lines and the
 * final line) into reply (NUL terminated, cut to cap). Waits at most
 * timeout_ms (0 = 5000) in total.
 * @return 0 when the final line starts with "ok", GT_ERR_GENERIC when it is
 *         an "error" line (reply holds it), or GT_ERR_IO / GT_ERR_CLOSED /
 *         GT_ERR_AGAIN (timeout) / GT_ERR_LIMIT with *ei filled.
 */
GT_API int gt_control_request(const char *control_path, const char *request, char *reply,
			      size_t cap, unsigned int timeout_ms, gt_errinfo *ei);

/**
 * Resolve a group for gt_collector_opts.share_group: a name from the group
 * database or a numeric gid. The caller must be a member (effective or
 * supplementary group), unless it runs as root.
 * @return 0 and *gid, or GT_ERR_INVAL with a sentence in why ("no group
 *         named 'x'", "not a member of group x (gid N)").
 */
GT_API int gt_group_parse(const char *name, uint32_t *gid, char *why, size_t cap);

/** gt_collector_opts.producers: who may stream traces. */
enum {
	GT_PRODUCERS_OWN = 0,	/**< the collector's own uid and root */
	GT_PRODUCERS_GROUP = 1, /**< also the members of producers_gid */
	GT_PRODUCERS_ANY = 2,	/**< every local process */
};

/** Shortest non-zero duration the commands, `arm` and gt_collector_arm take. */
#define GT_DURATION_MIN_NS 1000000ull /* 1 ms */
/** Longest: 366 days. Anything longer is a typo, and the cap keeps every
 *  "now + duration" (the collector's, the producers') far from overflowing. */
#define GT_DURATION_MAX_NS (366ull * 24 * 3600 * 1000000000ull)

/** Is ns a valid capture window for `arm` / gt_collector_arm: 0 (until
 *  disarmed), or GT_DURATION_MIN_NS..GT_DURATION_MAX_NS? */
GT_API int gt_duration_ok(uint64_t ns);

#ifdef __cplusplus
}
#endif
#endif /* GAPTRACE_COLLECTOR_H */
