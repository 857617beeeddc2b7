/*
 * mimic driver API: the one door into a simulated mimic device.
 *
 * Plain C, opaque handles, mimic<Object><Verb> names. Every function returns a mimicResult:
 * MIMIC_SUCCESS (0), the status MIMIC_NOT_READY, or an error with its own code.
 * mimicGetErrorName / mimicGetErrorString describe a code; mimicGetErrorDetail gives the
 * message of the calling thread's last failure, naming the argument that was wrong.
 *
 * Codes every function can return, besides those listed with it:
 *   MIMIC_ERROR_NOT_INITIALIZED  mimicInit has not succeeded yet.
 *   MIMIC_ERROR_NOT_PERMITTED    called from a host function running on a queue.
 * Functions that allocate on a device, submit work to it, query it or wait for it also return
 * its sticky error (MIMIC_ERROR_ILLEGAL_ADDRESS ... MIMIC_ERROR_ILLEGAL_INSTRUCTION) once it has
 * failed, until mimicDeviceReset; each such function lists "a sticky error" among its codes. The
 * error functions (mimicGetError*, mimicGetLastError) may be called from anywhere.
 *
 * Time: every device runs in one simulation with 1 ns resolution. Timestamps, elapsed times
 * and mimicGetSimTime are simulated time, deterministic for a given program and preset.
 *
 * Thread safety: any host thread may call any function at any time.
 */
#ifndef MIMIC_MIMIC_H
#define MIMIC_MIMIC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mimicResult {
  MIMIC_SUCCESS = 0,
  MIMIC_NOT_READY = 1, /* a status, not an error: the work has not completed yet */

  /* Set-up and configuration */
  MIMIC_ERROR_NOT_INITIALIZED = 100,
  MIMIC_ERROR_ALREADY_INITIALIZED = 101, /* initialised before with another configuration */
  MIMIC_ERROR_INVALID_FLAGS = 102,
  MIMIC_ERROR_UNKNOWN_PRESET = 103,
  MIMIC_ERROR_UNKNOWN_CONFIG_FIELD = 104,
  MIMIC_ERROR_INVALID_CONFIG_VALUE = 105,
  MIMIC_ERROR_SYSTEM_RESOURCES = 106, /* the host cannot provide what the preset needs */

  /* Arguments */
  MIMIC_ERROR_NULL_POINTER = 200,   /* a required pointer argument is NULL */
  MIMIC_ERROR_INVALID_DEVICE = 201, /* device index out of range */
  MIMIC_ERROR_INVALID_SIZE = 202,   /* zero, or larger than can ever be served */
  MIMIC_ERROR_INVALID_VALUE = 203,  /* another argument outside its documented range */
  MIMIC_ERROR_INVALID_PRIORITY = 204,
  MIMIC_ERROR_INVALID_QUEUE = 205, /* not a queue handle, or a destroyed one */
  MIMIC_ERROR_INVALID_EVENT = 206, /* not an event handle, or a destroyed one */
  MIMIC_ERROR_WRONG_DEVICE = 207,  /* queue, event or pointer belongs to another device */
  MIMIC_ERROR_NOT_PERMITTED = 208, /* the call is not allowed from this context */
  MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE = 209, /* MIMIC_COLL_ALGO or _PROTO names no such thing */
  MIMIC_ERROR_UNSUPPORTED_COLLECTIVE_CHOICE = 210, /* the forced algorithm or protocol cannot
                                                      run that collective on this system */

  /* Memory */
  MIMIC_ERROR_OUT_OF_MEMORY = 300,          /* the device has no free block that large */
  MIMIC_ERROR_HOST_OUT_OF_MEMORY = 301,     /* pinned host memory could not be allocated */
  MIMIC_ERROR_INVALID_DEVICE_POINTER = 302, /* not inside a live device allocation */
  MIMIC_ERROR_DOUBLE_FREE = 303,            /* that allocation was already freed */
  MIMIC_ERROR_INVALID_HOST_POINTER = 304,   /* not the start of a pinned host allocation */
  MIMIC_ERROR_OUT_OF_BOUNDS = 305,          /* the range runs past the end of its allocation */

  /* Events */
  MIMIC_ERROR_EVENT_NOT_RECORDED = 400,
  MIMIC_ERROR_EVENT_TIMING_DISABLED = 401,

  /* Simulation */
  MIMIC_ERROR_SIMULATION_STALLED = 500, /* waited for work that can never complete */

  /* Modules and kernels */
  MIMIC_ERROR_INVALID_IMAGE = 600,             /* not a module image, truncated or malformed */
  MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION = 601, /* an image format this driver does not read */
  MIMIC_ERROR_INVALID_MODULE = 602,            /* not a module handle, or an unloaded one */
  MIMIC_ERROR_FUNCTION_NOT_FOUND = 603,        /* the module has no function of that name */
  MIMIC_ERROR_INVALID_FUNCTION = 604,      /* not a function handle, or its module is unloaded */
  MIMIC_ERROR_INVALID_GRID = 605,          /* a grid dimension is zero or the grid is too large */
  MIMIC_ERROR_INVALID_ARGUMENT_SIZE = 606, /* argBytes differs from what the function takes */
  MIMIC_ERROR_NO_KERNEL = 607,             /* no kernel was launched on the queue yet */

  /* Record and replay of the driver call log (mimic_debug.h) */
  MIMIC_ERROR_CALL_LOG_UNREADABLE = 1000,          /* the file cannot be opened or read */
  MIMIC_ERROR_INVALID_CALL_LOG = 1001,             /* not a call log, truncated or corrupted */
  MIMIC_ERROR_UNSUPPORTED_CALL_LOG_VERSION = 1002, /* a log format this driver does not read */
  MIMIC_ERROR_REPLAY_DIVERGED = 1003,              /* the replay did not do what the log did */

  /* Sticky device errors: every later call on the device returns them until reset. */
  MIMIC_ERROR_ILLEGAL_ADDRESS = 700,
  MIMIC_ERROR_LAUNCH_FAILURE = 701,
  MIMIC_ERROR_LAUNCH_TIMEOUT = 702,
  MIMIC_ERROR_ECC_UNCORRECTABLE = 703,
  MIMIC_ERROR_DEVICE_LOST = 704,
  MIMIC_ERROR_MISALIGNED_ADDRESS = 705, /* an operand not aligned to its element size */
  MIMIC_ERROR_SCRATCHPAD_HAZARD = 706,  /* scratchpad used while a DMA into it was in flight */
  MIMIC_ERROR_ILLEGAL_INSTRUCTION = 707 /* an operation its element type does not support */
} mimicResult;

typedef struct mimicQueue_st* mimicQueue; /* NULL means the device's default queue */
typedef struct mimicEvent_st* mimicEvent;
typedef struct mimicModule_st* mimicModule;
typedef struct mimicFunction_st* mimicFunction;

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                    */

/* "MIMIC_ERROR_OUT_OF_MEMORY" and so on; "MIMIC_UNRECOGNIZED_RESULT" for a foreign value. */
const char* mimicGetErrorName(mimicResult result);
/* One sentence describing the code. */
const char* mimicGetErrorString(mimicResult result);
/* The message of the calling thread's most recent failed call ("" if none). The text stays
 * valid until that thread's next failing call. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicGetErrorDetail(const char** detail);
/* The first sticky error any device has reported, else the calling thread's most recent error,
 * which is then cleared (as cudaGetLastError does). Never fails. */
mimicResult mimicGetLastError(void);

/* ---------------------------------------------------------------------------------------- */
/* Initialisation                                                                            */

/* The most devices one simulated system has (system.num_devices, MIMIC_NUM_DEVICES): a larger
 * count fails mimicInit and mimicPresetDescribe with MIMIC_ERROR_INVALID_CONFIG_VALUE. The
 * PyTorch backend and the tools hold per-device state up to this bound. */
#define MIMIC_MAX_DEVICES 64

/* Builds the simulated system from the preset in MIMIC_PRESET ("default" if unset), with the
 * overrides in MIMIC_OVERRIDES ("field=value,field=value") and MIMIC_NUM_DEVICES applied.
 * Calling it again after success does nothing and succeeds.
 * Returns MIMIC_ERROR_INVALID_FLAGS (flags must be 0), MIMIC_ERROR_UNKNOWN_PRESET,
 * MIMIC_ERROR_UNKNOWN_CONFIG_FIELD, MIMIC_ERROR_INVALID_CONFIG_VALUE (including more than
 * MIMIC_MAX_DEVICES devices), MIMIC_ERROR_SYSTEM_RESOURCES. After a failure it may be called
 * again. */
mimicResult mimicInit(unsigned flags);

/* As mimicInit, with the preset (a name or a path; NULL: as mimicInit) and overrides given by
 * the caller. Overrides from the environment apply first, then these. Returns the codes of
 * mimicInit, and MIMIC_ERROR_ALREADY_INITIALIZED if the system was built with another
 * configuration: one process holds one simulation. */
mimicResult mimicInitWithPreset(unsigned flags, const char* preset, const char* overrides);

/* ---------------------------------------------------------------------------------------- */
/* Devices                                                                                   */

typedef enum mimicTopology {
  MIMIC_TOPOLOGY_RING = 0,
  MIMIC_TOPOLOGY_FULL_MESH = 1,
  MIMIC_TOPOLOGY_SWITCH = 2
} mimicTopology;

typedef struct mimicDeviceProperties {
  char name[64];   /* device name, from the preset's device.name */
  char preset[64]; /* the preset the system was built from */
  size_t totalMemory;
  int computeUnits;
  int vectorLanes;
  double clockMHz;
  size_t scratchpadBytes;  /* per compute unit */
  int mmaF32MacsPerCycle;  /* per compute unit; f32 peak = 2 x this x units x clock */
  int mmaF16MacsPerCycle;  /* the same for f16 and bf16 */
  double hbmBandwidthGBps; /* peak; transfers reach hbmEfficiency of it */
  uint64_t hbmLatencyNs;
  double hostLinkBandwidthGBps; /* per direction, peak */
  uint64_t hostLinkLatencyNs;
  mimicTopology deviceLinkTopology;
  double deviceLinkBandwidthGBps; /* per link, per direction, peak */
  uint64_t deviceLinkLatencyNs;   /* per hop */
  int hardwareQueues;
  int copyEngines;
  int linkEngines;
  uint64_t commandLatencyNs; /* paid in turn by each kernel, copy and fill */
  size_t allocationAlignment;
  /* Achievable shares of the peaks above (hbm.efficiency, host_link.efficiency,
   * device_link.efficiency): a transfer alone on its path moves bytes at peak x efficiency. */
  double hbmEfficiency;
  double hostLinkEfficiency;
  double deviceLinkEfficiency;
  size_t cacheBytes; /* the last-level cache between the compute units and HBM; 0: none */
  double cacheBandwidthGBps;
  uint64_t cacheLatencyNs;
  int maxWorkgroupsPerUnit;   /* resident on one compute unit at once, scratchpad allowing */
  double dmaBandwidthGBps;    /* one compute unit's DMA engine */
  uint64_t launchLatencyNs;   /* submission to the command processor, overlapped */
  uint64_t workgroupLaunchNs; /* to start a workgroup on a compute unit */
  uint64_t hostSubmitNs;      /* host time to submit one command */
  uint64_t hostSyncNs;        /* from a completion until the host thread waiting on it runs */
  double matrixClockMHz;      /* the clock the matrix pipe sustains (matrix peaks use it) */
  /* Scale-out (network.*): devices d of the system are on node d / devicesPerNode; each has a
   * NIC of nicBandwidthGBps per direction (1 node: no NIC). */
  int nodes;
  int devicesPerNode;
  double nicBandwidthGBps;
  double nicEfficiency;
  uint64_t networkLatencyNs;
} mimicDeviceProperties;

typedef enum mimicSimulationMode {
  MIMIC_SIMULATION_FULL = 0, /* kernels compute values, device memory holds the bytes */
  /* Timing only: every kernel, copy and fill takes the same simulated time as in full mode,
   * but kernels compute no values (an SLoad reads 0: mimicKernelCounters.dataDependentReads
   * counts them), and copies and fills of more than 64 KiB move no device bytes (a copy into
   * host memory writes zeros there). Smaller ones move their bytes, so control data the host
   * sends to a device and reads back survives; memory a kernel would have written holds
   * whatever bytes were there before (zeros, if no copy wrote it). Every copy into host memory
   * is a placeholder (mimicGetPlaceholderCopies). Allocations still take device capacity. */
  MIMIC_SIMULATION_TIMING = 1
} mimicSimulationMode;

/* The system's mode: the preset's system.mode, which MIMIC_MODE ("full" or "timing") sets.
 * Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicGetSimulationMode(mimicSimulationMode* mode);
/* In timing mode, the copies from a device into host memory since mimicInit, whose bytes are
 * placeholders (see MIMIC_SIMULATION_TIMING), and their bytes; 0 in full mode. Either pointer may be NULL, not both.
 * Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicGetPlaceholderCopies(uint64_t* copies, uint64_t* bytes);

/* Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicDeviceGetCount(int* count);
/* Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE. */
mimicResult mimicDeviceGetProperties(int device, mimicDeviceProperties* props);
/* Blocks until every command submitted to any queue of the device has completed.
 * Returns MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_SIMULATION_STALLED, a sticky error. */
mimicResult mimicDeviceSynchronize(int device);
/* Waits for the device's work, frees all of its allocations and clears its sticky error.
 * Queues and events stay valid. Returns MIMIC_ERROR_INVALID_DEVICE. */
mimicResult mimicDeviceReset(int device);
/* The host's current position in simulated time, in ns. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicGetSimTime(uint64_t* simNs);

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                    */

/* Allocates device memory, aligned to the preset's memory.alignment. The pointer lies in an
 * address range the host cannot access: dereferencing it on the host faults.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_SIZE
 * (zero bytes), MIMIC_ERROR_OUT_OF_MEMORY (no free block that large, whatever the size: more
 * than the device's capacity too, as CUDA answers; the device stays usable), a sticky error. */
mimicResult mimicMemAlloc(int device, size_t bytes, void** dptr);
/* Frees device memory. Like cudaFree, it first waits for all work on the device.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_DOUBLE_FREE (already freed),
 * MIMIC_ERROR_INVALID_DEVICE_POINTER (not the start of a device allocation), a sticky error. */
mimicResult mimicMemFree(void* dptr);
/* Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE, a sticky error. */
mimicResult mimicMemGetInfo(int device, size_t* freeBytes, size_t* totalBytes);
/* Allocates pinned (page-locked) host memory: copies from and to it are truly asynchronous.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE, MIMIC_ERROR_HOST_OUT_OF_MEMORY. */
mimicResult mimicHostAlloc(size_t bytes, void** hptr);
/* Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_HOST_POINTER. */
mimicResult mimicHostFree(void* hptr);

typedef enum mimicMemoryType {
  MIMIC_MEMORY_TYPE_PAGEABLE = 0, /* ordinary host memory, unknown to mimic */
  MIMIC_MEMORY_TYPE_PINNED = 1,   /* from mimicHostAlloc */
  MIMIC_MEMORY_TYPE_DEVICE = 2    /* from mimicMemAlloc */
} mimicMemoryType;

typedef struct mimicPointerAttributes {
  mimicMemoryType type;
  int device;  /* -1 unless type is DEVICE */
  void* base;  /* start of the allocation that holds the pointer; NULL for pageable */
  size_t size; /* its size in bytes; 0 for pageable */
} mimicPointerAttributes;

/* Describes any pointer; an interior pointer reports its allocation.
 * Returns MIMIC_ERROR_NULL_POINTER (ptr or attrs), MIMIC_ERROR_INVALID_DEVICE_POINTER (inside
 * a device's address range but not in a live allocation). */
mimicResult mimicPointerGetAttributes(const void* ptr, mimicPointerAttributes* attrs);
/* The simulator's own view of device memory: a host pointer to the bytes at
 * [dptr, dptr + bytes), which must lie in one live allocation. mimic does the functional part
 * of every command when it is submitted, so the view shows the effect of all work submitted so
 * far, and bytes written through it count as written by the next command submitted. The view
 * is valid until the allocation is freed. Real hardware has no such mapping: it is for
 * simulator-aware layers (the c10d backend hands it to Gloo to move data between processes).
 * Returns MIMIC_ERROR_NULL_POINTER (dptr or view), MIMIC_ERROR_INVALID_SIZE (zero),
 * MIMIC_ERROR_INVALID_DEVICE_POINTER (not inside a live device allocation),
 * MIMIC_ERROR_OUT_OF_BOUNDS (the range runs past its allocation), a sticky error. */
mimicResult mimicMemGetHostView(const void* dptr, size_t bytes, void** view);

/* Copies bytes; the direction is inferred from the pointers (host to device, device to host,
 * device to device, also across devices, and host to host). It is queued on the default queue
 * of the device involved (the destination's for device-to-device) and returns when the copy
 * has completed. Host to host copies run at once.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE (zero),
 * MIMIC_ERROR_INVALID_DEVICE_POINTER, MIMIC_ERROR_OUT_OF_BOUNDS, a sticky error. */
mimicResult mimicMemcpy(void* dst, const void* src, size_t bytes);
/* Queues a copy. The queue must belong to the device of the device pointer (either one, for a
 * device-to-device copy). From pinned memory it returns at once; from pageable memory the data
 * is staged first, so the source may be reused on return; to pageable memory it returns only
 * when the copy is complete, as real drivers do.
 * Returns the codes of mimicMemcpy, MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_WRONG_DEVICE. */
mimicResult mimicMemcpyAsync(void* dst, const void* src, size_t bytes, mimicQueue queue);
/* Queues a copy between two devices over the device links. The queue must belong to one of
 * them. Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE, MIMIC_ERROR_INVALID_DEVICE,
 * MIMIC_ERROR_INVALID_DEVICE_POINTER, MIMIC_ERROR_OUT_OF_BOUNDS, MIMIC_ERROR_WRONG_DEVICE
 * (a pointer is not on the device named for it, or the queue on neither),
 * MIMIC_ERROR_INVALID_QUEUE, a sticky error. */
mimicResult mimicMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                 size_t bytes, mimicQueue queue);
/* Queues a fill of bytes with (unsigned char)value.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_SIZE (zero),
 * MIMIC_ERROR_INVALID_VALUE (value outside -128..255), MIMIC_ERROR_INVALID_DEVICE_POINTER,
 * MIMIC_ERROR_OUT_OF_BOUNDS, MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_WRONG_DEVICE,
 * a sticky error. */
mimicResult mimicMemsetAsync(void* dptr, int value, size_t bytes, mimicQueue queue);

/* ---------------------------------------------------------------------------------------- */
/* Queues: ordered streams of commands. Queues never synchronise with each other implicitly:
 * only events order them. Each queue runs on one of the device's hardware queues; when there
 * are more queues than hardware queues, queues share them (and so are ordered with each other,
 * as on real hardware).                                                                     */

#define MIMIC_QUEUE_PRIORITY_LOW 0
#define MIMIC_QUEUE_PRIORITY_HIGH (-1)

/* flags must be 0; priority is 0 (low) or -1 (high), as in CUDA's convention.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_FLAGS,
 * MIMIC_ERROR_INVALID_PRIORITY, a sticky error. */
mimicResult mimicQueueCreate(int device, unsigned flags, int priority, mimicQueue* queue);
/* Destroys a queue; work already queued still completes. The default queue (NULL) cannot be
 * destroyed. Returns MIMIC_ERROR_INVALID_QUEUE. */
mimicResult mimicQueueDestroy(mimicQueue queue);
/* *device: the device the queue belongs to. NULL names every device's default queue, so it
 * has no one device. Returns MIMIC_ERROR_NULL_POINTER (device), MIMIC_ERROR_INVALID_QUEUE
 * (NULL, not a queue handle, or destroyed). */
mimicResult mimicQueueGetDevice(mimicQueue queue, int* device);
/* MIMIC_SUCCESS if all work queued so far has completed, else MIMIC_NOT_READY. Each query
 * advances the host's simulated clock by the preset's host.poll_ns, so polling terminates.
 * Returns MIMIC_ERROR_INVALID_QUEUE, a sticky error. */
mimicResult mimicQueueQuery(mimicQueue queue);
/* Blocks until all work queued so far has completed.
 * Returns MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_SIMULATION_STALLED, a sticky error. */
mimicResult mimicQueueSynchronize(mimicQueue queue);
/* Makes all later work on the queue wait until the event's most recent record has completed.
 * The event may belong to another device.
 * Returns MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_INVALID_EVENT,
 * MIMIC_ERROR_EVENT_NOT_RECORDED, a sticky error. */
mimicResult mimicQueueWaitEvent(mimicQueue queue, mimicEvent event);
/* Queues a call of fn(userData) on the simulation's thread, once all earlier work on the queue
 * has completed; later work on the queue waits for it to return. fn must not call mimic.
 * Returns MIMIC_ERROR_NULL_POINTER (fn), MIMIC_ERROR_INVALID_QUEUE, a sticky error. */
mimicResult mimicLaunchHostFunc(mimicQueue queue, void (*fn)(void*), void* userData);
/* Queues a host task: work done off the device that takes simulated time, such as a transfer
 * to another process. When the queue reaches it, fn(userData, startNs) is called on the
 * simulation's thread and returns the simulated time, in ns, at which the work ends (a time
 * before startNs counts as startNs); later work on the queue waits until then. Unlike a host
 * function, a task adds no launch latency: its end time is the whole of its cost. The whole
 * simulation stands still while fn runs, so fn may block (on another process, say) without
 * changing any simulated time. Like all work, it runs once the host's clock or a host wait
 * has let the simulation reach it. fn must not call mimic.
 * Returns MIMIC_ERROR_NULL_POINTER (fn), MIMIC_ERROR_INVALID_QUEUE, a sticky error. */
mimicResult mimicLaunchHostTask(mimicQueue queue, uint64_t (*fn)(void* userData, uint64_t startNs),
                                void* userData);

/* ---------------------------------------------------------------------------------------- */
/* Events                                                                                    */

#define MIMIC_EVENT_DEFAULT 0u
#define MIMIC_EVENT_DISABLE_TIMING 1u

/* flags: MIMIC_EVENT_DEFAULT or MIMIC_EVENT_DISABLE_TIMING.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_FLAGS,
 * a sticky error. */
mimicResult mimicEventCreate(int device, unsigned flags, mimicEvent* event);
/* Destroys an event; queued waits on it still work. Returns MIMIC_ERROR_INVALID_EVENT. */
mimicResult mimicEventDestroy(mimicEvent event);
/* Records the event on the queue: it completes when all earlier work on the queue has, and
 * captures that simulated time. Re-recording replaces the previous record for later calls.
 * Returns MIMIC_ERROR_INVALID_EVENT, MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_WRONG_DEVICE
 * (queue and event on different devices), a sticky error. */
mimicResult mimicEventRecord(mimicEvent event, mimicQueue queue);
/* MIMIC_SUCCESS if the most recent record has completed, else MIMIC_NOT_READY. Advances the
 * host clock like mimicQueueQuery.
 * Returns MIMIC_ERROR_INVALID_EVENT, MIMIC_ERROR_EVENT_NOT_RECORDED, a sticky error. */
mimicResult mimicEventQuery(mimicEvent event);
/* Blocks until the most recent record has completed.
 * Returns MIMIC_ERROR_INVALID_EVENT, MIMIC_ERROR_EVENT_NOT_RECORDED,
 * MIMIC_ERROR_SIMULATION_STALLED, a sticky error. */
mimicResult mimicEventSynchronize(mimicEvent event);
/* Simulated milliseconds from start's record to end's record (negative if end came first).
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_EVENT,
 * MIMIC_ERROR_EVENT_NOT_RECORDED, MIMIC_ERROR_EVENT_TIMING_DISABLED, MIMIC_NOT_READY (a record
 * has not completed yet), a sticky error. */
mimicResult mimicEventElapsedTime(float* ms, mimicEvent start, mimicEvent end);
/* The simulated time, in ns, at which the event's most recent record completed.
 * Returns the codes of mimicEventElapsedTime that apply to one event. */
mimicResult mimicEventGetTimestamp(mimicEvent event, uint64_t* simNs);

/* ---------------------------------------------------------------------------------------- */
/* Modules and kernels. A module image holds kernels in the mimic ISA (sim/isa/isa.h); the
 * assembler (text) and the C++ builder make images.                                         */

typedef struct mimicDim3 {
  uint32_t x, y, z;
} mimicDim3;

/* Loads a module image onto a device.
 * Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_DEVICE, MIMIC_ERROR_INVALID_SIZE (zero
 * bytes), MIMIC_ERROR_INVALID_IMAGE, MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION, a sticky error. */
mimicResult mimicModuleLoad(int device, const void* image, size_t bytes, mimicModule* module);
/* Unloads a module; its functions become invalid. Kernels already queued still run.
 * Returns MIMIC_ERROR_INVALID_MODULE. */
mimicResult mimicModuleUnload(mimicModule module);
/* Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_MODULE, MIMIC_ERROR_FUNCTION_NOT_FOUND. */
mimicResult mimicModuleGetFunction(mimicModule module, const char* name, mimicFunction* fn);
/* Queues a kernel: every workgroup of the grid runs the function on a compute unit. args holds
 * the packed 8-byte arguments, exactly as many bytes as the function declares. A fault in the
 * kernel (illegal address, misaligned operand, scratchpad hazard, watchdog) fails the device
 * with a sticky error when the kernel reaches it; mimicGetErrorDetail then names the kernel,
 * the workgroup, the instruction and the address.
 * Returns MIMIC_ERROR_INVALID_FUNCTION, MIMIC_ERROR_INVALID_GRID (a zero dimension, or more than
 * 2^31 workgroups), MIMIC_ERROR_INVALID_ARGUMENT_SIZE, MIMIC_ERROR_NULL_POINTER (args NULL with
 * argBytes > 0), MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_WRONG_DEVICE (queue on another device
 * than the module), a sticky error. */
mimicResult mimicLaunchKernel(mimicFunction fn, mimicDim3 grid, const void* args, size_t argBytes,
                              mimicQueue queue);

typedef enum mimicPipe {
  MIMIC_PIPE_SCALAR = 0,
  MIMIC_PIPE_VECTOR = 1,
  MIMIC_PIPE_MATRIX = 2,
  MIMIC_PIPE_DMA = 3
} mimicPipe;

typedef struct mimicKernelCounters {
  uint64_t workgroups;
  uint64_t instructions[4]; /* per mimicPipe */
  uint64_t flops;
  uint64_t hbmBytesRead; /* by its DMAs and atomics; cacheHitBytes of them came from the cache */
  uint64_t hbmBytesWritten;
  uint64_t startNs;       /* simulated time the first workgroup started */
  uint64_t endNs;         /* ... and the last one finished */
  uint64_t cycles;        /* (endNs - startNs) in compute clock cycles */
  double busy[4];         /* per mimicPipe: busy time / ((endNs - startNs) x compute units), 0..1;
                             the matrix pipe's cycles at its sustained clock (matrixClockMHz) */
  uint64_t cacheHitBytes; /* bytes read that hit the device's cache instead of HBM */
  /* SLoads executed: reads of computed data into the registers that steer control flow and
   * addresses. In timing mode they read 0, so a kernel with any may take another time than in
   * full mode; with none its time is the same. */
  uint64_t dataDependentReads;
} mimicKernelCounters;

/* The counters of the most recent kernel launched on the queue.
 * Returns MIMIC_NOT_READY (it has not completed yet), MIMIC_ERROR_NULL_POINTER,
 * MIMIC_ERROR_INVALID_QUEUE, MIMIC_ERROR_NO_KERNEL, a sticky error. */
mimicResult mimicQueueGetKernelCounters(mimicQueue queue, mimicKernelCounters* counters);

/* ---------------------------------------------------------------------------------------- */
/* Presets: the named configurations compiled into the library (sim/presets/). These functions
 * build no simulation, so they need no mimicInit, and they read no environment variable: what
 * they describe depends on their arguments only.                                            */

/* The lengths below hold every built-in field, default, description and source; a value or
 * source longer than its field (only an override or a preset file can set one) is an error,
 * never truncated. */
#define MIMIC_PRESET_FIELD_CHARS 64
#define MIMIC_PRESET_VALUE_CHARS 128
#define MIMIC_PRESET_DESCRIPTION_CHARS 256
#define MIMIC_PRESET_SOURCE_CHARS 256

typedef struct mimicPresetParam {
  char field[MIMIC_PRESET_FIELD_CHARS];        /* "hbm.bandwidth_gbps" */
  char value[MIMIC_PRESET_VALUE_CHARS];        /* in effect: the overrides', else the preset's,
                                                  else the default */
  char presetValue[MIMIC_PRESET_VALUE_CHARS];  /* the same without the overrides */
  char defaultValue[MIMIC_PRESET_VALUE_CHARS]; /* when no preset sets the field */
  char description[MIMIC_PRESET_DESCRIPTION_CHARS];
  char source[MIMIC_PRESET_SOURCE_CHARS]; /* where value comes from: the comment at the end of
                                             the preset line that set it ("NVIDIA A100
                                             datasheet"; an inherited field keeps its parent
                                             preset's), "override" when the overrides set it,
                                             "" when no preset line gave one or the default is
                                             in effect */
  int setByPreset;                        /* 1 if the preset (or one it inherits) sets the field */
  int overridden; /* 1 if the overrides set the field (value is then the override's) */
} mimicPresetParam;

/* The number of built-in presets. Returns MIMIC_ERROR_NULL_POINTER. */
mimicResult mimicPresetGetCount(int* count);
/* *name: the built-in preset at index (0 .. count-1), in name order; the string stays valid for
 * the life of the process. Returns MIMIC_ERROR_NULL_POINTER, MIMIC_ERROR_INVALID_VALUE (index
 * out of range). */
mimicResult mimicPresetGetName(int index, const char** name);
/* Every parameter of the model for a preset (a built-in name or a path to a preset file) with
 * overrides applied ("field=value,field=value"; NULL or "" for none), in the model's order.
 * *count receives the number of parameters; the first min(count, capacity) are written to
 * params, which may be NULL when capacity is 0 (to ask for the count). The configuration is
 * checked as mimicInit checks it.
 * Returns MIMIC_ERROR_NULL_POINTER (preset or count, or params with capacity > 0),
 * MIMIC_ERROR_INVALID_VALUE (capacity < 0), MIMIC_ERROR_UNKNOWN_PRESET (no such preset, or an
 * unreadable file), MIMIC_ERROR_UNKNOWN_CONFIG_FIELD (the preset or the overrides set a field
 * the model does not have), MIMIC_ERROR_INVALID_CONFIG_VALUE (a value the field does not
 * accept, an override not of the form field=value, a value longer than
 * MIMIC_PRESET_VALUE_CHARS - 1, or a source longer than MIMIC_PRESET_SOURCE_CHARS - 1).
 * mimicGetErrorDetail names the preset or the field. */
mimicResult mimicPresetDescribe(const char* preset, const char* overrides, mimicPresetParam* params,
                                int capacity, int* count);

/* ---------------------------------------------------------------------------------------- */
/* Collectives: the device side of a collective across several queues                       */
/*
 * A collective here is one command on each rank's queue. Its data moves when it is launched
 * (submission order, as for copies); its simulated time comes from the collective model of
 * sim/collective: an algorithm (ring, tree, direct, two_shot, nvls, hierarchical) and a
 * protocol (simple, ll128, ll) chosen by size as NCCL's tuner does, run as steps of transfers
 * over the device links, NICs and HBM, shared with all other traffic. Each rank's command holds
 * its queue from when the queue reaches it until the collective ends; the collective starts
 * when every rank's queue has reached it. MIMIC_COLL_ALGO and MIMIC_COLL_PROTO (read at each
 * call) force an algorithm or a protocol.
 * mimic_collectives.h builds an NCCL-style communicator on these two functions. */

typedef enum mimicDataType {
  mimicFloat32 = 0,
  mimicFloat16 = 1,
  mimicBfloat16 = 2,
  mimicInt32 = 3,
  mimicInt64 = 4,
  mimicUint8 = 5
} mimicDataType;

typedef enum mimicReduceOp {
  mimicSum = 0,
  mimicProd = 1,
  mimicMin = 2,
  mimicMax = 3,
  mimicAvg = 4
} mimicReduceOp;

typedef enum mimicCollectiveKind {
  MIMIC_COLLECTIVE_ALL_REDUCE = 0,
  MIMIC_COLLECTIVE_BROADCAST = 1,
  MIMIC_COLLECTIVE_REDUCE = 2,
  MIMIC_COLLECTIVE_ALL_GATHER = 3,
  MIMIC_COLLECTIVE_REDUCE_SCATTER = 4,
  MIMIC_COLLECTIVE_ALL_TO_ALL = 5
} mimicCollectiveKind;

typedef struct mimicCollectiveDesc {
  mimicCollectiveKind kind;
  /* Elements per rank as NCCL counts them: the buffer (AllReduce, Broadcast, Reduce), one
   * rank's send (AllGather) or receive (ReduceScatter) part, one block (AllToAll). */
  size_t count;
  mimicDataType datatype;
  mimicReduceOp op; /* AllReduce, Reduce, ReduceScatter */
  int root;         /* Broadcast, Reduce */
  int numRanks;
  const int* devices; /* numRanks devices, each at most once: rank r runs on devices[r] */
} mimicCollectiveDesc;

typedef struct mimicCollectivePlan {
  char algorithm[16];
  char protocol[16];
  int channels;
  int steps;
  uint64_t estimateNs; /* its simulated time with nothing else on its links and HBM */
  uint64_t bytes;      /* its size as nccl-tests counts it */
} mimicCollectivePlan;

/* How the collective would run if launched now, and its time on otherwise idle resources.
 * Returns MIMIC_ERROR_NULL_POINTER (desc, desc->devices, plan), MIMIC_ERROR_INVALID_VALUE
 * (kind, datatype or op out of range, numRanks < 1, a device listed twice, root outside
 * 0..numRanks-1), MIMIC_ERROR_INVALID_SIZE (count 0), MIMIC_ERROR_INVALID_DEVICE,
 * MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE, MIMIC_ERROR_UNSUPPORTED_COLLECTIVE_CHOICE. */
mimicResult mimicCollectiveGetPlan(const mimicCollectiveDesc* desc, mimicCollectivePlan* plan);

/* Moves the collective's data and queues rank r's part on queues[r] (a queue of
 * desc->devices[r]; NULL: its default queue). sends[r] and recvs[r] are rank r's buffers:
 * count elements (AllGather: recv holds numRanks x count; ReduceScatter: send does; AllToAll:
 * both). They may be the same buffer (in place; for AllGather send may be the rank's slice of
 * recv, for ReduceScatter recv the rank's slice of send). Broadcast reads send on the root
 * only and Reduce writes recv on the root only (the others may be NULL). f16 and bf16 reduce
 * pairwise in f32 with one rounding per step, in rank order; integers wrap; Avg divides the
 * sum by numRanks in the element type. If plan is not NULL it receives the plan that runs.
 * Returns the codes of mimicCollectiveGetPlan, MIMIC_ERROR_NULL_POINTER (sends, recvs or
 * queues, or a buffer the collective needs), MIMIC_ERROR_INVALID_DEVICE_POINTER,
 * MIMIC_ERROR_OUT_OF_BOUNDS, MIMIC_ERROR_WRONG_DEVICE (a buffer or queue not on its rank's
 * device), MIMIC_ERROR_INVALID_QUEUE, a sticky error of a rank's device. */
mimicResult mimicCollectiveLaunch(const mimicCollectiveDesc* desc, const void* const* sends,
                                  void* const* recvs, const mimicQueue* queues,
                                  mimicCollectivePlan* plan);

#ifdef __cplusplus
}
#endif

#endif /* MIMIC_MIMIC_H */
