/*
 * mimic collectives: a single-process communicator in the style of NCCL, built only on the
 * driver API (mimic.h). One host thread drives every device of a communicator clique.
 *
 * A collective is one driver call (mimicCollectiveLaunch) for all ranks: the data moves when
 * the group ends, and each rank's queue gets one command that holds it until the collective
 * has ended in simulated time. Calls return before the work is done; a collective on a queue
 * starts after all earlier work on that queue, once every rank's queue has reached it, and
 * later work on the queue waits for it, as for any other command.
 *
 * Groups: a communicator of more than one rank must have the call of every rank issued between
 * mimicGroupStart and mimicGroupEnd, by the same host thread (groups are per thread). The calls
 * only check their own arguments; mimicGroupEnd checks that the ranks agree and launches the
 * whole collective.
 *
 * Algorithms and protocols are the driver's collective model's (sim/collective): ring, tree,
 * direct (one step: everyone sends each peer what it needs; AllToAll always runs so),
 * two_shot, nvls (in-switch reduction), hierarchical (across nodes), with the simple, ll128 and
 * ll protocols, chosen per call by size from the preset as NCCL's tuner does, among the ones
 * the preset's coll.algorithms offers. MIMIC_COLL_ALGO and MIMIC_COLL_PROTO force a choice;
 * one that does not exist, or cannot run the collective, fails mimicGroupEnd.
 * Reductions: the element type's own arithmetic, over the ranks in rank order (f16 and bf16
 * compute each a op b in f32 and round once to the type, as the device's vector unit does).
 * Integers wrap. Avg is the sum divided by the rank count, in the element type (integers
 * truncate toward zero).
 *
 * Result codes: besides those listed with each function, every function can return
 * MIMIC_ERROR_NOT_INITIALIZED (mimicInit has not succeeded). Functions that queue work can
 * also return the codes the driver returns for that work (a sticky error of a device, ...).
 * mimicCollGetErrorDetail gives the message of the calling thread's last collectives failure.
 */
#ifndef MIMIC_MIMIC_COLLECTIVES_H
#define MIMIC_MIMIC_COLLECTIVES_H

#include <stddef.h>

#include "mimic/mimic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes of the collectives, in a range of their own (800..899). */
#define MIMIC_ERROR_INVALID_COMM ((mimicResult)800)      /* not a communicator, or destroyed */
#define MIMIC_ERROR_INVALID_DATATYPE ((mimicResult)801)  /* not a mimicDataType */
#define MIMIC_ERROR_INVALID_REDUCE_OP ((mimicResult)802) /* not a mimicReduceOp */
#define MIMIC_ERROR_INVALID_ROOT ((mimicResult)803)      /* root outside 0..size-1 */
#define MIMIC_ERROR_GROUP_REQUIRED ((mimicResult)804)    /* size > 1 called outside a group */
#define MIMIC_ERROR_GROUP_NOT_STARTED ((mimicResult)805) /* mimicGroupEnd without a start */
#define MIMIC_ERROR_GROUP_MISMATCH ((mimicResult)806)    /* the ranks of a group disagree */
#define MIMIC_ERROR_GROUP_INCOMPLETE ((mimicResult)807)  /* not every rank called */

typedef struct mimicComm_st* mimicComm;

/* mimicDataType and mimicReduceOp are the driver's (mimic.h). */

/* "MIMIC_ERROR_GROUP_MISMATCH" and so on for the collectives codes; mimicGetErrorName's answer
 * for every other code. Never fails. */
const char* mimicCollGetErrorName(mimicResult result);
/* The message of the calling thread's most recent failed collectives call ("" if none); it
 * names the argument or the ranks that were wrong. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicCollGetErrorDetail(const char** detail);

/* Creates one communicator per device: comms[i] is rank i on devices[i] (devices NULL: device
 * i). Returns MIMIC_ERROR_NULL_POINTER (comms), MIMIC_ERROR_INVALID_VALUE (count < 1, or a
 * device listed twice), MIMIC_ERROR_INVALID_DEVICE. */
mimicResult mimicCommInitAll(mimicComm* comms, int count, const int* devices);
/* Destroys one rank's communicator; work queued with it still completes. Returns
 * MIMIC_ERROR_INVALID_COMM. */
mimicResult mimicCommDestroy(mimicComm comm);
/* Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_COMM. */
mimicResult mimicCommGetRank(mimicComm comm, int* rank);
mimicResult mimicCommGetSize(mimicComm comm, int* size);
mimicResult mimicCommGetDevice(mimicComm comm, int* device);

/* Groups nest; only the outermost mimicGroupEnd schedules. Never fails. */
mimicResult mimicGroupStart(void);
/* Checks every collective called since the outermost mimicGroupStart and queues them. On an
 * error nothing of the group is queued and the group is over.
 * Returns MIMIC_ERROR_GROUP_NOT_STARTED, MIMIC_ERROR_GROUP_MISMATCH (ranks of one clique
 * called different collectives, or with different count, datatype, op or root; the detail
 * names the ranks), MIMIC_ERROR_GROUP_INCOMPLETE (a rank of a clique did not call; the detail
 * names it), the codes of mimicCollectiveLaunch (MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE, ...). */
mimicResult mimicGroupEnd(void);

/* The argument checks shared by every collective below. Each returns:
 *   MIMIC_ERROR_INVALID_COMM, MIMIC_ERROR_INVALID_DATATYPE, MIMIC_ERROR_INVALID_REDUCE_OP,
 *   MIMIC_ERROR_NULL_POINTER (a buffer NULL with count > 0),
 *   MIMIC_ERROR_INVALID_DEVICE_POINTER (a buffer not in a live device allocation),
 *   MIMIC_ERROR_WRONG_DEVICE (a buffer or the queue on another device than the rank's),
 *   MIMIC_ERROR_OUT_OF_BOUNDS (a buffer smaller than the collective needs),
 *   MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_GROUP_REQUIRED,
 *   outside a group, the codes of mimicGroupEnd.
 * count 0 queues nothing. send == recv runs in place (for AllGather, send may be the rank's
 * slice of recv; for ReduceScatter, recv may be the rank's slice of send). */

/* recv = op over the ranks of send; count elements. */
mimicResult mimicAllReduce(const void* send, void* recv, size_t count, mimicDataType datatype,
                           mimicReduceOp op, mimicComm comm, mimicQueue queue);
/* recv of every rank = send of root (send is read only on root). Also MIMIC_ERROR_INVALID_ROOT. */
mimicResult mimicBroadcast(const void* send, void* recv, size_t count, mimicDataType datatype,
                           int root, mimicComm comm, mimicQueue queue);
/* recv of root = op over the ranks of send (recv is written only on root and may be NULL
 * elsewhere). Also MIMIC_ERROR_INVALID_ROOT. */
mimicResult mimicReduce(const void* send, void* recv, size_t count, mimicDataType datatype,
                        mimicReduceOp op, int root, mimicComm comm, mimicQueue queue);
/* recv[r * sendCount ...] = send of rank r; recv holds size x sendCount elements. */
mimicResult mimicAllGather(const void* send, void* recv, size_t sendCount, mimicDataType datatype,
                           mimicComm comm, mimicQueue queue);
/* recv of rank r = op over the ranks of send[r * recvCount ...]; send holds size x recvCount. */
mimicResult mimicReduceScatter(const void* send, void* recv, size_t recvCount,
                               mimicDataType datatype, mimicReduceOp op, mimicComm comm,
                               mimicQueue queue);

/* recv[q * count ...] of rank r = send[r * count ...] of rank q; send and recv hold size x count
 * elements each. Not in place: send == recv returns MIMIC_ERROR_INVALID_VALUE. Each rank sends
 * its blocks straight to their owners (over several hops where the topology needs them). */
mimicResult mimicAllToAll(const void* send, void* recv, size_t count, mimicDataType datatype,
                          mimicComm comm, mimicQueue queue);

#ifdef __cplusplus
}
#endif

#endif /* MIMIC_MIMIC_COLLECTIVES_H */
