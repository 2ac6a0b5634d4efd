/* libd3d12.so for libdirectml.so: the D3D12 entry points it links against (symbol version VER_1,
 * as Microsoft's libd3d12.so for WSL exports them), forwarded to vkd3d-proton's
 * libvkd3d-proton-d3d12.so in this library's own folder. libdirectml.so's only link-time D3D12
 * import is D3D12SerializeVersionedRootSignature; the shim creates the device through
 * D3D12CreateDevice. vkd3d-proton's native build uses the System V convention for its exports,
 * as libdirectml.so does, so the calls pass straight through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef int HRESULT;
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define E_FAIL ((HRESULT)0x80004005)

static void *vkd3d;

static void *lookup(const char *name)
{
    if (!vkd3d) {
        Dl_info info;
        char path[PATH_MAX];
        if (!dladdr((void *)lookup, &info) || !info.dli_fname)
            return NULL;
        snprintf(path, sizeof path, "%s", info.dli_fname);
        char *slash = strrchr(path, '/');
        /* d3d12core first, by path: libvkd3d-proton-d3d12.so needs it by its soname */
        snprintf(slash ? slash + 1 : path, sizeof path - (slash ? (size_t)(slash + 1 - path) : 0),
                 "libvkd3d-proton-d3d12core.so");
        if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
            fprintf(stderr, "[dmlconf libd3d12] %s\n", dlerror());
            return NULL;
        }
        snprintf(slash ? slash + 1 : path, sizeof path - (slash ? (size_t)(slash + 1 - path) : 0),
                 "libvkd3d-proton-d3d12.so");
        if (!(vkd3d = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
            fprintf(stderr, "[dmlconf libd3d12] %s\n", dlerror());
            return NULL;
        }
    }
    return dlsym(vkd3d, name);
}

#define FORWARD(ret, name, params, args, fallback) \
    ret forward_##name params __asm__(#name); \
    ret forward_##name params \
    { \
        static ret (*f) params; \
        if (!f && !(f = (ret (*) params)lookup(#name))) \
            return fallback; \
        return f args; \
    }

FORWARD(HRESULT, D3D12CreateDevice, (void *adapter, int level, const void *iid, void **device),
        (adapter, level, iid, device), E_FAIL)
FORWARD(HRESULT, D3D12SerializeVersionedRootSignature, (const void *desc, void **blob, void **error),
        (desc, blob, error), E_FAIL)
FORWARD(HRESULT, D3D12SerializeRootSignature, (const void *desc, int version, void **blob, void **error),
        (desc, version, blob, error), E_FAIL)
FORWARD(HRESULT, D3D12CreateRootSignatureDeserializer, (const void *data, size_t size, const void *iid, void **out),
        (data, size, iid, out), E_FAIL)
FORWARD(HRESULT, D3D12CreateVersionedRootSignatureDeserializer, (const void *data, size_t size, const void *iid, void **out),
        (data, size, iid, out), E_FAIL)
FORWARD(HRESULT, D3D12GetDebugInterface, (const void *iid, void **out), (iid, out), E_NOINTERFACE)
FORWARD(HRESULT, D3D12EnableExperimentalFeatures, (unsigned count, const void *iids, void *configs, unsigned *sizes),
        (count, iids, configs, sizes), E_NOINTERFACE)
FORWARD(HRESULT, D3D12GetInterface, (const void *clsid, const void *iid, void **out), (clsid, iid, out), E_NOINTERFACE)
