/*
** cudadrv.c -- the CUDA driver, loaded at run time (dlopen of
** libcuda.so.1) so libfa4 loads and reports a status on machines without
** one; and device limits, read from the driver or from a built-in table.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device.h"
#include "jit.h"

static cuda_api api;
static fa4_status load_status = FA4_ENODEV;
static char load_why[512];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* Resolve every entry point; the _v2 names are what cuda.h's macros map to. */
static void load_driver(void)
{
    const char *path = getenv("FA4_CUDA_DRIVER");
    void *h;
    CUresult res;

    if (!path || !*path)
        path = "libcuda.so.1";
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_why, sizeof load_why, "no CUDA driver (%s)", dlerror());
        return;
    }
#define SYM(field, name)                                                   \
    if (!(*(void **)&api.field = dlsym(h, name))) {                        \
        snprintf(load_why, sizeof load_why,                                \
                 "CUDA driver %s lacks %s (driver too old?)", path, name); \
        return;                                                            \
    }
    SYM(cuInit, "cuInit");
    SYM(cuDriverGetVersion, "cuDriverGetVersion");
    SYM(cuDeviceGetCount, "cuDeviceGetCount");
    SYM(cuDeviceGet, "cuDeviceGet");
    SYM(cuDeviceGetName, "cuDeviceGetName");
    SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    SYM(cuModuleLoadData, "cuModuleLoadData");
    SYM(cuModuleUnload, "cuModuleUnload");
    SYM(cuModuleGetFunction, "cuModuleGetFunction");
    SYM(cuFuncSetAttribute, "cuFuncSetAttribute");
    SYM(cuFuncGetAttribute, "cuFuncGetAttribute");
    SYM(cuLaunchKernel, "cuLaunchKernel");
    SYM(cuLaunchKernelEx, "cuLaunchKernelEx");
    SYM(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    SYM(cuGetErrorName, "cuGetErrorName");
    SYM(cuGetErrorString, "cuGetErrorString");
    SYM(cuMemAlloc, "cuMemAlloc_v2");
    SYM(cuMemFree, "cuMemFree_v2");
    SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(cuMemsetD8, "cuMemsetD8_v2");
    SYM(cuCtxSynchronize, "cuCtxSynchronize");
    SYM(cuStreamSynchronize, "cuStreamSynchronize");
    SYM(cuEventCreate, "cuEventCreate");
    SYM(cuEventDestroy, "cuEventDestroy_v2");
    SYM(cuEventRecord, "cuEventRecord");
    SYM(cuEventSynchronize, "cuEventSynchronize");
    SYM(cuEventElapsedTime, "cuEventElapsedTime");
#undef SYM
    res = api.cuInit(0);
    if (res != CUDA_SUCCESS) {
        char t[256];
        snprintf(load_why, sizeof load_why, "cuInit: %s",
                 cuda_error_text(res, t, sizeof t));
        return;
    }
    load_status = FA4_OK;
}

fa4_status cuda_load(const cuda_api **out, char *why, size_t why_size)
{
    pthread_once(&load_once, load_driver);
    *out = load_status == FA4_OK ? &api : NULL;
    if (load_status != FA4_OK && why)
        snprintf(why, why_size, "%s", load_why);
    return load_status;
}

const char *cuda_error_text(CUresult res, char *buf, size_t size)
{
    const char *name = NULL, *text = NULL;

    if (api.cuGetErrorName)
        api.cuGetErrorName(res, &name);
    if (api.cuGetErrorString)
        api.cuGetErrorString(res, &text);
    if (name)
        snprintf(buf, size, "%s: %s", name, text ? text : "");
    else
        snprintf(buf, size, "CUresult %d", (int)res);
    return buf;
}

/* Table limits for planning without a GPU: the flagship part of each arch.
** sm100_opt_in is 1: nothing launches from planned limits. */
static const struct {
    const char *names[4];
    device_limits lim;
} arch_table[] = {
    { { "sm_80", "sm80", "80", NULL },
      { "sm_80 (planned: A100-class limits)", 80, "sm_80", 108, 166912,
        167936, 65536, 65536, 1024, 41943040, 0, 0, 0, 1 } },
    { { "sm_90a", "sm90a", "sm_90", "90" },
      { "sm_90a (planned: H100 SXM limits)", 90, "sm_90a", 132, 232448,
        233472, 65536, 65536, 1024, 52428800, 0, 0, 0, 1 } },
    { { "sm_100a", "sm100a", "sm_100", "100" },
      { "sm_100a (planned: B200 limits)", 100, "sm_100a", 148, 232448,
        233472, 65536, 65536, 1024, 132120576, 512, 0, 0, 1 } },
};

fa4_status device_limits_for_arch(device_limits *out, const char *arch,
                                  char *why, size_t why_size)
{
    size_t i, j;

    for (i = 0; arch && i < sizeof arch_table / sizeof arch_table[0]; i++)
        for (j = 0; j < 4 && arch_table[i].names[j]; j++)
            if (strcmp(arch, arch_table[i].names[j]) == 0) {
                *out = arch_table[i].lim;
                out->nvrtc_version = jit_nvrtc_version();
                return FA4_OK;
            }
    if (why)
        snprintf(why, why_size, "arch \"%s\" unknown; supported: sm_80 sm_90a sm_100a",
                 arch ? arch : "(null)");
    return FA4_EINVAL;
}

/* Read one attribute; returns 0 on failure. */
static int attr(const cuda_api *cu, CUdevice dev, CUdevice_attribute a)
{
    int v = 0;
    return cu->cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
}

fa4_status device_limits_query(device_limits *out, const cuda_api *cu,
                               int device, char *why, size_t why_size)
{
    CUdevice dev;
    CUresult res;
    int count = 0, major, minor;
    char t[256];

    memset(out, 0, sizeof *out);
    if ((res = cu->cuDeviceGetCount(&count)) != CUDA_SUCCESS) {
        snprintf(why, why_size, "cuDeviceGetCount: %s", cuda_error_text(res, t, sizeof t));
        return FA4_ENODEV;
    }
    if (device < 0 || device >= count) {
        snprintf(why, why_size, "device %d does not exist (%d CUDA device%s)",
                 device, count, count == 1 ? "" : "s");
        return FA4_ENODEV;
    }
    if ((res = cu->cuDeviceGet(&dev, device)) != CUDA_SUCCESS) {
        snprintf(why, why_size, "cuDeviceGet(%d): %s", device, cuda_error_text(res, t, sizeof t));
        return FA4_ECUDA;
    }
    cu->cuDeviceGetName(out->name, sizeof out->name, dev);
    major = attr(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    minor = attr(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    out->cc = major * 10 + minor;
    /* The arch-specific targets (wgmma, tcgen05) need the "a" suffix. */
    if (major == 9 || major == 10)
        snprintf(out->arch, sizeof out->arch, "sm_%d%da", major, minor);
    else
        snprintf(out->arch, sizeof out->arch, "sm_%d%d", major, minor);
    out->sm_count = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    out->smem_per_block_optin = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    out->smem_per_sm = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    out->regs_per_sm = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    out->regs_per_block = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    out->max_threads_per_block = attr(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    out->l2_bytes = attr(cu, dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    out->tmem_columns = major == 10 ? 512 : 0;
    cu->cuDriverGetVersion(&out->driver_version);
    out->nvrtc_version = jit_nvrtc_version();
    out->sm100_opt_in = device_sm100_opt_in_env();
    return FA4_OK;
}

int device_sm100_opt_in_env(void)
{
    const char *env = getenv("FA4_ENABLE_SM100");
    return env && !strcmp(env, "1");
}
