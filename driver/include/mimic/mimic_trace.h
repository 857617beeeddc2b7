/*
 * mimic activity tracing, in the manner of CUPTI's activity API: while tracing is on, the driver
 * keeps a record of every command it queues (kernels, copies, fills, host functions and tasks,
 * event records and waits, named ranges) and of allocations, frees and host synchronisations,
 * each with its device, queue, simulated start and end, and the correlation id the calling
 * thread had set (the profiler sets one per host op).
 *
 * Records wait in a buffer of the capacity given to mimicTraceStart until mimicTraceRead takes
 * them. A record that finds the buffer full is dropped and counted (mimicTraceGetDropped), never
 * lost silently. While tracing is off, the driver does no tracing work beyond one flag test per
 * call.
 */
#ifndef MIMIC_MIMIC_TRACE_H
#define MIMIC_MIMIC_TRACE_H

#include <stdint.h>

#include "mimic/mimic.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MIMIC_ERROR_TRACE_ACTIVE ((mimicResult)900)     /* mimicTraceStart while tracing */
#define MIMIC_ERROR_TRACE_NOT_ACTIVE ((mimicResult)901) /* mimicTraceStop while not tracing */
#define MIMIC_ERROR_NO_OPEN_RANGE ((mimicResult)902)    /* mimicQueueEndRange without a begin */

typedef enum mimicActivityKind {
  MIMIC_ACTIVITY_KERNEL = 0,
  MIMIC_ACTIVITY_MEMCPY = 1,
  MIMIC_ACTIVITY_MEMSET = 2,
  MIMIC_ACTIVITY_HOST_FUNC = 3,
  MIMIC_ACTIVITY_HOST_TASK = 4, /* mimicLaunchHostTask: off-device work, e.g. a collective */
  MIMIC_ACTIVITY_EVENT_RECORD = 5,
  MIMIC_ACTIVITY_EVENT_WAIT = 6,
  MIMIC_ACTIVITY_RANGE = 7,       /* mimicQueueBeginRange .. mimicQueueEndRange */
  MIMIC_ACTIVITY_SYNCHRONIZE = 8, /* the host waited; start and end are host times */
  MIMIC_ACTIVITY_ALLOC = 9,       /* device memory; start = end = host time */
  MIMIC_ACTIVITY_FREE = 10,
  MIMIC_ACTIVITY_COLLECTIVE = 11 /* one rank's part of a collective; name: kind algorithm/proto */
} mimicActivityKind;

typedef enum mimicCopyKind {
  MIMIC_COPY_HOST_TO_DEVICE = 0,
  MIMIC_COPY_DEVICE_TO_HOST = 1,
  MIMIC_COPY_DEVICE_TO_DEVICE = 2,
  MIMIC_COPY_PEER = 3,
  MIMIC_COPY_HOST_TO_HOST = 4
} mimicCopyKind;

typedef struct mimicActivity {
  mimicActivityKind kind;
  int device;       /* -1 for host synchronisations */
  uint64_t queueId; /* mimicQueueGetId of the queue; 0 when none */
  uint64_t startNs; /* simulated time */
  uint64_t endNs;
  uint64_t correlationId;       /* the issuing thread's, 0 if it had set none */
  uint64_t bytes;               /* copies, fills, allocations and frees */
  mimicCopyKind copyKind;       /* copies */
  int hostPinned;               /* copies with a host side: 1 if it was pinned */
  int peerDevice;               /* peer copies: the other device, else -1 */
  char name[64];                /* the kernel's or range's name, else empty */
  mimicDim3 grid;               /* kernels */
  mimicKernelCounters counters; /* kernels */
} mimicActivity;

/* Starts tracing with room for `capacity` unread records.
 * Returns MIMIC_ERROR_INVALID_SIZE (0), MIMIC_ERROR_TRACE_ACTIVE. */
mimicResult mimicTraceStart(size_t capacity);
/* Stops recording; records not read yet stay readable. Returns MIMIC_ERROR_TRACE_NOT_ACTIVE. */
mimicResult mimicTraceStop(void);
/* Moves up to `capacity` records into `records`, in the order their calls were made, and sets
 * *count. It stops at the first record whose command has not completed yet (synchronise first
 * to read everything). Returns MIMIC_ERROR_NULL_POINTER (count, or records with capacity > 0). */
mimicResult mimicTraceRead(mimicActivity* records, size_t capacity, size_t* count);
/* Records dropped for want of room since mimicTraceStart. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicTraceGetDropped(uint64_t* dropped);
/* Sets the calling thread's correlation id for the records of its later calls; *previous (if
 * not NULL) gets the one it replaces. Never fails once mimic is initialised. */
mimicResult mimicTraceSetCorrelationId(uint64_t id, uint64_t* previous);

/* A queue's id in records: the default queue of device d has id d + 1, created queues get
 * larger ids in creation order. queue NULL names the default queue of `device`, which is
 * ignored otherwise. Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_QUEUE,
 * MIMIC_ERROR_INVALID_DEVICE. */
mimicResult mimicQueueGetId(mimicQueue queue, int device, uint64_t* id);
/* Opens a named range on the queue (NULL: the default queue of `device`): it starts when the
 * queue reaches this point, and ends at the matching mimicQueueEndRange (ranges nest). While
 * tracing, the range becomes a MIMIC_ACTIVITY_RANGE record (name truncated to 63 bytes); the
 * collectives name theirs ("AllReduce ring", ...). Returns MIMIC_ERROR_NULL_POINTER (name),
 * MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_INVALID_DEVICE, a sticky error. */
mimicResult mimicQueueBeginRange(mimicQueue queue, int device, const char* name);
/* Returns MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_NO_OPEN_RANGE,
 * a sticky error. */
mimicResult mimicQueueEndRange(mimicQueue queue, int device);

#ifdef __cplusplus
}
#endif

#endif /* MIMIC_MIMIC_TRACE_H */
