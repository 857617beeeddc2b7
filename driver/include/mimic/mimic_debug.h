/*
 * mimic debugging hooks: make the simulated device misbehave on purpose, to test how callers
 * handle failures. Not for production code paths.
 */
#ifndef MIMIC_MIMIC_DEBUG_H
#define MIMIC_MIMIC_DEBUG_H

#include "mimic/mimic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Queues a fault: when the queue reaches this point in simulated time, the device fails with
 * `error`, as if the hardware had raised it there. Every command the device meets afterwards
 * is aborted, and every call on the device returns `error` once a synchronising call
 * (synchronize, query, blocking copy) has observed it, until mimicDeviceReset.
 * Returns MIMIC_ERROR_INVALID_VALUE (error is not one of the sticky codes
 * MIMIC_ERROR_ILLEGAL_ADDRESS .. MIMIC_ERROR_ILLEGAL_INSTRUCTION), MIMIC_ERROR_INVALID_QUEUE,
 * a sticky error. */
mimicResult mimicDebugInjectFault(mimicQueue queue, mimicResult error);

/* Record and replay: reproduce a run, and a failure in it, at the same simulated time.
 *
 * Recording: with the environment variable MIMIC_RECORD=path set at mimicInit, the driver writes
 * to that file the configuration (preset, overrides, MIMIC_FAULTS, MIMIC_NUM_DEVICES) and then
 * every call that changes device state or simulated time, in the order calls entered the driver:
 * allocations and frees, copies (the bytes a host-to-device copy read; a hash of those a
 * device-to-host copy wrote), fills, queues, events, waits, queries and synchronisations (they
 * move the host's clock), module images, kernel launches with their argument bytes, ranges,
 * host functions, host tasks (with the end time each returned), mimicGetSimTime and the fault
 * calls, each with its result. While recording, calls of different threads take turns. If the
 * file cannot be created, mimicInit returns MIMIC_ERROR_INVALID_CONFIG_VALUE naming it.
 * Not recorded, hence not replayed: bytes written through mimicMemGetHostView (so the c10d
 * backend's multi-process collectives do not replay), host memory written by host functions,
 * and the sanitizer's settings (MIMIC_SANITIZE). A replay in another process finds the devices'
 * address ranges elsewhere: it moves device addresses in pointer arguments and in kernel
 * arguments (8-byte words that fall in a recorded range), but not device addresses the program
 * stored in device memory (a pointer table uploaded by a copy).
 */
#define MIMIC_REPLAY_DETAIL_CHARS 512

typedef struct mimicReplayResult {
  uint64_t callsInLog;      /* the calls the log holds */
  uint64_t callsReplayed;   /* re-issued with the recorded outcome, in order from the first */
  uint64_t failedCall;      /* the first of them that returned an error (1-based), 0: none */
  mimicResult failedResult; /* its error: the recorded failure, reproduced */
  uint64_t endSimTimeNs;    /* mimicGetSimTime after the last call replayed */
  char failedDetail[MIMIC_REPLAY_DETAIL_CHARS]; /* mimicGetErrorDetail of failedCall's
                                                   failure, cut to fit; "" when none */
} mimicReplayResult;

/* Replays a call log in a process that has not called mimicInit: builds the simulation from the
 * log's header (the environment's MIMIC_PRESET, MIMIC_OVERRIDES, MIMIC_NUM_DEVICES and
 * MIMIC_RECORD are cleared and MIMIC_FAULTS is set to the log's), starts tracing with room for
 * traceCapacity records unless it is 0 (read them with mimicTraceRead afterwards), then makes
 * every logged call through this API in the logged order. Handles are mapped from the recorded
 * run's values to the replay's; host functions become no-ops of the same simulated cost and host
 * tasks return the end time the recorded ones returned. It checks each call's result code, that
 * each allocation returns the recorded device pointer, that device-to-host data hashes alike,
 * and that timestamps, kernel counters' times and mimicGetSimTime read the recorded values.
 * *result says how far the replay got, also when it fails.
 * Returns MIMIC_ERROR_NULL_POINTER (logPath or result), MIMIC_ERROR_CALL_LOG_UNREADABLE (the
 * file is missing or unreadable), MIMIC_ERROR_INVALID_CALL_LOG (not a call log, truncated, or a
 * corrupted record; the detail names the record and byte offset),
 * MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION, MIMIC_ERROR_ALREADY_INITIALIZED (mimicInit was
 * called before in this process), the codes of mimicInitWithPreset (the log's configuration
 * cannot be built), MIMIC_ERROR_INVALID_SIZE (tracing could not start),
 * MIMIC_ERROR_REPLAY_DIVERGED (a call's outcome differs from the log; the detail reads "replay
 * diverged at call N (mimicMemAlloc): the log has ..., the replay got ..."),
 * MIMIC_ERROR_HOST_OUT_OF_MEMORY, MIMIC_ERROR_NOT_PERMITTED (called from a host function). */
mimicResult mimicDebugReplay(const char* logPath, size_t traceCapacity, mimicReplayResult* result);

/* One call of a call log, as mimicDebugReadCallLog lists it. */
typedef struct mimicLoggedCall {
  const char* function;   /* "mimicMemAlloc"; static storage */
  mimicResult result;     /* what the recorded run got */
  uint64_t correlationId; /* of the calling thread when it was made (mimicTraceSetCorrelationId) */
} mimicLoggedCall;

/* The calls of a call log in order, without replaying them (no mimicInit needed): *count
 * receives the number of calls; the first min(count, capacity) are written to calls, which may
 * be NULL when capacity is 0 (to ask for the count).
 * Returns MIMIC_ERROR_NULL_POINTER (logPath or count, or calls with capacity > 0), and the log's
 * errors of mimicDebugReplay: MIMIC_ERROR_CALL_LOG_UNREADABLE, MIMIC_ERROR_INVALID_CALL_LOG,
 * MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION, MIMIC_ERROR_HOST_OUT_OF_MEMORY. */
mimicResult mimicDebugReadCallLog(const char* logPath, mimicLoggedCall* calls, size_t capacity,
                                  size_t* count);

/* Installs a fault plan, replacing the previous one and restarting its counts (the environment
 * variable MIMIC_FAULTS gives the plan mimicInit starts with). `spec` is "key=value,..." (NULL
 * or "" clears):
 *   oom_at_alloc=N     the N-th mimicMemAlloc from now (all devices) fails with
 *                      MIMIC_ERROR_OUT_OF_MEMORY; the device stays usable
 *   oom_above_bytes=B  allocations that would take a device above B bytes in use fail so
 *                      (B may end in KiB, MiB or GiB)
 *   ecc_at_kernel=N    the N-th kernel launched from now fails its device, when it ends, with
 *                      MIMIC_ERROR_ECC_UNCORRECTABLE (sticky)
 *   hang_at_kernel=N   the N-th kernel hangs and the watchdog stops it: MIMIC_ERROR_LAUNCH_TIMEOUT
 *   lost_at_kernel=N   the N-th kernel loses its device: MIMIC_ERROR_DEVICE_LOST
 *   ecc_at_ns=T, lost_at_ns=T   every device fails with that error at the first command it
 *                      starts at or after simulated time T (the earlier of the two wins)
 *   die_at_collective=K  the c10d backend's process exits at its K-th collective (a dead peer)
 *   slow_link=F        every device link runs at 1/F of its bandwidth (F a number, 1 < F <= 1000,
 *                      e.g. 4 or 2.5; latency is unchanged): peer copies, and so the
 *                      communicator's collectives, move their bytes F times slower, sharing the
 *                      slowed link as before. Link transfers that start after the call (in
 *                      simulated time) are slowed; earlier ones keep their speed. The c10d
 *                      backend's time model between processes uses bandwidth/F: a collective
 *                      takes the largest F of any rank's plan, a send or recv its own rank's.
 *   slow_link_between=A-B  with slow_link: only the links on the routes between devices A and B
 *                      (both directions) are slow: in a ring, the links from A to B the shorter
 *                      way; in a full mesh, the pair's own link; with a switch, the uplinks and
 *                      downlinks of A and B (so their traffic with other devices is slow too).
 *                      Between processes (c10d) the whole slow_link applies: device numbers of
 *                      different processes do not name the same devices.
 * Sticky errors surface at the next synchronising call and stay until mimicDeviceReset; the
 * sticky error's detail says "injected fault: ...". Counts are deterministic: they follow the
 * calling order. Returns MIMIC_ERROR_INVALID_VALUE (an unknown key or a bad value; the detail
 * names it). */
mimicResult mimicDebugSetFaults(const char* spec);
/* *factor: the slow_link factor of the current fault plan, 1 without one (the c10d backend
 * slows its time model by it). Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugGetLinkSlowdown(double* factor);

/* The sanitizer: any subset of these tools, chosen by MIMIC_SANITIZE="memcheck,racecheck,..."
 * at mimicInit or by mimicDebugSetSanitizer. Each distinct finding is printed once on stderr
 * ("mimic memcheck: ...") and counted; at exit a summary line is printed, and the findings are
 * written as JSON to the file MIMIC_SANITIZE_REPORT names, if set ("%p" in it becomes the
 * process id).
 *   memcheck   kernels, copies and fills that touch bytes outside a live allocation or
 *              allocator region (out of bounds, use after free), and double frees; each report
 *              names the allocation, the call or host op that made it and when it was freed.
 *              Accesses outside every allocation still fail the device, as hardware would.
 *   racecheck  two queues touching the same bytes, at least one writing, with no event
 *              record/wait or host wait ordering them (a missing wait_stream or record_stream),
 *              whether or not the simulated timing happened to order them.
 *   initcheck  reads of device bytes that no copy, fill or kernel has written since they were
 *              allocated (a host view, mimicMemGetHostView, counts as written).
 *   leakcheck  allocations and allocator regions still live at exit (or at
 *              mimicDebugCheckLeaks), with where they were made.
 * Kernels are checked at the granularity of each DMA's bounding byte range. */
#define MIMIC_SANITIZE_MEMCHECK 0x1u
#define MIMIC_SANITIZE_RACECHECK 0x2u
#define MIMIC_SANITIZE_INITCHECK 0x4u
#define MIMIC_SANITIZE_LEAKCHECK 0x8u

typedef struct mimicSanitizerFindings {
  uint64_t outOfBounds;
  uint64_t useAfterFree;
  uint64_t doubleFree;
  uint64_t uninitializedRead;
  uint64_t race;
  uint64_t leak;
  uint64_t total;
} mimicSanitizerFindings;

/* Turns the sanitizer's tools on or off (MIMIC_SANITIZE_* bits; 0: all off). Allocations made
 * while memcheck, initcheck and leakcheck were all off are not checked. Returns
 * MIMIC_ERROR_INVALID_VALUE (an unknown bit). */
mimicResult mimicDebugSetSanitizer(unsigned tools);
/* Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugGetSanitizer(unsigned* tools);
/* The findings reported so far, by kind. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugGetSanitizerFindings(mimicSanitizerFindings* findings);
/* Reports every allocation and region live now as a leak (leakcheck does so at exit); *leaks:
 * how many are live. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugCheckLeaks(uint64_t* leaks);

/* Sub-allocations of a memory pool, in the manner of NVTX's memory regions: a caching allocator
 * that hands out parts of its mimicMemAlloc blocks registers each part while it is in use, so
 * that memcheck, initcheck and leakcheck see the user's objects rather than the pool's blocks.
 * An allocation with regions registered in it is a pool: only its regions may be accessed, and
 * the pool itself is not a leak. Without memcheck, initcheck or leakcheck on, both calls only
 * validate their arguments.
 * Register returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE (0 bytes),
 * MIMIC_ERROR_INVALID_DEVICE_POINTER (not inside a live allocation), MIMIC_ERROR_OUT_OF_BOUNDS
 * (runs past the end of its allocation), MIMIC_ERROR_INVALID_VALUE (overlaps a live region). */
mimicResult mimicDebugRegionRegister(void* dptr, size_t bytes);
/* Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_DOUBLE_FREE (the region was already
 * unregistered; memcheck reports it), MIMIC_ERROR_INVALID_DEVICE_POINTER (not the start of a
 * region). */
mimicResult mimicDebugRegionUnregister(void* dptr);

/* The racecheck findings so far (mimicDebugGetSanitizerFindings has every kind). Returns
 * MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugGetRaceFindings(uint64_t* findings);
/* Names a correlation id (mimicTraceSetCorrelationId) for the sanitizer's reports, e.g. the
 * PyTorch op that set it and the Python line that called it. The most recent 65536 names are
 * kept, while a sanitizer tool is on. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugNameCorrelation(uint64_t id, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* MIMIC_MIMIC_DEBUG_H */
