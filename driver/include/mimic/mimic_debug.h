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
 * Sticky errors surface at the next synchronising call and stay until mimicDeviceReset; the
 * sticky error's detail says "injected fault: ...". Counts are deterministic: they follow the
 * calling order. Returns MIMIC_ERROR_INVALID_VALUE (an unknown key or a bad value; the detail
 * names it). */
mimicResult mimicDebugSetFaults(const char* spec);

/* racecheck (MIMIC_SANITIZE=racecheck at mimicInit): two queues touching the same device bytes,
 * at least one writing, with no event record/wait or host wait ordering them. Each distinct
 * race is reported once on stderr, naming both commands, their queues and correlation ids and
 * the allocation; it is found whether or not the simulated timing happened to order them.
 * Kernels count the bounding range of each DMA. *findings: the races reported so far.
 * Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugGetRaceFindings(uint64_t* findings);
/* Names a correlation id (mimicTraceSetCorrelationId) for the sanitizer's reports, e.g. the
 * PyTorch op that set it. The most recent 65536 names are kept. Returns
 * MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDebugNameCorrelation(uint64_t id, const char* name);

#ifdef __cplusplus
}
#endif

#endif /* MIMIC_MIMIC_DEBUG_H */
