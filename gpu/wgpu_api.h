// Declarations of the subset of the wgpu-native C API (webgpu.h of mid-2024 plus the
// native extensions of wgpu.h) that this package calls. The implementation is the static
// libwgpu_native.a shipped inside github.com/cogentcore/webgpu, which this package links by
// importing that module. cgo cannot reach that module's headers (their directory is not
// known to #cgo directives), hence this copy. TestAPIHeader in wgpu_api_test.go holds it
// to the module's webgpu.h and wgpu.h with the C compiler: every prototype here is
// redeclared after the real headers (a conflict fails to compile), and the size, alignment
// and field offsets of every struct and the value of every enum constant here are compared
// with the real ones.
//
// The test reads this file line by line: keep one declaration per line, structs as
// "typedef struct X {" ... "} X;" with one field per line, and the constants in the one
// anonymous enum. WGPUEnum is this file's own name for the 32-bit enum types.
#ifndef GGML_WGPU_WGPU_API_H
#define GGML_WGPU_WGPU_API_H

#include <stddef.h>
#include <stdint.h>

typedef uint32_t WGPUFlags;
typedef uint32_t WGPUBool;
typedef uint32_t WGPUEnum;
typedef uint64_t WGPUSubmissionIndex;

typedef struct WGPUInstanceImpl *WGPUInstance;
typedef struct WGPUAdapterImpl *WGPUAdapter;
typedef struct WGPUDeviceImpl *WGPUDevice;
typedef struct WGPUQueueImpl *WGPUQueue;
typedef struct WGPUBufferImpl *WGPUBuffer;
typedef struct WGPUShaderModuleImpl *WGPUShaderModule;
typedef struct WGPUBindGroupLayoutImpl *WGPUBindGroupLayout;
typedef struct WGPUPipelineLayoutImpl *WGPUPipelineLayout;
typedef struct WGPUComputePipelineImpl *WGPUComputePipeline;
typedef struct WGPUBindGroupImpl *WGPUBindGroup;
typedef struct WGPUCommandEncoderImpl *WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl *WGPUComputePassEncoder;
typedef struct WGPUCommandBufferImpl *WGPUCommandBuffer;
typedef struct WGPUQuerySetImpl *WGPUQuerySet;

enum {
    WGPUAdapterType_DiscreteGPU = 0,
    WGPUAdapterType_IntegratedGPU = 1,
    WGPUAdapterType_CPU = 2,
    WGPUAdapterType_Unknown = 3,

    WGPUBackendType_Vulkan = 6,
    WGPUInstanceBackend_Vulkan = 1,

    WGPUBufferBindingType_Uniform = 1,
    WGPUBufferBindingType_Storage = 2,
    WGPUBufferBindingType_ReadOnlyStorage = 3,

    WGPUBufferMapAsyncStatus_Success = 0,
    WGPURequestAdapterStatus_Success = 0,
    WGPURequestDeviceStatus_Success = 0,

    WGPUErrorFilter_Validation = 0,
    WGPUErrorFilter_OutOfMemory = 1,
    WGPUErrorType_NoError = 0,

    WGPUBufferUsage_MapRead = 0x1,
    WGPUBufferUsage_CopySrc = 0x4,
    WGPUBufferUsage_CopyDst = 0x8,
    WGPUBufferUsage_Uniform = 0x40,
    WGPUBufferUsage_Storage = 0x80,
    WGPUBufferUsage_QueryResolve = 0x200,

    WGPUFeatureName_TimestampQuery = 0x3,
    WGPUQueryType_Timestamp = 0x1,

    WGPUMapMode_Read = 0x1,
    WGPUShaderStage_Compute = 0x4,

    WGPUSType_ShaderModuleWGSLDescriptor = 0x6,
};

typedef struct WGPUChainedStruct {
    const struct WGPUChainedStruct *next;
    WGPUEnum sType;
} WGPUChainedStruct;

typedef struct WGPUChainedStructOut {
    struct WGPUChainedStructOut *next;
    WGPUEnum sType;
} WGPUChainedStructOut;

typedef void (*WGPUErrorCallback)(WGPUEnum type, const char *message, void *userdata);
typedef void (*WGPUDeviceLostCallback)(WGPUEnum reason, const char *message, void *userdata);
typedef void (*WGPUBufferMapAsyncCallback)(WGPUEnum status, void *userdata);
typedef void (*WGPUAdapterRequestDeviceCallback)(WGPUEnum status, WGPUDevice device, const char *message, void *userdata);
typedef void (*WGPUQueueOnSubmittedWorkDoneCallback)(WGPUEnum status, void *userdata);

typedef struct WGPUInstanceDescriptor {
    const WGPUChainedStruct *nextInChain;
} WGPUInstanceDescriptor;

typedef struct WGPUInstanceEnumerateAdapterOptions {
    const WGPUChainedStruct *nextInChain;
    WGPUFlags backends;
} WGPUInstanceEnumerateAdapterOptions;

typedef struct WGPUAdapterInfo {
    WGPUChainedStructOut *nextInChain;
    const char *vendor;
    const char *architecture;
    const char *device;
    const char *description;
    WGPUEnum backendType;
    WGPUEnum adapterType;
    uint32_t vendorID;
    uint32_t deviceID;
} WGPUAdapterInfo;

typedef struct WGPULimits {
    uint32_t maxTextureDimension1D;
    uint32_t maxTextureDimension2D;
    uint32_t maxTextureDimension3D;
    uint32_t maxTextureArrayLayers;
    uint32_t maxBindGroups;
    uint32_t maxBindGroupsPlusVertexBuffers;
    uint32_t maxBindingsPerBindGroup;
    uint32_t maxDynamicUniformBuffersPerPipelineLayout;
    uint32_t maxDynamicStorageBuffersPerPipelineLayout;
    uint32_t maxSampledTexturesPerShaderStage;
    uint32_t maxSamplersPerShaderStage;
    uint32_t maxStorageBuffersPerShaderStage;
    uint32_t maxStorageTexturesPerShaderStage;
    uint32_t maxUniformBuffersPerShaderStage;
    uint64_t maxUniformBufferBindingSize;
    uint64_t maxStorageBufferBindingSize;
    uint32_t minUniformBufferOffsetAlignment;
    uint32_t minStorageBufferOffsetAlignment;
    uint32_t maxVertexBuffers;
    uint64_t maxBufferSize;
    uint32_t maxVertexAttributes;
    uint32_t maxVertexBufferArrayStride;
    uint32_t maxInterStageShaderComponents;
    uint32_t maxInterStageShaderVariables;
    uint32_t maxColorAttachments;
    uint32_t maxColorAttachmentBytesPerSample;
    uint32_t maxComputeWorkgroupStorageSize;
    uint32_t maxComputeInvocationsPerWorkgroup;
    uint32_t maxComputeWorkgroupSizeX;
    uint32_t maxComputeWorkgroupSizeY;
    uint32_t maxComputeWorkgroupSizeZ;
    uint32_t maxComputeWorkgroupsPerDimension;
} WGPULimits;

typedef struct WGPUSupportedLimits {
    WGPUChainedStructOut *nextInChain;
    WGPULimits limits;
} WGPUSupportedLimits;

typedef struct WGPURequiredLimits {
    const WGPUChainedStruct *nextInChain;
    WGPULimits limits;
} WGPURequiredLimits;

typedef struct WGPUQueueDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
} WGPUQueueDescriptor;

typedef struct WGPUUncapturedErrorCallbackInfo {
    const WGPUChainedStruct *nextInChain;
    WGPUErrorCallback callback;
    void *userdata;
} WGPUUncapturedErrorCallbackInfo;

typedef struct WGPUDeviceDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    size_t requiredFeatureCount;
    const WGPUEnum *requiredFeatures;
    const WGPURequiredLimits *requiredLimits;
    WGPUQueueDescriptor defaultQueue;
    WGPUDeviceLostCallback deviceLostCallback;
    void *deviceLostUserdata;
    WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
} WGPUDeviceDescriptor;

typedef struct WGPUBufferDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    WGPUFlags usage;
    uint64_t size;
    WGPUBool mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUShaderModuleDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    size_t hintCount;
    const void *hints;
} WGPUShaderModuleDescriptor;

typedef struct WGPUShaderModuleWGSLDescriptor {
    WGPUChainedStruct chain;
    const char *code;
} WGPUShaderModuleWGSLDescriptor;

typedef struct WGPUBufferBindingLayout {
    const WGPUChainedStruct *nextInChain;
    WGPUEnum type;
    WGPUBool hasDynamicOffset;
    uint64_t minBindingSize;
} WGPUBufferBindingLayout;

typedef struct WGPUSamplerBindingLayout {
    const WGPUChainedStruct *nextInChain;
    WGPUEnum type;
} WGPUSamplerBindingLayout;

typedef struct WGPUTextureBindingLayout {
    const WGPUChainedStruct *nextInChain;
    WGPUEnum sampleType;
    WGPUEnum viewDimension;
    WGPUBool multisampled;
} WGPUTextureBindingLayout;

typedef struct WGPUStorageTextureBindingLayout {
    const WGPUChainedStruct *nextInChain;
    WGPUEnum access;
    WGPUEnum format;
    WGPUEnum viewDimension;
} WGPUStorageTextureBindingLayout;

typedef struct WGPUBindGroupLayoutEntry {
    const WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUFlags visibility;
    WGPUBufferBindingLayout buffer;
    WGPUSamplerBindingLayout sampler;
    WGPUTextureBindingLayout texture;
    WGPUStorageTextureBindingLayout storageTexture;
} WGPUBindGroupLayoutEntry;

typedef struct WGPUBindGroupLayoutDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    size_t entryCount;
    const WGPUBindGroupLayoutEntry *entries;
} WGPUBindGroupLayoutDescriptor;

typedef struct WGPUPipelineLayoutDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    size_t bindGroupLayoutCount;
    const WGPUBindGroupLayout *bindGroupLayouts;
} WGPUPipelineLayoutDescriptor;

typedef struct WGPUProgrammableStageDescriptor {
    const WGPUChainedStruct *nextInChain;
    WGPUShaderModule module;
    const char *entryPoint;
    size_t constantCount;
    const void *constants;
} WGPUProgrammableStageDescriptor;

typedef struct WGPUComputePipelineDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    WGPUPipelineLayout layout;
    WGPUProgrammableStageDescriptor compute;
} WGPUComputePipelineDescriptor;

typedef struct WGPUBindGroupEntry {
    const WGPUChainedStruct *nextInChain;
    uint32_t binding;
    WGPUBuffer buffer;
    uint64_t offset;
    uint64_t size;
    void *sampler;
    void *textureView;
} WGPUBindGroupEntry;

typedef struct WGPUBindGroupDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    WGPUBindGroupLayout layout;
    size_t entryCount;
    const WGPUBindGroupEntry *entries;
} WGPUBindGroupDescriptor;

typedef struct WGPUCommandEncoderDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
} WGPUCommandEncoderDescriptor;

typedef struct WGPUComputePassTimestampWrites {
    WGPUQuerySet querySet;
    uint32_t beginningOfPassWriteIndex;
    uint32_t endOfPassWriteIndex;
} WGPUComputePassTimestampWrites;

typedef struct WGPUComputePassDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    const WGPUComputePassTimestampWrites *timestampWrites;
} WGPUComputePassDescriptor;

typedef struct WGPUQuerySetDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
    WGPUEnum type;
    uint32_t count;
} WGPUQuerySetDescriptor;

typedef struct WGPUCommandBufferDescriptor {
    const WGPUChainedStruct *nextInChain;
    const char *label;
} WGPUCommandBufferDescriptor;

typedef struct WGPUWrappedSubmissionIndex {
    WGPUQueue queue;
    WGPUSubmissionIndex submissionIndex;
} WGPUWrappedSubmissionIndex;

void wgpuSetLogLevel(WGPUEnum level);
WGPUInstance wgpuCreateInstance(const WGPUInstanceDescriptor *descriptor);
void wgpuInstanceRelease(WGPUInstance instance);
size_t wgpuInstanceEnumerateAdapters(WGPUInstance instance, const WGPUInstanceEnumerateAdapterOptions *options, WGPUAdapter *adapters);

void wgpuAdapterGetInfo(WGPUAdapter adapter, WGPUAdapterInfo *info);
void wgpuAdapterInfoFreeMembers(WGPUAdapterInfo info);
WGPUBool wgpuAdapterHasFeature(WGPUAdapter adapter, WGPUEnum feature);
WGPUBool wgpuAdapterGetLimits(WGPUAdapter adapter, WGPUSupportedLimits *limits);
void wgpuAdapterRequestDevice(WGPUAdapter adapter, const WGPUDeviceDescriptor *descriptor, WGPUAdapterRequestDeviceCallback callback, void *userdata);
void wgpuAdapterRelease(WGPUAdapter adapter);

WGPUBool wgpuDeviceGetLimits(WGPUDevice device, WGPUSupportedLimits *limits);
WGPUQueue wgpuDeviceGetQueue(WGPUDevice device);
WGPUBuffer wgpuDeviceCreateBuffer(WGPUDevice device, const WGPUBufferDescriptor *descriptor);
WGPUShaderModule wgpuDeviceCreateShaderModule(WGPUDevice device, const WGPUShaderModuleDescriptor *descriptor);
WGPUBindGroupLayout wgpuDeviceCreateBindGroupLayout(WGPUDevice device, const WGPUBindGroupLayoutDescriptor *descriptor);
WGPUPipelineLayout wgpuDeviceCreatePipelineLayout(WGPUDevice device, const WGPUPipelineLayoutDescriptor *descriptor);
WGPUComputePipeline wgpuDeviceCreateComputePipeline(WGPUDevice device, const WGPUComputePipelineDescriptor *descriptor);
WGPUBindGroup wgpuDeviceCreateBindGroup(WGPUDevice device, const WGPUBindGroupDescriptor *descriptor);
WGPUCommandEncoder wgpuDeviceCreateCommandEncoder(WGPUDevice device, const WGPUCommandEncoderDescriptor *descriptor);
WGPUQuerySet wgpuDeviceCreateQuerySet(WGPUDevice device, const WGPUQuerySetDescriptor *descriptor);
void wgpuQuerySetRelease(WGPUQuerySet querySet);
void wgpuCommandEncoderResolveQuerySet(WGPUCommandEncoder encoder, WGPUQuerySet querySet, uint32_t firstQuery, uint32_t queryCount, WGPUBuffer destination, uint64_t destinationOffset);
void wgpuDevicePushErrorScope(WGPUDevice device, WGPUEnum filter);
void wgpuDevicePopErrorScope(WGPUDevice device, WGPUErrorCallback callback, void *userdata);
WGPUBool wgpuDevicePoll(WGPUDevice device, WGPUBool wait, const WGPUWrappedSubmissionIndex *wrappedSubmissionIndex);
void wgpuDeviceRelease(WGPUDevice device);

void wgpuQueueWriteBuffer(WGPUQueue queue, WGPUBuffer buffer, uint64_t bufferOffset, const void *data, size_t size);
WGPUSubmissionIndex wgpuQueueSubmitForIndex(WGPUQueue queue, size_t commandCount, const WGPUCommandBuffer *commands);
void wgpuQueueOnSubmittedWorkDone(WGPUQueue queue, WGPUQueueOnSubmittedWorkDoneCallback callback, void *userdata);
void wgpuQueueRelease(WGPUQueue queue);

void wgpuBufferMapAsync(WGPUBuffer buffer, WGPUFlags mode, size_t offset, size_t size, WGPUBufferMapAsyncCallback callback, void *userdata);
const void *wgpuBufferGetConstMappedRange(WGPUBuffer buffer, size_t offset, size_t size);
void wgpuBufferUnmap(WGPUBuffer buffer);
void wgpuBufferDestroy(WGPUBuffer buffer);
void wgpuBufferRelease(WGPUBuffer buffer);

void wgpuShaderModuleRelease(WGPUShaderModule module);
void wgpuBindGroupLayoutRelease(WGPUBindGroupLayout layout);
void wgpuPipelineLayoutRelease(WGPUPipelineLayout layout);
void wgpuComputePipelineRelease(WGPUComputePipeline pipeline);
void wgpuBindGroupRelease(WGPUBindGroup group);

WGPUComputePassEncoder wgpuCommandEncoderBeginComputePass(WGPUCommandEncoder encoder, const WGPUComputePassDescriptor *descriptor);
void wgpuCommandEncoderCopyBufferToBuffer(WGPUCommandEncoder encoder, WGPUBuffer source, uint64_t sourceOffset, WGPUBuffer destination, uint64_t destinationOffset, uint64_t size);
void wgpuCommandEncoderClearBuffer(WGPUCommandEncoder encoder, WGPUBuffer buffer, uint64_t offset, uint64_t size);
WGPUCommandBuffer wgpuCommandEncoderFinish(WGPUCommandEncoder encoder, const WGPUCommandBufferDescriptor *descriptor);
void wgpuCommandEncoderRelease(WGPUCommandEncoder encoder);
void wgpuCommandBufferRelease(WGPUCommandBuffer buffer);

void wgpuComputePassEncoderSetPipeline(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline);
void wgpuComputePassEncoderSetBindGroup(WGPUComputePassEncoder pass, uint32_t groupIndex, WGPUBindGroup group, size_t dynamicOffsetCount, const uint32_t *dynamicOffsets);
void wgpuComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder pass, uint32_t x, uint32_t y, uint32_t z);
void wgpuComputePassEncoderEnd(WGPUComputePassEncoder pass);
void wgpuComputePassEncoderRelease(WGPUComputePassEncoder pass);

#endif
