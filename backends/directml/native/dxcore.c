/* libdxcore.so for libdirectml.so on plain Linux: DXCoreCreateAdapterFactory with one adapter.
 *
 * libdirectml.so loads libdxcore.so and asks its factory for the adapter of the D3D12 device
 * (IDXCoreAdapterFactory::GetAdapterByLuid), then for properties of it: hardware ID, driver
 * description, IsIntegrated, driver version. Without a factory DMLCreateDevice fails with E_FAIL.
 * The adapter stands for vkd3d-proton on lavapipe and reports the IDs of Microsoft's software
 * adapter (vendor 0x1414, device 0x8c), as WARP does. COM objects use System V calls here.
 * Set DMLCONF_DXCORE_LOG=1 to see every call on stderr. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t HRESULT;
typedef struct { uint32_t d1; uint16_t d2, d3; uint8_t d4[8]; } GUID;
typedef struct { uint32_t LowPart; int32_t HighPart; } LUID;
#define S_OK 0
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define E_INVALIDARG ((HRESULT)0x80070057)
#define E_NOTIMPL ((HRESULT)0x80004001)

static const GUID IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xc0, 0, 0, 0, 0, 0, 0, 0x46}};
static const GUID IID_IDXCoreAdapterFactory = {0x78ee5945, 0xc36e, 0x4b13, {0xa6, 0x69, 0x00, 0x5d, 0xd1, 0x1c, 0x0f, 0x06}};
static const GUID IID_IDXCoreAdapterList = {0x526c7776, 0x40e9, 0x459b, {0xb7, 0x11, 0xf3, 0x2a, 0xd7, 0x6d, 0xfc, 0x28}};
static const GUID IID_IDXCoreAdapter = {0xf0db4c7f, 0xfe5a, 0x42a2, {0xbd, 0x62, 0xf2, 0xa6, 0xcf, 0x6f, 0xc8, 0x3e}};

static int logging = -1;
#define LOG(...) do { if (logging < 0) logging = getenv("DMLCONF_DXCORE_LOG") != NULL; \
                      if (logging) fprintf(stderr, "[dxcore] " __VA_ARGS__); } while (0)

typedef struct Obj { const void *vtbl; const GUID *iid; } Obj;
static Obj factory, adapter_list, adapter;
static LUID luid;

static HRESULT query(Obj *o, const GUID *iid, void **out)
{
    if (!memcmp(iid, o->iid, sizeof *iid) || !memcmp(iid, &IID_IUnknown, sizeof *iid)) {
        *out = o;
        return S_OK;
    }
    LOG("QueryInterface(%08x-...) -> E_NOINTERFACE\n", iid->d1);
    *out = NULL;
    return E_NOINTERFACE;
}
static uint32_t add_ref(Obj *o) { (void)o; return 2; }   /* static objects: never freed */
static uint32_t release(Obj *o) { (void)o; return 1; }

/* DXCoreAdapterProperty values */
enum { InstanceLuid, DriverVersion, DriverDescription, HardwareID, KmdModelVersion, ComputePreemptionGranularity,
       GraphicsPreemptionGranularity, DedicatedAdapterMemory, DedicatedSystemMemory, SharedSystemMemory,
       AcgCompatible, IsHardware, IsIntegrated, IsDetachable, HardwareIDParts };
static const char description[] = "vkd3d-proton on Mesa lavapipe (dml-conformance)";

static size_t property_size(uint32_t p)
{
    switch (p) {
    case InstanceLuid: case DriverVersion: case DedicatedAdapterMemory: case DedicatedSystemMemory:
    case SharedSystemMemory: return 8;
    case DriverDescription: return sizeof description;
    case HardwareID: return 16;
    case HardwareIDParts: return 20;
    case KmdModelVersion: case ComputePreemptionGranularity: case GraphicsPreemptionGranularity: return 4;
    case AcgCompatible: case IsHardware: case IsIntegrated: case IsDetachable: return 1;
    }
    return 0;
}

static bool a_IsValid(Obj *o) { (void)o; return true; }
static bool a_IsAttributeSupported(Obj *o, const GUID *g) { (void)o; LOG("IsAttributeSupported(%08x)\n", g->d1); return true; }
static bool a_IsPropertySupported(Obj *o, uint32_t p) { (void)o; return property_size(p) != 0; }
static HRESULT a_GetProperty(Obj *o, uint32_t p, size_t size, void *data)
{
    size_t need = property_size(p);
    uint64_t u64 = 0;
    uint32_t u32 = 0;
    uint8_t byte = 0;
    (void)o;
    LOG("GetProperty(%u, %zu)\n", p, size);
    if (!need || size < need)
        return E_INVALIDARG;
    memset(data, 0, size);
    switch (p) {
    case InstanceLuid: memcpy(data, &luid, 8); return S_OK;
    case DriverVersion: u64 = (31ull << 48) | (101ull << 16) | 2111; memcpy(data, &u64, 8); return S_OK;
    case DriverDescription: memcpy(data, description, sizeof description); return S_OK;
    case HardwareID: { uint32_t id[4] = {0x1414, 0x8c, 0, 0}; memcpy(data, id, 16); return S_OK; }
    case HardwareIDParts: { uint32_t id[5] = {0x1414, 0x8c, 0, 0, 0}; memcpy(data, id, 20); return S_OK; }
    case KmdModelVersion: u32 = 0x3000; memcpy(data, &u32, 4); return S_OK;  /* WDDM 3.0 */
    case SharedSystemMemory: u64 = 8ull << 30; memcpy(data, &u64, 8); return S_OK;
    case AcgCompatible: case IsIntegrated: byte = 1; memcpy(data, &byte, 1); return S_OK;
    default: return S_OK;  /* zero: no dedicated memory, no preemption, not hardware, not detachable */
    }
}
static HRESULT a_GetPropertySize(Obj *o, uint32_t p, size_t *size) { (void)o; *size = property_size(p); return *size ? S_OK : E_INVALIDARG; }
static bool a_IsQueryStateSupported(Obj *o, uint32_t s) { (void)o; return s == 1; }
static HRESULT a_QueryState(Obj *o, uint32_t s, size_t in_size, const void *in, size_t out_size, void *out)
{
    (void)o; (void)in_size; (void)in;
    if (s == 1 && out_size >= 32) {  /* AdapterMemoryBudget: 8 GiB local, nothing non-local */
        uint64_t m[4] = {8ull << 30, 0, 8ull << 30, 0};
        memcpy(out, m, 32);
        return S_OK;
    }
    return E_NOTIMPL;
}
static bool a_IsSetStateSupported(Obj *o, uint32_t s) { (void)o; (void)s; return false; }
static HRESULT a_SetState(Obj *o, uint32_t s, size_t a, const void *b, size_t c, const void *d)
{ (void)o; (void)s; (void)a; (void)b; (void)c; (void)d; return E_NOTIMPL; }
static HRESULT get_factory(Obj *o, const GUID *iid, void **out) { (void)o; return query(&factory, iid, out); }
static const void *adapter_vtbl[] = {query, add_ref, release, a_IsValid, a_IsAttributeSupported, a_IsPropertySupported,
    a_GetProperty, a_GetPropertySize, a_IsQueryStateSupported, a_QueryState, a_IsSetStateSupported, a_SetState, get_factory};

static HRESULT l_GetAdapter(Obj *o, uint32_t i, const GUID *iid, void **out)
{ (void)o; if (i) { *out = NULL; return E_INVALIDARG; } return query(&adapter, iid, out); }
static uint32_t l_GetAdapterCount(Obj *o) { (void)o; return 1; }
static bool l_IsStale(Obj *o) { (void)o; return false; }
static HRESULT l_Sort(Obj *o, uint32_t n, const uint32_t *p) { (void)o; (void)n; (void)p; return S_OK; }
static bool l_IsAdapterPreferenceSupported(Obj *o, uint32_t p) { (void)o; (void)p; return true; }
static const void *list_vtbl[] = {query, add_ref, release, l_GetAdapter, l_GetAdapterCount, l_IsStale, get_factory, l_Sort,
    l_IsAdapterPreferenceSupported};

static HRESULT f_CreateAdapterList(Obj *o, uint32_t n, const GUID *attributes, const GUID *iid, void **out)
{ (void)o; (void)attributes; LOG("CreateAdapterList(%u attributes)\n", n); return query(&adapter_list, iid, out); }
static HRESULT f_GetAdapterByLuid(Obj *o, const LUID *l, const GUID *iid, void **out)
{ (void)o; LOG("GetAdapterByLuid(%08x:%08x)\n", l->HighPart, l->LowPart); luid = *l; return query(&adapter, iid, out); }
static bool f_IsNotificationTypeSupported(Obj *o, uint32_t t) { (void)o; (void)t; return false; }
static HRESULT f_RegisterEventNotification(Obj *o, void *obj, uint32_t t, void *cb, void *ctx, uint32_t *cookie)
{ (void)o; (void)obj; (void)t; (void)cb; (void)ctx; *cookie = 1; return S_OK; }
static HRESULT f_UnregisterEventNotification(Obj *o, uint32_t c) { (void)o; (void)c; return S_OK; }
static const void *factory_vtbl[] = {query, add_ref, release, f_CreateAdapterList, f_GetAdapterByLuid,
    f_IsNotificationTypeSupported, f_RegisterEventNotification, f_UnregisterEventNotification};

static Obj factory = {factory_vtbl, &IID_IDXCoreAdapterFactory};
static Obj adapter_list = {list_vtbl, &IID_IDXCoreAdapterList};
static Obj adapter = {adapter_vtbl, &IID_IDXCoreAdapter};

__attribute__((visibility("default"))) HRESULT DXCoreCreateAdapterFactory(const GUID *iid, void **out)
{
    LOG("DXCoreCreateAdapterFactory(%08x-...)\n", iid->d1);
    return query(&factory, iid, out);
}
