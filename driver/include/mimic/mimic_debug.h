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

#ifdef __cplusplus
}
#endif

#endif /* MIMIC_MIMIC_DEBUG_H */
