/*
 * A fake libnvidia-ml.so for tests on machines without an NVIDIA GPU.
 *
 * It implements the NVML entry points that trainbench-probe calls (through
 * nvml-wrapper) and answers from a JSON script named by $FAKE_NVML_SCRIPT, so
 * that CI exercises the real probe → runner → store → summary → report path:
 * device names, memory, power, a monotonic energy counter that follows the
 * scripted power, throttle reasons, and the compute processes on each GPU.
 *
 * This is a test double for hardware CI cannot have, not a stand-in for a
 * real GPU run. Built by the tests:
 *   cc -shared -fPIC -o DIR/libnvidia-ml.so.1 fake_nvml.c -lcjson
 *
 * Script (every field optional; see tests/fake-nvml/README.md):
 * {
 *   "driver_version": "580.95.05", "cuda_driver_version": 13000,
 *   "devices": [{
 *     "name": "NVIDIA H100 80GB HBM3",
 *     "memory_total_mib": 81559, "memory_used_mib": 1024,
 *     "power_limit_w": 700, "power_w": 500, "utilization_percent": 97,
 *     "sm_clock_mhz": 1755, "sm_clock_max_mhz": 1980, "mem_clock_mhz": 2619,
 *     "energy_start_mj": 1000000,     // null: the counter is not supported
 *     "energy_wrap_mj": 250000,       // the counter wraps modulo this (mJ)
 *     "throttle_reasons": 0,           // NVML bit mask
 *     "processes": [{"pid": "children", "used_mib": 30000},
 *                   {"pid": 4242, "used_mib": 2000}]
 *   }]
 * }
 * The energy counter is energy_start_mj + power_w × seconds since nvmlInit
 * (mJ), so it agrees with the scripted power; with energy_wrap_mj it wraps
 * to 0 at that value (at 500 W, 250000 mJ wraps every 0.5 s, so any span
 * of a run longer than that sees the counter go backwards). "children" stands for every
 * direct child process of the process that loaded the library (the runner's
 * worker).
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

#define MAX_DEVICES 16
#define MAX_PROCS 64

struct fake_process {
    int children; /* 1: every direct child of the calling process */
    unsigned int pid;
    unsigned long long used_bytes;
};

struct fake_device {
    char name[96];
    unsigned long long memory_total, memory_used;
    unsigned int power_limit_mw, power_mw, util;
    unsigned int sm_clock, sm_clock_max, mem_clock;
    int energy_supported;
    unsigned long long energy_start_mj;
    unsigned long long energy_wrap_mj; /* 0: never wraps */
    unsigned long long throttle;
    int nprocs;
    struct fake_process procs[MAX_PROCS];
};

static struct fake_device devices[MAX_DEVICES];
static unsigned int device_count;
static char driver_version[64] = "fake-nvml";
static int cuda_driver_version = 13000;
static int initialised;
static struct timespec t0;

static double since_init_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

static double num(const cJSON *obj, const char *key, double fallback) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

static const unsigned long long MIB = 1024ULL * 1024ULL;

static int load_script(void) {
    const char *path = getenv("FAKE_NVML_SCRIPT");
    if (!path) {
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(text);
        return -1;
    }
    fclose(f);
    text[size] = 0;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) {
        return -1;
    }
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(root, "driver_version");
    if (cJSON_IsString(dv)) {
        snprintf(driver_version, sizeof driver_version, "%s", dv->valuestring);
    }
    cuda_driver_version = (int)num(root, "cuda_driver_version", 13000);
    device_count = 0;
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(root, "devices");
    const cJSON *d;
    cJSON_ArrayForEach(d, devs) {
        if (device_count == MAX_DEVICES) {
            break;
        }
        struct fake_device *x = &devices[device_count++];
        memset(x, 0, sizeof *x);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
        snprintf(x->name, sizeof x->name, "%s",
                 cJSON_IsString(name) ? name->valuestring : "NVIDIA Fake GPU");
        x->memory_total = (unsigned long long)(num(d, "memory_total_mib", 81559) * MIB);
        x->memory_used = (unsigned long long)(num(d, "memory_used_mib", 0) * MIB);
        x->power_limit_mw = (unsigned int)(num(d, "power_limit_w", 700) * 1000);
        x->power_mw = (unsigned int)(num(d, "power_w", 300) * 1000);
        x->util = (unsigned int)num(d, "utilization_percent", 0);
        x->sm_clock = (unsigned int)num(d, "sm_clock_mhz", 1755);
        x->sm_clock_max = (unsigned int)num(d, "sm_clock_max_mhz", 1980);
        x->mem_clock = (unsigned int)num(d, "mem_clock_mhz", 2619);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(d, "energy_start_mj");
        x->energy_supported = !cJSON_IsNull(e);
        x->energy_start_mj = cJSON_IsNumber(e) ? (unsigned long long)e->valuedouble : 0;
        x->energy_wrap_mj = (unsigned long long)num(d, "energy_wrap_mj", 0);
        x->throttle = (unsigned long long)num(d, "throttle_reasons", 0);
        const cJSON *procs = cJSON_GetObjectItemCaseSensitive(d, "processes");
        const cJSON *p;
        cJSON_ArrayForEach(p, procs) {
            if (x->nprocs == MAX_PROCS) {
                break;
            }
            struct fake_process *fp = &x->procs[x->nprocs++];
            const cJSON *pid = cJSON_GetObjectItemCaseSensitive(p, "pid");
            fp->children = cJSON_IsString(pid) && strcmp(pid->valuestring, "children") == 0;
            fp->pid = cJSON_IsNumber(pid) ? (unsigned int)pid->valuedouble : 0;
            fp->used_bytes = (unsigned long long)(num(p, "used_mib", 0) * MIB);
        }
    }
    cJSON_Delete(root);
    return 0;
}

/* Direct children of this process, from /proc/PID/stat's ppid field. */
static unsigned int children_of_self(unsigned int *out, unsigned int cap) {
    unsigned int n = 0;
    pid_t self = getpid();
    DIR *dir = opendir("/proc");
    if (!dir) {
        return 0;
    }
    struct dirent *ent;
    while ((ent = readdir(dir)) && n < cap) {
        if (!isdigit((unsigned char)ent->d_name[0])) {
            continue;
        }
        char path[288], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", ent->d_name);
        FILE *f = fopen(path, "r");
        if (!f) {
            continue;
        }
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        const char *close = strrchr(buf, ')');
        if (!close) {
            continue;
        }
        char state;
        int ppid;
        if (sscanf(close + 2, "%c %d", &state, &ppid) == 2 && ppid == self && state != 'Z') {
            out[n++] = (unsigned int)atoi(ent->d_name);
        }
    }
    closedir(dir);
    return n;
}

static struct fake_device *dev(void *handle) {
    struct fake_device *d = handle;
    if (!initialised || d < devices || d >= devices + device_count) {
        return NULL;
    }
    return d;
}

#define DEVICE_OR_FAIL(h)                                                                         \
    struct fake_device *d = dev(h);                                                               \
    if (!d) {                                                                                     \
        return initialised ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNINITIALIZED;              \
    }

nvmlReturn_t nvmlInit_v2(void) {
    if (load_script() != 0) {
        return NVML_ERROR_LIBRARY_NOT_FOUND;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    initialised = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }

nvmlReturn_t nvmlShutdown(void) {
    initialised = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    default: return "Fake NVML error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!version || strlen(driver_version) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(version, driver_version);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!v) return NVML_ERROR_INVALID_ARGUMENT;
    *v = cuda_driver_version;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return nvmlSystemGetCudaDriverVersion_v2(v); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = device_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **handle) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!handle || index >= device_count) return NVML_ERROR_INVALID_ARGUMENT;
    *handle = &devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(void *h, char *name, unsigned int length) {
    DEVICE_OR_FAIL(h);
    if (!name || strlen(d->name) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(name, d->name);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(void *h, nvmlMemory_v2_t *m) {
    DEVICE_OR_FAIL(h);
    if (!m) return NVML_ERROR_INVALID_ARGUMENT;
    m->total = d->memory_total;
    m->reserved = 0;
    m->used = d->memory_used;
    m->free = d->memory_total > d->memory_used ? d->memory_total - d->memory_used : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned int *mw) {
    DEVICE_OR_FAIL(h);
    *mw = d->power_limit_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(void *h, unsigned int *mw) {
    DEVICE_OR_FAIL(h);
    *mw = d->power_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj) {
    DEVICE_OR_FAIL(h);
    if (!d->energy_supported) return NVML_ERROR_NOT_SUPPORTED;
    unsigned long long e = d->energy_start_mj + (unsigned long long)(since_init_s() * d->power_mw);
    *mj = d->energy_wrap_mj > 0 ? e % d->energy_wrap_mj : e;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(void *h, nvmlUtilization_t *u) {
    DEVICE_OR_FAIL(h);
    u->gpu = d->util;
    u->memory = d->util / 2;
    return NVML_SUCCESS;
}

/* nvmlClockType_t: 0 graphics, 1 SM, 2 memory, 3 video. */
nvmlReturn_t nvmlDeviceGetClockInfo(void *h, int type, unsigned int *mhz) {
    DEVICE_OR_FAIL(h);
    *mhz = type == 2 ? d->mem_clock : d->sm_clock;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(void *h, int type, unsigned int *mhz) {
    DEVICE_OR_FAIL(h);
    *mhz = type == 2 ? d->mem_clock : d->sm_clock_max;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *bits) {
    DEVICE_OR_FAIL(h);
    *bits = d->throttle;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *bits) {
    return nvmlDeviceGetCurrentClocksThrottleReasons(h, bits);
}

static nvmlReturn_t compute_processes(void *h, unsigned int *count, nvmlProcessInfo_t *infos) {
    DEVICE_OR_FAIL(h);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlProcessInfo_t found[MAX_PROCS];
    unsigned int n = 0;
    for (int i = 0; i < d->nprocs && n < MAX_PROCS; i++) {
        if (d->procs[i].children) {
            unsigned int kids[MAX_PROCS];
            unsigned int k = children_of_self(kids, MAX_PROCS - n);
            for (unsigned int j = 0; j < k; j++) {
                found[n++] = (nvmlProcessInfo_t){kids[j], d->procs[i].used_bytes, 0xFFFFFFFF, 0xFFFFFFFF};
            }
        } else {
            found[n++] = (nvmlProcessInfo_t){d->procs[i].pid, d->procs[i].used_bytes, 0xFFFFFFFF, 0xFFFFFFFF};
        }
    }
    if (!infos || *count < n) {
        *count = n;
        return n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(infos, found, n * sizeof *found);
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count, nvmlProcessInfo_t *infos) {
    return compute_processes(h, count, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned int *count, nvmlProcessInfo_t *infos) {
    return compute_processes(h, count, infos);
}
