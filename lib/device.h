/*
** device.h -- what libfa4 knows of a GPU: its limits (the budget model's
** input) and the CUDA driver entry points, loaded at run time with dlopen
** so the library loads on machines without a driver.
*/
#ifndef FA4_DEVICE_H
#define FA4_DEVICE_H

#include <cuda.h>   /* types only: no symbol of libcuda is linked */
#include "fa4.h"

/* Shared memory the system reserves per resident CTA (sm_80 and later),
** bytes: what fits an SM is smem_per_sm / (a CTA's bytes + this). */
#define DEVICE_SMEM_PER_CTA_RESERVED 1024

/* The limits of one device, read from the driver or from a built-in table
** (planning for an arch without a GPU). */
typedef struct device_limits {
    char name[128];            /* "NVIDIA H100 80GB HBM3" or "sm_90a (planned)" */
    int cc;                    /* compute capability, major*10+minor: 80, 90, 100 */
    char arch[16];             /* NVRTC target: "sm_80", "sm_90a", "sm_100a" */
    int sm_count;
    int smem_per_block_optin;  /* bytes a block may opt in to */
    int smem_per_sm;
    int regs_per_sm;           /* 32-bit registers */
    int regs_per_block;
    int max_threads_per_block;
    int l2_bytes;
    int tmem_columns;          /* sm100: 512; else 0 */
    int driver_version;        /* cuDriverGetVersion, 0 when planning */
    int nvrtc_version;         /* major*1000 + minor*10 */
    /* Not a hardware limit: 1 when the sm100 family may be used here
       (budget_fit refuses it otherwise).  Its kernels have never run on
       real hardware, so a real device needs the user's opt-in,
       $FA4_ENABLE_SM100=1 or fa4_context_options.enable_sm100; planned
       limits have it, since nothing launches from them. */
    int sm100_opt_in;
} device_limits;

/*
** Fill *OUT with the table limits of ARCH ("sm_80", "sm_90a", "sm_100a",
** also "90", "sm_90"), sm100_opt_in set.  Returns FA4_OK or FA4_EINVAL
** with WHY naming the accepted names.
*/
fa4_status device_limits_for_arch(device_limits *out, const char *arch,
                                  char *why, size_t why_size);

/* The driver entry points libfa4 uses, resolved once per process. */
typedef struct cuda_api {
    CUresult (*cuInit)(unsigned int);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxPushCurrent)(CUcontext);
    CUresult (*cuCtxPopCurrent)(CUcontext *);
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*cuFuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                               unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **, void **);
    CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                                 void **);
    CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *, CUtensorMapDataType,
                                       cuuint32_t, void *, const cuuint64_t *,
                                       const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill);
    CUresult (*cuGetErrorName)(CUresult, const char **);
    CUresult (*cuGetErrorString)(CUresult, const char **);
    /* used by tests, the tuner and benchmarks */
    CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuEventCreate)(CUevent *, unsigned int);
    CUresult (*cuEventDestroy)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
} cuda_api;

/*
** Load libcuda.so.1 and resolve the entry points (once per process) and
** call cuInit(0).  On FA4_OK *out points at the process-wide table.
** FA4_ENODEV with WHY ("no CUDA driver (libcuda.so.1: cannot open ...)",
** "cuInit: CUDA_ERROR_NO_DEVICE") otherwise.  Thread-safe.
*/
fa4_status cuda_load(const cuda_api **out, char *why, size_t why_size);

/* Write "NAME: description" of RES into BUF. Returns BUF. */
const char *cuda_error_text(CUresult res, char *buf, size_t size);

/*
** Read DEVICE's limits through the driver into *OUT, sm100_opt_in from
** device_sm100_opt_in_env().  Returns FA4_OK, FA4_ENODEV (no such
** ordinal) or FA4_ECUDA, with WHY.
*/
fa4_status device_limits_query(device_limits *out, const cuda_api *cu,
                               int device, char *why, size_t why_size);

/* 1 when the environment opts in to the sm100 family: $FA4_ENABLE_SM100
** is "1".  Thread-safe (reads the environment only). */
int device_sm100_opt_in_env(void);

#endif
