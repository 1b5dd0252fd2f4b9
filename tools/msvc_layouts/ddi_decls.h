/*
 * ddi_decls.h - stand-alone C declarations of the WDDM kernel-mode DDI
 * structures modelled by wddmsim, used only to obtain compiler layout
 * ground truth (see tools/gen_msvc_layouts.py).
 *
 * Written for this project from the member lists (names, types, order and
 * version of introduction) of Microsoft's public DDI reference pages.  No
 * Windows header is included; the base types below follow the MSVC data
 * model (LLP64 on x64, ILP32 on x86).
 *
 * Compile with -DDXGKDDI_INTERFACE_VERSION=<value>.  For every structure
 * entry that exists at the selected version a macro DDI_HAS_<NAME> is
 * defined, so that users can test for presence.
 */
#ifndef WDDMSIM_DDI_DECLS_H
#define WDDMSIM_DDI_DECLS_H

/* ---- interface versions -------------------------------------------- */
#define DXGKDDI_INTERFACE_VERSION_VISTA      0x1052
#define DXGKDDI_INTERFACE_VERSION_VISTA_SP1  0x1053
#define DXGKDDI_INTERFACE_VERSION_WIN7       0x2005
#define DXGKDDI_INTERFACE_VERSION_WIN8       0x300E
#define DXGKDDI_INTERFACE_VERSION_WDDM1_3    0x4002
#define DXGKDDI_INTERFACE_VERSION_WDDM2_0    0x5023
#define DXGKDDI_INTERFACE_VERSION_WDDM2_1    0x6003
#define DXGKDDI_INTERFACE_VERSION_WDDM2_2    0x700A
#define DXGKDDI_INTERFACE_VERSION_WDDM2_3    0x8001
#define DXGKDDI_INTERFACE_VERSION_WDDM2_4    0x9006
#define DXGKDDI_INTERFACE_VERSION_WDDM2_5    0xA00B
#define DXGKDDI_INTERFACE_VERSION_WDDM2_6    0xB004
#define DXGKDDI_INTERFACE_VERSION_WDDM2_7    0xC004
#define DXGKDDI_INTERFACE_VERSION_WDDM2_8    0xD001
#define DXGKDDI_INTERFACE_VERSION_WDDM2_9    0xE003
#define DXGKDDI_INTERFACE_VERSION_WDDM3_0    0xF003
#define DXGKDDI_INTERFACE_VERSION_WDDM3_1    0x10004
#define DXGKDDI_INTERFACE_VERSION_WDDM3_2    0x11007

#ifndef DXGKDDI_INTERFACE_VERSION
#define DXGKDDI_INTERFACE_VERSION DXGKDDI_INTERFACE_VERSION_WDDM3_2
#endif

#define DDI_AT_LEAST(v) (DXGKDDI_INTERFACE_VERSION >= DXGKDDI_INTERFACE_VERSION_##v)

/* ---- base types (MSVC data model) ---------------------------------- */
typedef unsigned int        UINT;
typedef unsigned int        UINT32;
typedef int                 INT;
typedef unsigned long       ULONG;      /* 4 bytes under MSVC */
typedef long                LONG;       /* 4 bytes under MSVC */
typedef long long           LONGLONG;
typedef unsigned long long  ULONGLONG;
typedef unsigned long long  UINT64;
typedef unsigned short      WORD;
typedef unsigned long       DWORD;      /* 4 bytes under MSVC */
typedef int                 BOOL;
typedef unsigned char       BOOLEAN;
typedef unsigned char       BYTE;
typedef unsigned short      WCHAR;
typedef void                VOID;
typedef void               *PVOID;
typedef void               *HANDLE;
typedef LONG                NTSTATUS;
typedef UINT                D3DKMT_HANDLE;
typedef ULONGLONG           D3DGPU_VIRTUAL_ADDRESS;
typedef UINT                D3DDDI_VIDEO_PRESENT_SOURCE_ID;
typedef UINT                D3DDDI_VIDEO_PRESENT_TARGET_ID;
#ifdef _WIN64
typedef unsigned long long  SIZE_T;     /* ULONG_PTR: 8 bytes on x64 */
#else
typedef unsigned long       SIZE_T;     /* ULONG_PTR: 4 bytes on x86 */
#endif

#define D3DDDI_MAX_BROADCAST_CONTEXT 64

typedef union _LARGE_INTEGER {
    struct {
        ULONG LowPart;
        LONG  HighPart;
    };
    struct {
        ULONG LowPart;
        LONG  HighPart;
    } u;
    LONGLONG QuadPart;
} LARGE_INTEGER;

typedef LARGE_INTEGER PHYSICAL_ADDRESS;

#define DDI_HAS_PHYSICAL_ADDRESS 1
#define DDI_HAS_D3DGPU_VIRTUAL_ADDRESS 1
#define DDI_HAS_D3DDDI_VIDEO_PRESENT_SOURCE_ID 1
#define DDI_HAS_D3DDDI_VIDEO_PRESENT_TARGET_ID 1
#define DDI_HAS_NTSTATUS 1
#define DDI_HAS_D3DKMT_HANDLE 1

/* ---- D3DDDI_FLIPINTERVAL_TYPE (d3dukmdt) --------------------------- */
typedef enum D3DDDI_FLIPINTERVAL_TYPE {
    D3DDDI_FLIPINTERVAL_IMMEDIATE               = 0,
    D3DDDI_FLIPINTERVAL_ONE                     = 1,
    D3DDDI_FLIPINTERVAL_TWO                     = 2,
    D3DDDI_FLIPINTERVAL_THREE                   = 3,
    D3DDDI_FLIPINTERVAL_FOUR                    = 4,
    D3DDDI_FLIPINTERVAL_IMMEDIATE_ALLOW_TEARING = 5
} D3DDDI_FLIPINTERVAL_TYPE;
#define DDI_HAS_D3DDDI_FLIPINTERVAL_TYPE 1

/* ---- submission flags ---------------------------------------------- */
typedef struct _DXGK_SUBMITCOMMANDFLAGS {
    union {
        struct {
            UINT Paging             : 1;
            UINT Present            : 1;
            UINT RedirectedPresent  : 1;
            UINT NullRendering      : 1;
            UINT Flip               : 1;
            UINT FlipWithNoWait     : 1;
#if DDI_AT_LEAST(WIN8)
            UINT ContextSwitch      : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT Resubmission       : 1;
#if DDI_AT_LEAST(WDDM2_2)
            UINT VirtualMachineData : 1;
            UINT Reserved           : 23;
#else
            UINT Reserved           : 24;
#endif
#else
            UINT Reserved           : 25;
#endif
#else
            UINT Reserved           : 26;
#endif
        };
        UINT Value;
    };
} DXGK_SUBMITCOMMANDFLAGS;
#define DDI_HAS_DXGK_SUBMITCOMMANDFLAGS 1

typedef struct _DXGKARG_SUBMITCOMMAND {
    union {
        HANDLE hDevice;
        HANDLE hContext;
    };
    UINT                           DmaBufferSegmentId;
    PHYSICAL_ADDRESS               DmaBufferPhysicalAddress;
    UINT                           DmaBufferSize;
    UINT                           DmaBufferSubmissionStartOffset;
    UINT                           DmaBufferSubmissionEndOffset;
    VOID                          *pDmaBufferPrivateData;
    UINT                           DmaBufferPrivateDataSize;
    UINT                           DmaBufferPrivateDataSubmissionStartOffset;
    UINT                           DmaBufferPrivateDataSubmissionEndOffset;
    UINT                           SubmissionFenceId;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    D3DDDI_FLIPINTERVAL_TYPE       FlipInterval;
    DXGK_SUBMITCOMMANDFLAGS        Flags;
    UINT                           EngineOrdinal;
#if DDI_AT_LEAST(WIN7)
    D3DGPU_VIRTUAL_ADDRESS         DmaBufferVirtualAddress;
#endif
#if DDI_AT_LEAST(WIN8)
    UINT                           NodeOrdinal;
#endif
} DXGKARG_SUBMITCOMMAND;
#define DDI_HAS_DXGKARG_SUBMITCOMMAND 1

#if DDI_AT_LEAST(WDDM2_0)
typedef struct _DXGKARG_SUBMITCOMMANDVIRTUAL {
    HANDLE                         hContext;
    D3DGPU_VIRTUAL_ADDRESS         DmaBufferVirtualAddress;
    UINT                           DmaBufferSize;
    VOID                          *pDmaBufferPrivateData;
    UINT                           DmaBufferPrivateDataSize;
    UINT                           DmaBufferUmdPrivateDataSize;
    UINT                           SubmissionFenceId;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    D3DDDI_FLIPINTERVAL_TYPE       FlipInterval;
    DXGK_SUBMITCOMMANDFLAGS        Flags;
    UINT                           EngineOrdinal;
    UINT                           NodeOrdinal;
} DXGKARG_SUBMITCOMMANDVIRTUAL;
#define DDI_HAS_DXGKARG_SUBMITCOMMANDVIRTUAL 1
#endif

#if DDI_AT_LEAST(WDDM2_2)
typedef struct _DXGKARG_SUBMITCOMMANDTOHWQUEUE {
    HANDLE                  hHwQueue;
    UINT64                  HwQueueProgressFenceId;
    D3DGPU_VIRTUAL_ADDRESS  DmaBufferVirtualAddress;
    UINT                    DmaBufferSize;
    UINT                    DmaBufferPrivateDataSize;
    VOID                   *pDmaBufferPrivateData;
#if DDI_AT_LEAST(WDDM2_4)
    DXGK_SUBMITCOMMANDFLAGS Flags;
    D3DGPU_VIRTUAL_ADDRESS  HwQueueProgressFenceGpuVa;
    VOID                   *HwQueueProgressFenceCpuVa;
#else
    UINT                    DmaBufferUmdPrivateDataSize;
#endif
} DXGKARG_SUBMITCOMMANDTOHWQUEUE;
#define DDI_HAS_DXGKARG_SUBMITCOMMANDTOHWQUEUE 1
#endif

/* ---- interrupt notification ---------------------------------------- */
typedef enum _DXGK_INTERRUPT_TYPE {
    DXGK_INTERRUPT_DMA_COMPLETED                        = 1,
    DXGK_INTERRUPT_DMA_PREEMPTED                        = 2,
    DXGK_INTERRUPT_CRTC_VSYNC                           = 3,
    DXGK_INTERRUPT_DMA_FAULTED                          = 4,
#if DDI_AT_LEAST(WIN8)
    DXGK_INTERRUPT_DISPLAYONLY_VSYNC                    = 5,
    DXGK_INTERRUPT_DISPLAYONLY_PRESENT_PROGRESS         = 6,
    DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY   = 7,
#endif
#if DDI_AT_LEAST(WDDM1_3)
    DXGK_INTERRUPT_MICACAST_CHUNK_PROCESSING_COMPLETE   = 8,
#endif
#if DDI_AT_LEAST(WDDM2_0)
    DXGK_INTERRUPT_DMA_PAGE_FAULTED                     = 9,
#endif
#if DDI_AT_LEAST(WDDM2_1)
    DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2  = 10,
#endif
#if DDI_AT_LEAST(WDDM2_2)
    DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED             = 11,
    DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED                 = 12,
    DXGK_INTERRUPT_HWCONTEXTLIST_SWITCH_COMPLETED       = 13,
    DXGK_INTERRUPT_PERIODIC_MONITORED_FENCE_SIGNALED    = 14,
#endif
#if DDI_AT_LEAST(WDDM2_4)
    DXGK_INTERRUPT_SCHEDULING_LOG_INTERRUPT             = 15,
    DXGK_INTERRUPT_GPU_ENGINE_TIMEOUT                   = 16,
    DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED            = 17,
#endif
#if DDI_AT_LEAST(WDDM2_9)
    DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3  = 18,
#endif
#if DDI_AT_LEAST(WDDM3_1)
    DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED                = 19,
    DXGK_INTERRUPT_GPU_ENGINE_STATE_CHANGE              = 20,
#endif
} DXGK_INTERRUPT_TYPE;
#define DDI_HAS_DXGK_INTERRUPT_TYPE 1

typedef struct _DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS {
    union {
        struct {
            UINT ValidPhysicalAdapterMask      : 1;
#if DDI_AT_LEAST(WDDM2_2)
            UINT HsyncFlipCompletion           : 1;
#if DDI_AT_LEAST(WDDM3_1)
            UINT EvaluateLegacyMonitoredFences : 1;
            UINT Reserved                      : 29;
#else
            UINT Reserved                      : 30;
#endif
#else
            UINT Reserved                      : 31;
#endif
        };
        UINT Value;
    };
} DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS;
#define DDI_HAS_DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS 1

/* Multiplane-overlay vsync descriptors: referenced through pointers here,
 * defined after RECT below. */
typedef struct _DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO  DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO;
typedef struct _DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2 DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2;
typedef struct _DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3 DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3;

#if DDI_AT_LEAST(WIN8)
typedef enum _DXGK_PRESENT_DISPLAY_ONLY_PROGRESS_ID {
    DXGK_PRESENT_DISPLAYONLY_PROGRESS_ID_COMPLETE = 0,
    DXGK_PRESENT_DISPLAYONLY_PROGRESS_ID_FAILED   = 1
} DXGK_PRESENT_DISPLAY_ONLY_PROGRESS_ID;

typedef struct _DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID        VidPnSourceId;
    DXGK_PRESENT_DISPLAY_ONLY_PROGRESS_ID ProgressId;
} DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS;
#define DDI_HAS_DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS 1
#endif

#if DDI_AT_LEAST(WDDM1_3)
typedef enum _DXGK_MIRACAST_CHUNK_TYPE {
    DXGK_MIRACAST_CHUNK_TYPE_UNKNOWN                 = 0,
    DXGK_MIRACAST_CHUNK_TYPE_COLOR_CONVERT_COMPLETE  = 1,
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_COMPLETE         = 2,
    DXGK_MIRACAST_CHUNK_TYPE_FRAME_START             = 3,
    DXGK_MIRACAST_CHUNK_TYPE_FRAME_DROPPED           = 4,
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_DRIVER_DEFINED_1 = (-2147483647 - 1),
    DXGK_MIRACAST_CHUNK_TYPE_ENCODE_DRIVER_DEFINED_2 = (-2147483647)
} DXGK_MIRACAST_CHUNK_TYPE;

typedef union _DXGK_MIRACAST_CHUNK_ID {
    struct {
        UINT64 FrameNumber : 40;
        UINT64 PartNumber  : 24;
    };
    UINT64 Value;
} DXGK_MIRACAST_CHUNK_ID;
#define DDI_HAS_DXGK_MIRACAST_CHUNK_ID 1

typedef struct _DXGK_MIRACAST_CHUNK_INFO {
    DXGK_MIRACAST_CHUNK_TYPE ChunkType;
    DXGK_MIRACAST_CHUNK_ID   ChunkId;
    UINT                     ProcessingTime;
    UINT                     EncodeRate;
} DXGK_MIRACAST_CHUNK_INFO;
#define DDI_HAS_DXGK_MIRACAST_CHUNK_INFO 1
#endif

#if DDI_AT_LEAST(WDDM2_0)
typedef enum _DXGK_RENDER_PIPELINE_STAGE {
    DXGK_RENDER_PIPELINE_STAGE_UNKNOWN         = 0,
    DXGK_RENDER_PIPELINE_STAGE_INPUT_ASSEMBLER = 1,
    DXGK_RENDER_PIPELINE_STAGE_VERTEX_SHADER   = 2,
    DXGK_RENDER_PIPELINE_STAGE_GEOMETRY_SHADER = 3,
    DXGK_RENDER_PIPELINE_STAGE_STREAM_OUTPUT   = 4,
    DXGK_RENDER_PIPELINE_STAGE_RASTERIZER      = 5,
    DXGK_RENDER_PIPELINE_STAGE_PIXEL_SHADER    = 6,
    DXGK_RENDER_PIPELINE_STAGE_OUTPUT_MERGER   = 7
} DXGK_RENDER_PIPELINE_STAGE;
#define DDI_HAS_DXGK_RENDER_PIPELINE_STAGE 1

typedef enum _DXGK_PAGE_FAULT_FLAGS {
    DXGK_PAGE_FAULT_WRITE                  = 0x1,
    DXGK_PAGE_FAULT_FENCE_INVALID          = 0x2,
    DXGK_PAGE_FAULT_ADAPTER_RESET_REQUIRED = 0x4,
    DXGK_PAGE_FAULT_ENGINE_RESET_REQUIRED  = 0x8,
    DXGK_PAGE_FAULT_FATAL_HARDWARE_ERROR   = 0x10,
    DXGK_PAGE_FAULT_IOMMU                  = 0x20,
    DXGK_PAGE_FAULT_HW_CONTEXT_VALID       = 0x40,
    DXGK_PAGE_FAULT_PROCESS_HANDLE_VALID   = 0x80,
#if DXGKDDI_INTERFACE_VERSION > DXGKDDI_INTERFACE_VERSION_WDDM3_2
    DXGK_PAGE_FAULT_AND_STALL              = 0x100,
    DXGK_PAGE_FAULT_FIRST_INVALID          = 0x200,
#endif
} DXGK_PAGE_FAULT_FLAGS;
#define DDI_HAS_DXGK_PAGE_FAULT_FLAGS 1

typedef enum _DXGK_GENERAL_ERROR_CODE {
    DXGK_GENERAL_ERROR_PAGE_FAULT          = 0,
    DXGK_GENERAL_ERROR_INVALID_INSTRUCTION = 1
} DXGK_GENERAL_ERROR_CODE;
#define DDI_HAS_DXGK_GENERAL_ERROR_CODE 1

typedef struct _DXGK_FAULT_ERROR_CODE {
    union {
        struct {
            UINT                    IsDeviceSpecificCode : 1;
            DXGK_GENERAL_ERROR_CODE GeneralErrorCode     : 31;
        };
        struct {
            UINT IsDeviceSpecificCodeReservedBit : 1;
            UINT DeviceSpecificCode              : 31;
        };
    };
} DXGK_FAULT_ERROR_CODE;
#define DDI_HAS_DXGK_FAULT_ERROR_CODE 1
#endif

#if DDI_AT_LEAST(WDDM3_1)
typedef enum _DXGK_ENGINE_STATE {
    DXGK_ENGINE_STATE_ACTIVE           = 0,
    DXGK_ENGINE_STATE_TRANSITION_TO_F1 = 1,
    DXGK_ENGINE_STATE_HUNG             = 2
} DXGK_ENGINE_STATE;
#define DDI_HAS_DXGK_ENGINE_STATE 1
#endif

typedef struct _DXGKARGCB_NOTIFY_INTERRUPT_DATA {
    DXGK_INTERRUPT_TYPE InterruptType;
    union {
        struct {
            UINT SubmissionFenceId;
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } DmaCompleted;
        struct {
            UINT PreemptionFenceId;
            UINT LastCompletedFenceId;
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } DmaPreempted;
        struct {
            UINT     FaultedFenceId;
            NTSTATUS Status;
            UINT     NodeOrdinal;
            UINT     EngineOrdinal;
        } DmaFaulted;
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;
            PHYSICAL_ADDRESS               PhysicalAddress;
            UINT                           PhysicalAdapterMask;
        } CrtcVsync;
#if DDI_AT_LEAST(WIN8)
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;
        } DisplayOnlyVsync;
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID      VidPnTargetId;
            UINT                                PhysicalAdapterMask;
            UINT                                MultiPlaneOverlayVsyncInfoCount;
            DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO *pMultiPlaneOverlayVsyncInfo;
        } CrtcVsyncWithMultiPlaneOverlay;
        DXGKARGCB_PRESENT_DISPLAYONLY_PROGRESS DisplayOnlyPresentProgress;
#endif
#if DDI_AT_LEAST(WDDM1_3)
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;
            DXGK_MIRACAST_CHUNK_INFO       ChunkInfo;
            PVOID                          pPrivateDriverData;
            UINT                           PrivateDataDriverSize;
            NTSTATUS                       Status;
        } MiracastEncodeChunkCompleted;
#endif
#if DDI_AT_LEAST(WDDM2_0)
        struct {
            UINT                       FaultedFenceId;
            UINT64                     FaultedPrimitiveAPISequenceNumber;
            DXGK_RENDER_PIPELINE_STAGE FaultedPipelineStage;
            UINT                       FaultedBindTableEntry;
            DXGK_PAGE_FAULT_FLAGS      PageFaultFlags;
            D3DGPU_VIRTUAL_ADDRESS     FaultedVirtualAddress;
            UINT                       NodeOrdinal;
            UINT                       EngineOrdinal;
            UINT                       PageTableLevel;
            DXGK_FAULT_ERROR_CODE      FaultErrorCode;
            HANDLE                     FaultedProcessHandle;
        } DmaPageFaulted;
#endif
#if DDI_AT_LEAST(WDDM2_1)
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID       VidPnTargetId;
            UINT                                 PhysicalAdapterMask;
            UINT                                 MultiPlaneOverlayVsyncInfoCount;
            DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2 *pMultiPlaneOverlayVsyncInfo;
            ULONGLONG                            GpuFrequency;
            ULONGLONG                            GpuClockCounter;
        } CrtcVsyncWithMultiPlaneOverlay2;
#endif
#if DDI_AT_LEAST(WDDM2_2)
        struct {
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } MonitoredFenceSignaled;
        struct {
            UINT   NodeOrdinal;
            UINT   EngineOrdinal;
            UINT64 ContextSwitchFence;
        } HwContextListSwitchCompleted;
        struct {
            UINT64                     FaultedFenceId;
            D3DGPU_VIRTUAL_ADDRESS     FaultedVirtualAddress;
            UINT64                     FaultedPrimitiveAPISequenceNumber;
            union {
                HANDLE FaultedHwQueue;
                HANDLE FaultedHwContext;
                HANDLE FaultedProcessHandle;
            };
            UINT                       NodeOrdinal;
            UINT                       EngineOrdinal;
            DXGK_RENDER_PIPELINE_STAGE FaultedPipelineStage;
            UINT                       FaultedBindTableEntry;
            DXGK_PAGE_FAULT_FLAGS      PageFaultFlags;
            UINT                       PageTableLevel;
            DXGK_FAULT_ERROR_CODE      FaultErrorCode;
        } HwQueuePageFaulted;
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID VidPnTargetId;
            UINT                           NotificationID;
        } PeriodicMonitoredFenceSignaled;
#endif
#if DDI_AT_LEAST(WDDM2_4)
        struct {
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } SchedulingLogInterrupt;
        struct {
            UINT NodeOrdinal;
            UINT EngineOrdinal;
        } GpuEngineTimeout;
        struct {
            HANDLE hContext;
            UINT64 ContextSuspendFence;
        } SuspendContextCompleted;
#endif
#if DDI_AT_LEAST(WDDM2_9)
        struct {
            D3DDDI_VIDEO_PRESENT_TARGET_ID       VidPnTargetId;
            UINT                                 PhysicalAdapterMask;
            UINT                                 MultiPlaneOverlayVsyncInfoCount;
            DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3 *pMultiPlaneOverlayVsyncInfo;
            ULONGLONG                            GpuFrequency;
            ULONGLONG                            GpuClockCounter;
        } CrtcVsyncWithMultiPlaneOverlay3;
#endif
#if DDI_AT_LEAST(WDDM3_1)
        struct {
            UINT    NodeOrdinal;
            UINT    EngineOrdinal;
            UINT    SignaledNativeFenceCount;
            HANDLE *pSignaledNativeFenceArray;
            HANDLE  hHWQueue;
        } NativeFenceSignaled;
        struct {
            UINT              NodeOrdinal;
            UINT              EngineOrdinal;
            DXGK_ENGINE_STATE NewState;
        } EngineStateChange;
#endif
        struct {
            UINT Reserved[16];
        } Reserved;
    };
    DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS Flags;
} DXGKARGCB_NOTIFY_INTERRUPT_DATA;
#define DDI_HAS_DXGKARGCB_NOTIFY_INTERRUPT_DATA 1

/* ---- preemption ------------------------------------------------------ */
typedef struct _DXGK_PREEMPTCOMMANDFLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} DXGK_PREEMPTCOMMANDFLAGS;
#define DDI_HAS_DXGK_PREEMPTCOMMANDFLAGS 1

typedef struct _DXGKARG_PREEMPTCOMMAND {
    UINT                     PreemptionFenceId;
    UINT                     NodeOrdinal;
    UINT                     EngineOrdinal;
    DXGK_PREEMPTCOMMANDFLAGS Flags;
} DXGKARG_PREEMPTCOMMAND;
#define DDI_HAS_DXGKARG_PREEMPTCOMMAND 1

/* ---- patching and lists --------------------------------------------- */
typedef struct _DXGK_PATCHFLAGS {
    union {
        struct {
            UINT Paging            : 1;
            UINT Present           : 1;
            UINT RedirectedPresent : 1;
            UINT NullRendering     : 1;
            UINT Reserved          : 28;
        };
        UINT Value;
    };
} DXGK_PATCHFLAGS;
#define DDI_HAS_DXGK_PATCHFLAGS 1

typedef struct _DXGK_ALLOCATIONLIST {
    HANDLE hDeviceSpecificAllocation;
    struct {
        UINT WriteOperation : 1;
        UINT SegmentId      : 5;
        UINT Reserved       : 26;
    };
#if DDI_AT_LEAST(WDDM2_0)
    union {
        PHYSICAL_ADDRESS       PhysicalAddress;
        D3DGPU_VIRTUAL_ADDRESS VirtualAddress;
    };
#else
    PHYSICAL_ADDRESS PhysicalAddress;
#endif
} DXGK_ALLOCATIONLIST;
#define DDI_HAS_DXGK_ALLOCATIONLIST 1

typedef struct _D3DDDI_PATCHLOCATIONLIST {
    UINT AllocationIndex;
    union {
        struct {
            UINT SlotId   : 24;
            UINT Reserved : 8;
        };
        UINT Value;
    };
    UINT DriverId;
    UINT AllocationOffset;
    UINT PatchOffset;
    UINT SplitOffset;
} D3DDDI_PATCHLOCATIONLIST;
#define DDI_HAS_D3DDDI_PATCHLOCATIONLIST 1

typedef struct _DXGKARG_PATCH {
    union {
        HANDLE hDevice;
        HANDLE hContext;
    };
    UINT                            DmaBufferSegmentId;
    PHYSICAL_ADDRESS                DmaBufferPhysicalAddress;
    VOID                           *pDmaBuffer;
    UINT                            DmaBufferSize;
    UINT                            DmaBufferSubmissionStartOffset;
    UINT                            DmaBufferSubmissionEndOffset;
    VOID                           *pDmaBufferPrivateData;
    UINT                            DmaBufferPrivateDataSize;
    UINT                            DmaBufferPrivateDataSubmissionStartOffset;
    UINT                            DmaBufferPrivateDataSubmissionEndOffset;
    const DXGK_ALLOCATIONLIST      *pAllocationList;
    UINT                            AllocationListSize;
    const D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;
    UINT                            PatchLocationListSize;
    UINT                            PatchLocationListSubmissionStart;
    UINT                            PatchLocationListSubmissionLength;
    UINT                            SubmissionFenceId;
    DXGK_PATCHFLAGS                 Flags;
    UINT                            EngineOrdinal;
} DXGKARG_PATCH;
#define DDI_HAS_DXGKARG_PATCH 1

/* ---- contexts --------------------------------------------------------- */
#if DDI_AT_LEAST(WDDM2_0)
typedef struct _DXGK_CONTEXTINFO_CAPS {
    union {
        struct {
            UINT NoPatchingRequired     : 1;
            UINT DriverManagesResidency : 1;
            UINT UseIoMmu               : 1;
            UINT Reserved               : 29;
        };
        UINT Value;
    };
} DXGK_CONTEXTINFO_CAPS;
#define DDI_HAS_DXGK_CONTEXTINFO_CAPS 1
#endif

typedef struct _DXGK_CONTEXTINFO {
    UINT DmaBufferSize;
    UINT DmaBufferSegmentSet;
    UINT DmaBufferPrivateDataSize;
    UINT AllocationListSize;
    UINT PatchLocationListSize;
#if DDI_AT_LEAST(WIN7)
    UINT Reserved;
#endif
#if DDI_AT_LEAST(WDDM2_0)
    DXGK_CONTEXTINFO_CAPS Caps;
    ULONG                 PagingCompanionNodeId;
#endif
} DXGK_CONTEXTINFO;
#define DDI_HAS_DXGK_CONTEXTINFO 1

/* ---- paging-buffer operation codes ------------------------------------ */
typedef enum _DXGK_BUILDPAGINGBUFFER_OPERATION {
    DXGK_OPERATION_TRANSFER                  = 0,
    DXGK_OPERATION_FILL                      = 1,
    DXGK_OPERATION_DISCARD_CONTENT           = 2,
    DXGK_OPERATION_READ_PHYSICAL             = 3,
    DXGK_OPERATION_WRITE_PHYSICAL            = 4,
    DXGK_OPERATION_MAP_APERTURE_SEGMENT      = 5,
    DXGK_OPERATION_UNMAP_APERTURE_SEGMENT    = 6,
#if DDI_AT_LEAST(WIN7)
    DXGK_OPERATION_SPECIAL_LOCK_TRANSFER     = 7,
#endif
#if DDI_AT_LEAST(WIN8)
    DXGK_OPERATION_VIRTUAL_TRANSFER          = 8,
    DXGK_OPERATION_VIRTUAL_FILL              = 9,
    DXGK_OPERATION_INIT_CONTEXT_RESOURCE     = 10,
#endif
#if DDI_AT_LEAST(WDDM2_0)
    DXGK_OPERATION_UPDATE_PAGE_TABLE         = 11,
    DXGK_OPERATION_FLUSH_TLB                 = 12,
    DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION = 13,
    DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES   = 14,
    DXGK_OPERATION_NOTIFY_RESIDENCY          = 15,
#endif
#if DDI_AT_LEAST(WDDM2_2)
    DXGK_OPERATION_SIGNAL_MONITORED_FENCE    = 16,
#endif
#if DDI_AT_LEAST(WDDM3_0)
    DXGK_OPERATION_MAP_APERTURE_SEGMENT2     = 17,
#endif
#if DDI_AT_LEAST(WDDM2_9)
    DXGK_OPERATION_NOTIFY_FENCE_RESIDENCY    = 18,
#endif
#if DDI_AT_LEAST(WDDM3_2)
    DXGK_OPERATION_MAP_MMU                   = 19,
    DXGK_OPERATION_UNMAP_MMU                 = 20,
    DXGK_OPERATION_NOTIFY_RESIDENCY2         = 21,
    DXGK_OPERATION_RESERVED22                = 22,
#endif
#if DXGKDDI_INTERFACE_VERSION > DXGKDDI_INTERFACE_VERSION_WDDM3_2
    DXGK_OPERATION_TRANSFER2                 = 23,
    DXGK_OPERATION_FILL2                     = 24,
    DXGK_OPERATION_DISCARD_CONTENT2          = 25,
#endif
} DXGK_BUILDPAGINGBUFFER_OPERATION;
#define DDI_HAS_DXGK_BUILDPAGINGBUFFER_OPERATION 1

/* ---- GpuMmu (WDDM 2.0): page-table entries and page-table operations --- */
/* DXGK_PTE is modelled from WDDM 2.0 only: the 8-byte, system-reserved
 * structure of that name in pre-WDDM 2.0 headers is a different layout.
 * BlockAccessMode (newest doc revision) is newer than WDDM 3.2.  The
 * explicit D3DGPU_PHYSICAL_ADDRESS.Padding of current headers occupies the
 * bytes older headers leave as alignment padding.  See DECISIONS.md. */
#if DDI_AT_LEAST(WDDM2_0)
typedef enum _DXGK_PTE_PAGE_SIZE {
    DXGK_PTE_PAGE_TABLE_PAGE_4KB  = 0,
    DXGK_PTE_PAGE_TABLE_PAGE_64KB = 1
} DXGK_PTE_PAGE_SIZE;
#define DDI_HAS_DXGK_PTE_PAGE_SIZE 1

typedef struct _DXGK_PTE {
    union {
        struct {
            ULONGLONG Valid                : 1;
            ULONGLONG Zero                 : 1;
            ULONGLONG CacheCoherent        : 1;
            ULONGLONG ReadOnly             : 1;
            ULONGLONG NoExecute            : 1;
            ULONGLONG Segment              : 5;
            ULONGLONG LargePage            : 1;
            ULONGLONG PhysicalAdapterIndex : 6;
            ULONGLONG PageTablePageSize    : 2;
            ULONGLONG SystemReserved0      : 1;
            ULONGLONG Reserved             : 44;
        };
        ULONGLONG Flags;
    };
    union {
        ULONGLONG PageAddress;
        ULONGLONG PageTableAddress;
    };
} DXGK_PTE;
#define DDI_HAS_DXGK_PTE 1

typedef struct _D3DGPU_PHYSICAL_ADDRESS {
    UINT   SegmentId;
    UINT   Padding;
    UINT64 SegmentOffset;
} D3DGPU_PHYSICAL_ADDRESS;
#define DDI_HAS_D3DGPU_PHYSICAL_ADDRESS 1

typedef enum _DXGK_PAGETABLEUPDATEMODE {
    DXGK_PAGETABLEUPDATE_CPU_VIRTUAL  = 0,
    DXGK_PAGETABLEUPDATE_GPU_VIRTUAL  = 1,
    DXGK_PAGETABLEUPDATE_GPU_PHYSICAL = 2
} DXGK_PAGETABLEUPDATEMODE;
#define DDI_HAS_DXGK_PAGETABLEUPDATEMODE 1

typedef struct _DXGK_PAGETABLEUPDATEADDRESS {
    union {
        PVOID                   CpuVirtual;
        D3DGPU_PHYSICAL_ADDRESS GpuPhysical;
        D3DGPU_VIRTUAL_ADDRESS  GpuVirtual;
    };
} DXGK_PAGETABLEUPDATEADDRESS;
#define DDI_HAS_DXGK_PAGETABLEUPDATEADDRESS 1

/* A plain bitfield struct: no union, no Value member. */
typedef struct _DXGK_UPDATEPAGETABLEFLAGS {
    UINT Repeat         : 1;
    UINT InitialUpdate  : 1;
    UINT NotifyEviction : 1;
    UINT Use64KBPages   : 1;
#if DDI_AT_LEAST(WDDM3_1)
    UINT NativeFence    : 1;
    UINT Reserved       : 27;
#else
    UINT Reserved       : 28;
#endif
} DXGK_UPDATEPAGETABLEFLAGS;
#define DDI_HAS_DXGK_UPDATEPAGETABLEFLAGS 1

typedef struct _DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE {
    UINT                        PageTableLevel;
    HANDLE                      hAllocation;
    DXGK_PAGETABLEUPDATEADDRESS PageTableAddress;
    DXGK_PTE                   *pPageTableEntries;
    UINT                        StartIndex;
    UINT                        NumPageTableEntries;
    UINT                        Reserved0;
    DXGK_UPDATEPAGETABLEFLAGS   Flags;
    UINT64                      DriverProtection;
    UINT64                      AllocationOffsetInBytes;
    HANDLE                      hProcess;
    DXGK_PAGETABLEUPDATEMODE    UpdateMode;
    DXGK_PTE                   *pPageTableEntries64KB;
    D3DGPU_VIRTUAL_ADDRESS      FirstPteVirtualAddress;
} DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE;
#define DDI_HAS_DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE 1

typedef struct _DXGK_BUILDPAGINGBUFFER_FLUSHTLB {
    D3DGPU_PHYSICAL_ADDRESS RootPageTableAddress;
    HANDLE                  hProcess;
    D3DGPU_VIRTUAL_ADDRESS  StartVirtualAddress;
    D3DGPU_VIRTUAL_ADDRESS  EndVirtualAddress;
} DXGK_BUILDPAGINGBUFFER_FLUSHTLB;
#define DDI_HAS_DXGK_BUILDPAGINGBUFFER_FLUSHTLB 1

/* PerPtePageSize and OpportunisticSysMem64KBPageSupported (current doc
 * only) are newer than WDDM 3.2 and not modelled. */
typedef struct _DXGK_GPUMMUCAPS {
    union {
        struct {
            UINT ReadOnlyMemorySupported                : 1;
            UINT NoExecuteMemorySupported               : 1;
            UINT ZeroInPteSupported                     : 1;
            UINT ExplicitPageTableInvalidation          : 1;
            UINT CacheCoherentMemorySupported           : 1;
            UINT PageTableUpdateRequireAddressSpaceIdle : 1;
            UINT LargePageSupported                     : 1;
            UINT DualPteSupported                       : 1;
#if DDI_AT_LEAST(WDDM2_1)
            UINT AllowNonAlignedLargePageAddress        : 1;
            UINT SysMem64KBPageSupported                : 1;
#if DDI_AT_LEAST(WDDM2_6)
            UINT InvalidTlbEntriesNotCached             : 1;
#if DDI_AT_LEAST(WDDM2_9)
            UINT SysMemLargePageSupported               : 1;
#if DDI_AT_LEAST(WDDM3_1)
            UINT CachedPageTables                       : 1;
            UINT Reserved                               : 19;
#else
            UINT Reserved                               : 20;
#endif
#else
            UINT Reserved                               : 21;
#endif
#else
            UINT Reserved                               : 22;
#endif
#else
            UINT Reserved                               : 24;
#endif
        };
        UINT Value;
    };
    DXGK_PAGETABLEUPDATEMODE PageTableUpdateMode;
    UINT                     VirtualAddressBitCount;
    UINT                     LeafPageTableSizeFor64KPagesInBytes;
    UINT                     PageTableLevelCount;
    struct {
        UINT SourcePageTableVaInTransfer : 1;
        UINT Reserved                    : 31;
    } LegacyBehaviors;
} DXGK_GPUMMUCAPS;
#define DDI_HAS_DXGK_GPUMMUCAPS 1

typedef struct _DXGK_PAGE_TABLE_LEVEL_DESC {
    UINT PageTableIndexBitCount;
    UINT PageTableSegmentId;
    UINT PagingProcessPageTableSegmentId;
    UINT PageTableSizeInBytes;
    UINT PageTableAlignmentInBytes;
} DXGK_PAGE_TABLE_LEVEL_DESC;
#define DDI_HAS_DXGK_PAGE_TABLE_LEVEL_DESC 1

typedef struct _DXGKARG_SETROOTPAGETABLE {
    HANDLE                  hContext;
    D3DGPU_PHYSICAL_ADDRESS Address;
    UINT                    NumEntries;
} DXGKARG_SETROOTPAGETABLE;
#define DDI_HAS_DXGKARG_SETROOTPAGETABLE 1

typedef struct _DXGKARG_GETROOTPAGETABLESIZE {
    UINT NumberOfPte;
    UINT PhysicalAdapterIndex;
} DXGKARG_GETROOTPAGETABLESIZE;
#define DDI_HAS_DXGKARG_GETROOTPAGETABLESIZE 1

typedef struct _DXGK_CREATEPROCESSFLAGS {
    union {
        struct {
            UINT SystemProcess               : 1;
            UINT GdiProcess                  : 1;
#if DDI_AT_LEAST(WDDM2_2)
            UINT VirtualMachineProcess       : 1;
#if DDI_AT_LEAST(WDDM2_4)
            UINT VirtualMachineWorkerProcess : 1;
#if DDI_AT_LEAST(WDDM2_5)
            UINT SessionIsolatedContainer    : 1;
            UINT Reserved                    : 27;
#else
            UINT Reserved                    : 28;
#endif
#else
            UINT Reserved                    : 29;
#endif
#else
            UINT Reserved                    : 30;
#endif
        };
        UINT Value;
    };
} DXGK_CREATEPROCESSFLAGS;
#define DDI_HAS_DXGK_CREATEPROCESSFLAGS 1

typedef struct _DXGKARG_CREATEPROCESS {
    HANDLE                  hDxgkProcess;
    HANDLE                  hKmdProcess;
    DXGK_CREATEPROCESSFLAGS Flags;
    UINT                    NumPasid;
    ULONG                  *pPasid;
#if DDI_AT_LEAST(WDDM2_4)
    HANDLE                  hKmdVmWorkerProcess;
    UINT                    ProcessNameLength;
    WCHAR                  *pProcessName;
#endif
} DXGKARG_CREATEPROCESS;
#define DDI_HAS_DXGKARG_CREATEPROCESS 1
#endif

#if DDI_AT_LEAST(WDDM2_2)
typedef struct _DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE {
    D3DGPU_VIRTUAL_ADDRESS MonitoredFenceGpuVa;
    UINT64                 MonitoredFenceValue;
} DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE;
#define DDI_HAS_DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE 1
#endif

/* ---- paging buffers ----------------------------------------------------- */
typedef struct _DXGK_TRANSFERFLAGS {
    union {
        struct {
            UINT Swizzle          : 1;
            UINT Unswizzle        : 1;
            UINT AllocationIsIdle : 1;
            UINT TransferStart    : 1;
            UINT TransferEnd      : 1;
            UINT Reserved         : 27;
        };
        UINT Value;
    };
} DXGK_TRANSFERFLAGS;
#define DDI_HAS_DXGK_TRANSFERFLAGS 1

typedef struct _DXGK_DISCARDCONTENTFLAGS {
    union {
        struct {
            UINT AllocationIsIdle : 1;
            UINT Reserved         : 31;
        };
        UINT Value;
    };
} DXGK_DISCARDCONTENTFLAGS;
#define DDI_HAS_DXGK_DISCARDCONTENTFLAGS 1

typedef struct _DXGK_MAPAPERTUREFLAGS {
    union {
        struct {
            UINT CacheCoherent : 1;
            UINT Reserved      : 31;
        };
        UINT Value;
    };
} DXGK_MAPAPERTUREFLAGS;
#define DDI_HAS_DXGK_MAPAPERTUREFLAGS 1

typedef struct _DXGKARG_BUILDPAGINGBUFFER {
    PVOID                            pDmaBuffer;
    UINT                             DmaSize;
    PVOID                            pDmaBufferPrivateData;
    UINT                             DmaBufferPrivateDataSize;
    DXGK_BUILDPAGINGBUFFER_OPERATION Operation;
    UINT                             MultipassOffset;
    union {
        struct {
            HANDLE hAllocation;
            UINT   TransferOffset;
            SIZE_T TransferSize;
            struct {
                UINT SegmentId;
                union {
                    LARGE_INTEGER SegmentAddress;
                    PVOID         pMdl;
                };
            } Source;
            struct {
                UINT SegmentId;
                union {
                    LARGE_INTEGER SegmentAddress;
                    PVOID         pMdl;
                };
            } Destination;
            DXGK_TRANSFERFLAGS Flags;
#if DDI_AT_LEAST(WIN7)
            UINT MdlOffset;
#endif
        } Transfer;
        struct {
            HANDLE hAllocation;
            SIZE_T FillSize;
            UINT   FillPattern;
            struct {
                UINT             SegmentId;
                PHYSICAL_ADDRESS SegmentAddress;
            } Destination;
        } Fill;
        struct {
            HANDLE                   hAllocation;
            DXGK_DISCARDCONTENTFLAGS Flags;
            UINT                     SegmentId;
            PHYSICAL_ADDRESS         SegmentAddress;
        } DiscardContent;
        struct {
            HANDLE                hDevice;
            HANDLE                hAllocation;
            UINT                  SegmentId;
            SIZE_T                OffsetInPages;
            SIZE_T                NumberOfPages;
            PVOID                 pMdl;
            DXGK_MAPAPERTUREFLAGS Flags;
#if DDI_AT_LEAST(WIN7)
            ULONG                 MdlOffset;
#endif
        } MapApertureSegment;
        struct {
            HANDLE           hDevice;
            HANDLE           hAllocation;
            UINT             SegmentId;
            SIZE_T           OffsetInPages;
            SIZE_T           NumberOfPages;
            PHYSICAL_ADDRESS DummyPage;
        } UnmapApertureSegment;
#if DDI_AT_LEAST(WDDM2_0)
        DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE      UpdatePageTable;
        DXGK_BUILDPAGINGBUFFER_FLUSHTLB             FlushTlb;
#endif
#if DDI_AT_LEAST(WDDM2_2)
        DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE SignalMonitoredFence;
#endif
        struct {
            UINT Reserved[64];
        } Reserved;
    };
    HANDLE hSystemContext;
#if DDI_AT_LEAST(WDDM2_0)
    D3DGPU_VIRTUAL_ADDRESS DmaBufferGpuVirtualAddress;
    UINT                   DmaBufferWriteOffset;
#endif
} DXGKARG_BUILDPAGINGBUFFER;
#define DDI_HAS_DXGKARG_BUILDPAGINGBUFFER 1

/* ---- TDR / fences ------------------------------------------------------ */
#if DDI_AT_LEAST(WIN8)
typedef struct _DXGKARG_RESETENGINE {
    UINT NodeOrdinal;
    UINT EngineOrdinal;
    UINT LastAbortedFenceId;
} DXGKARG_RESETENGINE;
#define DDI_HAS_DXGKARG_RESETENGINE 1

typedef struct _DXGKARG_QUERYDEPENDENTENGINEGROUP {
    UINT NodeOrdinal;
    UINT EngineOrdinal;
    ULONGLONG DependentNodeOrdinalMask;
} DXGKARG_QUERYDEPENDENTENGINEGROUP;
#define DDI_HAS_DXGKARG_QUERYDEPENDENTENGINEGROUP 1

typedef struct _DXGK_ENGINESTATUS {
    union {
        struct {
            UINT Responsive : 1;
            UINT Reserved   : 31;
        };
        UINT Value;
    };
} DXGK_ENGINESTATUS;
#define DDI_HAS_DXGK_ENGINESTATUS 1

typedef struct _DXGKARG_QUERYENGINESTATUS {
    UINT              NodeOrdinal;
    UINT              EngineOrdinal;
    DXGK_ENGINESTATUS EngineStatus;
} DXGKARG_QUERYENGINESTATUS;
#define DDI_HAS_DXGKARG_QUERYENGINESTATUS 1
#endif

typedef struct _DXGKARG_QUERYCURRENTFENCE {
    UINT CurrentFence;
    UINT NodeOrdinal;
    UINT EngineOrdinal;
} DXGKARG_QUERYCURRENTFENCE;
#define DDI_HAS_DXGKARG_QUERYCURRENTFENCE 1

#if DDI_AT_LEAST(WIN8)
typedef struct _DXGKARG_CANCELCOMMAND {
    HANDLE                          hContext;
    VOID                           *pDmaBuffer;
    UINT                            DmaBufferSize;
    UINT                            DmaBufferSubmissionStartOffset;
    UINT                            DmaBufferSubmissionEndOffset;
    VOID                           *pDmaBufferPrivateData;
    UINT                            DmaBufferPrivateDataSize;
    UINT                            DmaBufferPrivateDataSubmissionStartOffset;
    UINT                            DmaBufferPrivateDataSubmissionEndOffset;
    const DXGK_ALLOCATIONLIST      *pAllocationList;
    UINT                            AllocationListSize;
    const D3DDDI_PATCHLOCATIONLIST *pPatchLocationList;
    UINT                            PatchLocationListSize;
    UINT                            PatchLocationListSubmissionStart;
    UINT                            PatchLocationListSubmissionLength;
#if DDI_AT_LEAST(WDDM2_0)
    D3DGPU_VIRTUAL_ADDRESS          DmaBufferVirtualAddress;
    UINT                            DmaBufferUmdPrivateDataSize;
#endif
} DXGKARG_CANCELCOMMAND;
#define DDI_HAS_DXGKARG_CANCELCOMMAND 1
#endif

/* ---- scan-out address (MMIO flips) ------------------------------------- */
typedef struct _DXGK_SETVIDPNSOURCEADDRESS_FLAGS {
    union {
        struct {
            UINT ModeChange               : 1;
            UINT FlipImmediate            : 1;
            UINT FlipOnNextVSync          : 1;
#if DDI_AT_LEAST(WIN8)
            UINT FlipStereo               : 1;
            UINT FlipStereoTemporaryMono  : 1;
            UINT FlipStereoPreferRight    : 1;
            UINT SharedPrimaryTransition  : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT IndependentFlipExclusive : 1;
#if DDI_AT_LEAST(WDDM2_1)
            UINT MoveFlip                 : 1;
            UINT Reserved                 : 23;
#else
            UINT Reserved                 : 24;
#endif
#else
            UINT Reserved                 : 25;
#endif
#else
            UINT Reserved                 : 29;
#endif
        };
        UINT Value;
    };
} DXGK_SETVIDPNSOURCEADDRESS_FLAGS;
#define DDI_HAS_DXGK_SETVIDPNSOURCEADDRESS_FLAGS 1

#if DDI_AT_LEAST(WDDM2_0)
typedef struct _DXGK_PRIMARYDATA {
    HANDLE           hAllocation;
    WORD             SegmentId;
    PHYSICAL_ADDRESS SegmentAddress;
} DXGK_PRIMARYDATA;
#define DDI_HAS_DXGK_PRIMARYDATA 1
#endif

typedef struct _DXGKARG_SETVIDPNSOURCEADDRESS {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID   VidPnSourceId;
    UINT                             PrimarySegment;
    PHYSICAL_ADDRESS                 PrimaryAddress;
    HANDLE                           hAllocation;
    UINT                             ContextCount;
    HANDLE                           Context[1 + D3DDDI_MAX_BROADCAST_CONTEXT];
    DXGK_SETVIDPNSOURCEADDRESS_FLAGS Flags;
#if DDI_AT_LEAST(WDDM1_3)
    UINT                             Duration;
#endif
#if DDI_AT_LEAST(WDDM2_0)
    DXGK_PRIMARYDATA                 PrimaryData[D3DDDI_MAX_BROADCAST_CONTEXT];
    UINT                             DriverPrivateDataSize;
    PVOID                            pDriverPrivateData;
#endif
} DXGKARG_SETVIDPNSOURCEADDRESS;
#define DDI_HAS_DXGKARG_SETVIDPNSOURCEADDRESS 1

/* ---- capabilities ------------------------------------------------------ */
typedef struct _DXGK_VIDSCHCAPS {
    union {
        struct {
            UINT MultiEngineAware                      : 1;
            UINT VSyncPowerSaveAware                   : 1;
#if DDI_AT_LEAST(WIN8)
            UINT PreemptionAware                       : 1;
            UINT NoDmaPatching                         : 1;
            UINT CancelCommandAware                    : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT No64BitAtomics                        : 1;
            UINT LowIrqlPreemptCommand                 : 1;
#if DDI_AT_LEAST(WDDM2_3)
            UINT HwQueuePacketCap                      : 4;
#if DDI_AT_LEAST(WDDM3_1)
            UINT NativeGpuFence                        : 1;
            UINT OptimizedNativeFenceSignaledInterrupt : 1;
            UINT Reserved                              : 19;
#else
            UINT Reserved                              : 21;
#endif
#else
            UINT Reserved                              : 25;
#endif
#else
            UINT Reserved                              : 27;
#endif
#else
            UINT Reserved                              : 30;
#endif
        };
        UINT Value;
    };
} DXGK_VIDSCHCAPS;
#define DDI_HAS_DXGK_VIDSCHCAPS 1

#if DDI_AT_LEAST(WDDM2_2)
typedef struct _DXGK_NODEMETADATA_FLAGS {
    union {
        struct {
            UINT ContextSchedulingSupported    : 1;
#if DDI_AT_LEAST(WDDM2_5)
            UINT RingBufferFenceRelease        : 1;
            UINT SupportTrackedWorkload        : 1;
#if DDI_AT_LEAST(WDDM3_1)
            UINT UserModeSubmission            : 1;
#if DDI_AT_LEAST(WDDM3_2)
            UINT SupportBuildTestCommandBuffer : 1;
            UINT Reserved                      : 11;
#else
            UINT Reserved                      : 12;
#endif
#else
            UINT Reserved                      : 13;
#endif
            UINT MaxInFlightHwQueueBuffers     : 16;
#else
            UINT Reserved                      : 31;
#endif
        };
        UINT32 Value;
    };
} DXGK_NODEMETADATA_FLAGS;
#define DDI_HAS_DXGK_NODEMETADATA_FLAGS 1
#endif

/* ---- Win32 rectangle (windef.h) ---------------------------------------- */
typedef struct tagRECT {
    LONG left;
    LONG top;
    LONG right;
    LONG bottom;
} RECT;
#define DDI_HAS_RECT 1

/* ---- multiplane overlays: attributes and per-plane vsync reports ------- */
/* The structures the CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY(2/3) interrupts point
 * at (forward-declared above the interrupt data).  The enumerations of the
 * WDDM 1.3 attributes are declared with their first enumerators only: an enum
 * is 4 bytes under MSVC whatever it lists, so the layout does not depend on
 * them. */
#if DDI_AT_LEAST(WDDM1_3)
typedef enum _DXGK_MULTIPLANE_OVERLAY_FLAGS {
    DXGK_MULTIPLANE_OVERLAY_FLAG_VERTICAL_FLIP   = 0x1,
    DXGK_MULTIPLANE_OVERLAY_FLAG_HORIZONTAL_FLIP = 0x2
} DXGK_MULTIPLANE_OVERLAY_FLAGS;
typedef enum _D3DDDI_ROTATION {
    D3DDDI_ROTATION_IDENTITY = 1,
    D3DDDI_ROTATION_90       = 2,
    D3DDDI_ROTATION_180      = 3,
    D3DDDI_ROTATION_270      = 4
} D3DDDI_ROTATION;
typedef enum _DXGK_MULTIPLANE_OVERLAY_BLEND {
    DXGK_MULTIPLANE_OVERLAY_BLEND_OPAQUE     = 0x0,
    DXGK_MULTIPLANE_OVERLAY_BLEND_ALPHABLEND = 0x1
} DXGK_MULTIPLANE_OVERLAY_BLEND;
typedef enum _DXGK_MULTIPLANE_OVERLAY_VIDEO_FRAME_FORMAT {
    DXGK_MULTIPLANE_OVERLAY_VIDEO_FRAME_FORMAT_PROGRESSIVE = 0
} DXGK_MULTIPLANE_OVERLAY_VIDEO_FRAME_FORMAT;
typedef enum _DXGK_MULTIPLANE_OVERLAY_YCbCr_FLAGS {
    DXGK_MULTIPLANE_OVERLAY_YCbCr_FLAG_NOMINAL_RANGE = 0x1
} DXGK_MULTIPLANE_OVERLAY_YCbCr_FLAGS;
typedef enum _DXGK_MULTIPLANE_OVERLAY_STEREO_FORMAT {
    DXGK_MULTIPLANE_OVERLAY_STEREO_FORMAT_MONO = 0
} DXGK_MULTIPLANE_OVERLAY_STEREO_FORMAT;
typedef enum _DXGK_MULTIPLANE_OVERLAY_STEREO_FLIP_MODE {
    DXGK_MULTIPLANE_OVERLAY_STEREO_FLIP_NONE = 0
} DXGK_MULTIPLANE_OVERLAY_STEREO_FLIP_MODE;
typedef enum _DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY {
    DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY_BILINEAR = 0x1
} DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY;

typedef struct _DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES {
    DXGK_MULTIPLANE_OVERLAY_FLAGS              Flags;
    RECT                                       SrcRect;
    RECT                                       DstRect;
    RECT                                       ClipRect;
    D3DDDI_ROTATION                            Rotation;
    DXGK_MULTIPLANE_OVERLAY_BLEND              Blend;
    UINT                                       NumFilters;
    void                                      *pFilters;
    DXGK_MULTIPLANE_OVERLAY_VIDEO_FRAME_FORMAT VideoFrameFormat;
    DXGK_MULTIPLANE_OVERLAY_YCbCr_FLAGS        YCbCrFlags;
    DXGK_MULTIPLANE_OVERLAY_STEREO_FORMAT      StereoFormat;
    BOOL                                       StereoLeftViewFrame0;
    BOOL                                       StereoBaseViewFrame0;
    DXGK_MULTIPLANE_OVERLAY_STEREO_FLIP_MODE   StereoFlipMode;
    DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY    StretchQuality;
} DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES 1

struct _DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO {
    DWORD                              LayerIndex;
    BOOL                               Enabled;
    PHYSICAL_ADDRESS                   PhysicalAddress;
    DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES PlaneAttributes;
};
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO 1
#endif

#if DDI_AT_LEAST(WDDM2_1)
typedef struct _DXGKCB_NOTIFY_MPO_VSYNC_FLAGS {
    union {
        struct {
            UINT PostPresentNeeded : 1;
            UINT Reserved          : 31;
        };
        UINT Value;
    };
} DXGKCB_NOTIFY_MPO_VSYNC_FLAGS;
#define DDI_HAS_DXGKCB_NOTIFY_MPO_VSYNC_FLAGS 1

struct _DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2 {
    DWORD                         LayerIndex;
    ULONGLONG                     PresentId;
    DXGKCB_NOTIFY_MPO_VSYNC_FLAGS Flags;
};
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2 1
#endif

#if DDI_AT_LEAST(WDDM2_9)
struct _DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3 {
    DWORD LayerIndex;
    ULONG FirstFreeFlipQueueLogEntryIndex;
};
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3 1
#endif

/* ---- multiplane-overlay flips, third form (WDDM 2.1) ------------------- */
/* DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3 and
 * DxgkDdiCheckMultiPlaneOverlaySupport3.  Guards inside the family follow the
 * pages' #if ladders as settled in DECISIONS.md.  Pointees the model does
 * not declare stay incomplete types.  D3DDDI_COLOR_SPACE_TYPE is a 4-byte
 * enum whatever it lists; only its first enumerators are given. */
#if DDI_AT_LEAST(WDDM1_3)
typedef struct _DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO {
    union {
        struct {
            UINT FailingPlane : 4;
            UINT TryAgain     : 1;
            UINT Reserved     : 27;
        };
        UINT Value;
    };
} DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO;
#define DDI_HAS_DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO 1
#endif

#if DDI_AT_LEAST(WDDM2_1)
typedef enum _D3DDDI_COLOR_SPACE_TYPE {
    D3DDDI_COLOR_SPACE_RGB_FULL_G22_NONE_P709   = 0,
    D3DDDI_COLOR_SPACE_RGB_FULL_G10_NONE_P709   = 1
} D3DDDI_COLOR_SPACE_TYPE;

typedef struct _DXGK_HDR_METADATA DXGK_HDR_METADATA;

typedef struct _DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS {
    union {
        struct {
            UINT FlipStereo              : 1;
            UINT FlipStereoTemporaryMono : 1;
            UINT FlipStereoPreferRight   : 1;
            UINT RetryAtLowerIrql        : 1;
            UINT Reserved                : 28;
        };
        UINT Value;
    };
} DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS;
#define DDI_HAS_DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS 1

typedef struct _DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS {
    union {
        struct {
            UINT PrePresentNeeded           : 1;
#if DDI_AT_LEAST(WDDM3_0)
            UINT HwFlipQueueDrainNeeded     : 1;
            UINT HwFlipQueueDrainAllPlanes  : 1;
            UINT HwFlipQueueDrainAllSources : 1;
            UINT Reserved                   : 28;
#else
            UINT Reserved                   : 31;
#endif
        };
        UINT Value;
    };
} DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS;
#define DDI_HAS_DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS 1

typedef struct _DXGK_PLANE_SPECIFIC_INPUT_FLAGS {
    union {
        struct {
            UINT Enabled                  : 1;
            UINT FlipImmediate            : 1;
            UINT FlipOnNextVSync          : 1;
            UINT SharedPrimaryTransition  : 1;
            UINT IndependentFlipExclusive : 1;
#if DDI_AT_LEAST(WDDM2_6)
            UINT FlipImmediateNoTearing   : 1;
            UINT Reserved                 : 26;
#else
            UINT Reserved                 : 27;
#endif
        };
        UINT Value;
    };
} DXGK_PLANE_SPECIFIC_INPUT_FLAGS;
#define DDI_HAS_DXGK_PLANE_SPECIFIC_INPUT_FLAGS 1

typedef struct _DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS {
    union {
        struct {
            UINT FlipConvertedToImmediate : 1;
            UINT PostPresentNeeded        : 1;
#if DDI_AT_LEAST(WDDM2_2)
            UINT HsyncInterruptCompletion : 1;
            UINT Reserved                 : 29;
#else
            UINT Reserved                 : 30;
#endif
        };
        UINT Value;
    };
} DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS;
#define DDI_HAS_DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS 1

typedef struct _DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS {
    union {
        struct {
            UINT VerticalFlip   : 1;
            UINT HorizontalFlip : 1;
            UINT Reserved       : 30;
        };
        UINT Value;
    };
} DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS 1

typedef struct _DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION {
    DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_FLAGS Flags;
    RECT                                           SrcRect;
    RECT                                           DstRect;
    D3DDDI_ROTATION                                Rotation;
} DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION 1

typedef struct _DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3 {
    DXGK_MULTIPLANE_OVERLAY_FLAGS           Flags;
    RECT                                    SrcRect;
    RECT                                    DstRect;
    RECT                                    ClipRect;
    D3DDDI_ROTATION                         Rotation;
    DXGK_MULTIPLANE_OVERLAY_BLEND           Blend;
    D3DDDI_COLOR_SPACE_TYPE                 ColorSpaceType;
    DXGK_MULTIPLANE_OVERLAY_STRETCH_QUALITY StretchQuality;
#if DDI_AT_LEAST(WDDM2_3)
    UINT                                    SDRWhiteLevel;
#endif
#if DDI_AT_LEAST(WDDM2_4)
    UINT                                    DirtyRectCnt;
    const RECT                             *pDirtyRects;
#endif
} DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3 1

/* Later headers make SegmentId and SegmentAddress union arms (MmuId,
 * VirtualAddress) of the same offsets; the plain members are declared. */
typedef struct _DXGK_PRIMARYCONTEXTDATA {
    HANDLE           hContext;
    HANDLE           hAllocation;
    WORD             SegmentId;
    PHYSICAL_ADDRESS SegmentAddress;
} DXGK_PRIMARYCONTEXTDATA;
#define DDI_HAS_DXGK_PRIMARYCONTEXTDATA 1

typedef struct _DXGK_MULTIPLANE_OVERLAY_PLANE3 {
    UINT                                LayerIndex;
    ULONGLONG                           PresentId;
    DXGK_PLANE_SPECIFIC_INPUT_FLAGS     InputFlags;
    DXGK_PLANE_SPECIFIC_OUTPUT_FLAGS    OutputFlags;
    UINT                                MaxImmediateFlipLine;
    UINT                                ContextCount;
    DXGK_PRIMARYCONTEXTDATA           **ppContextData;
    UINT                                DriverPrivateDataSize;
    PVOID                               pDriverPrivateData;
    DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3 PlaneAttributes;
} DXGK_MULTIPLANE_OVERLAY_PLANE3;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_PLANE3 1

typedef struct _DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3 {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID            VidPnSourceId;
    DXGK_SETVIDPNSOURCEADDRESS_INPUT_FLAGS    InputFlags;
    DXGK_SETVIDPNSOURCEADDRESS_OUTPUT_FLAGS   OutputFlags;
    UINT                                      PlaneCount;
    DXGK_MULTIPLANE_OVERLAY_PLANE3          **ppPlanes;
    DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION *pPostComposition;
    UINT                                      Duration;
    DXGK_HDR_METADATA                        *pHDRMetaData;
#if DDI_AT_LEAST(WDDM3_0)
    UINT64                                    TargetFlipTime;
#endif
} DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3;
#define DDI_HAS_DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3 1

typedef struct _DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2 {
    HANDLE                              hAllocation;
    D3DDDI_VIDEO_PRESENT_SOURCE_ID      VidPnSourceId;
    UINT                                LayerIndex;
    DXGK_MULTIPLANE_OVERLAY_ATTRIBUTES3 PlaneAttributes;
} DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2 1

typedef struct _DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID           VidPnSourceId;
    DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION PostComposition;
} DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE;
#define DDI_HAS_DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE 1

typedef struct _DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3 {
    UINT                                                   PlaneCount;
    DXGK_MULTIPLANE_OVERLAY_PLANE_WITH_SOURCE2           **ppPlanes;
    UINT                                                   PostCompositionCount;
    DXGK_MULTIPLANE_OVERLAY_POST_COMPOSITION_WITH_SOURCE **ppPostComposition;
    BOOL                                                   Supported;
    DXGK_CHECK_MULTIPLANE_OVERLAY_SUPPORT_RETURN_INFO      ReturnInfo;
} DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3;
#define DDI_HAS_DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3 1
#endif

/* ---- hardware flip queue (WDDM 3.0): cancel, flip queue log, interrupt target */
#if DDI_AT_LEAST(WDDM3_0)
typedef struct _DXGK_CANCELFLIPS_PLANE {
    ULONGLONG PresentIdCancelRequested;
    ULONGLONG PresentIdCancelled;
    UINT      LayerIndex;
} DXGK_CANCELFLIPS_PLANE;
#define DDI_HAS_DXGK_CANCELFLIPS_PLANE 1

typedef struct _DXGKARG_CANCELFLIPS {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT                           PlaneCount;
    DXGK_CANCELFLIPS_PLANE       **ppPlanes;
} DXGKARG_CANCELFLIPS;
#define DDI_HAS_DXGKARG_CANCELFLIPS 1

typedef struct _DXGK_FLIPQUEUE_LOG_ENTRY {
    ULONGLONG PresentId;
    ULONGLONG PresentTimestamp;
} DXGK_FLIPQUEUE_LOG_ENTRY;
#define DDI_HAS_DXGK_FLIPQUEUE_LOG_ENTRY 1

typedef struct _DXGKARG_SETFLIPQUEUELOGBUFFER {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT                           LayerIndex;
    UINT                           NumberOfEntries;
    DXGK_FLIPQUEUE_LOG_ENTRY      *LogBufferAddress;
} DXGKARG_SETFLIPQUEUELOGBUFFER;
#define DDI_HAS_DXGKARG_SETFLIPQUEUELOGBUFFER 1

typedef struct _DXGKARG_UPDATEFLIPQUEUELOG {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT                           LayerIndex;
    ULONG                          FirstFreeFlipQueueLogEntryIndex;
} DXGKARG_UPDATEFLIPQUEUELOG;
#define DDI_HAS_DXGKARG_UPDATEFLIPQUEUELOG 1

typedef struct _DXGKARG_SETINTERRUPTTARGETPRESENTID {
    D3DDDI_VIDEO_PRESENT_SOURCE_ID VidPnSourceId;
    UINT                           LayerIndex;
    ULONGLONG                      InterruptTargetPresentId;
} DXGKARG_SETINTERRUPTTARGETPRESENTID;
#define DDI_HAS_DXGKARG_SETINTERRUPTTARGETPRESENTID 1
#endif

/* ---- adapter description: segments, engine topology, node metadata ---- */
/* The three power-transition bits and DirectFlip are Windows 8 additions
 * (reference page); the oldest headers end the list at
 * PopulatedFromSystemMemory.  AperturePreservedDuringStandby, newer than
 * WDDM 3.2, is not modelled.  See DECISIONS.md. */
typedef struct _DXGK_SEGMENTFLAGS {
    union {
        struct {
            UINT Aperture                          : 1;
            UINT Agp                               : 1;
            UINT CpuVisible                        : 1;
            UINT UseBanking                        : 1;
            UINT CacheCoherent                     : 1;
            UINT PitchAlignment                    : 1;
            UINT PopulatedFromSystemMemory         : 1;
#if DDI_AT_LEAST(WIN8)
            UINT PreservedDuringStandby            : 1;
            UINT PreservedDuringHibernate          : 1;
            UINT PartiallyPreservedDuringHibernate : 1;
            UINT DirectFlip                        : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT Use64KBPages                      : 1;
            UINT ReservedSysMem                    : 1;
            UINT SupportsCpuHostAperture           : 1;
            UINT SupportsCachedCpuHostAperture     : 1;
            UINT ApplicationTarget                 : 1;
            UINT VprSupported                      : 1;
            UINT VprPreservedDuringStandby         : 1;
            UINT EncryptedPagingSupported          : 1;
            UINT LocalBudgetGroup                  : 1;
            UINT NonLocalBudgetGroup               : 1;
#if DDI_AT_LEAST(WDDM2_9)
            UINT PopulatedByReservedDDRByFirmware  : 1;
            UINT Reserved                          : 10;
#else
            UINT Reserved                          : 11;
#endif
#else
            UINT Reserved                          : 21;
#endif
#else
            UINT Reserved                          : 25;
#endif
        };
        UINT Value;
    };
} DXGK_SEGMENTFLAGS;
#define DDI_HAS_DXGK_SEGMENTFLAGS 1

typedef struct _DXGK_SEGMENTDESCRIPTOR {
    PHYSICAL_ADDRESS  BaseAddress;
    PHYSICAL_ADDRESS  CpuTranslatedAddress;
    SIZE_T            Size;
    UINT              NbOfBanks;
    SIZE_T           *pBankRangeTable;
    SIZE_T            CommitLimit;
    DXGK_SEGMENTFLAGS Flags;
} DXGK_SEGMENTDESCRIPTOR;
#define DDI_HAS_DXGK_SEGMENTDESCRIPTOR 1

#define DXGK_MAX_ASYMETRICAL_PROCESSING_NODES 64

typedef struct _DXGK_GPUENGINETOPOLOGY {
    UINT NbAsymetricProcessingNodes;
    UINT Reserved[DXGK_MAX_ASYMETRICAL_PROCESSING_NODES];
} DXGK_GPUENGINETOPOLOGY;
#define DDI_HAS_DXGK_GPUENGINETOPOLOGY 1

#if DDI_AT_LEAST(WDDM1_3)
#define DXGK_MAX_METADATA_NAME_LENGTH 32

/* Enumerator additions do not change the 4-byte size; all are listed. */
typedef enum {
    DXGK_ENGINE_TYPE_OTHER            = 0,
    DXGK_ENGINE_TYPE_3D               = 1,
    DXGK_ENGINE_TYPE_VIDEO_DECODE     = 2,
    DXGK_ENGINE_TYPE_VIDEO_ENCODE     = 3,
    DXGK_ENGINE_TYPE_VIDEO_PROCESSING = 4,
    DXGK_ENGINE_TYPE_SCENE_ASSEMBLY   = 5,
    DXGK_ENGINE_TYPE_COPY             = 6,
    DXGK_ENGINE_TYPE_OVERLAY          = 7,
    DXGK_ENGINE_TYPE_CRYPTO           = 8,
    DXGK_ENGINE_TYPE_VIDEO_CODEC      = 9,
    DXGK_ENGINE_TYPE_MAX              = 10
} DXGK_ENGINE_TYPE;
#define DDI_HAS_DXGK_ENGINE_TYPE 1

typedef struct _DXGK_NODEMETADATA {
    DXGK_ENGINE_TYPE        EngineType;
    WCHAR                   FriendlyName[DXGK_MAX_METADATA_NAME_LENGTH];
#if DDI_AT_LEAST(WDDM2_2)
    DXGK_NODEMETADATA_FLAGS Flags;
#else
    UINT32                  Reserved;
#endif
#if DDI_AT_LEAST(WDDM2_0)
    BOOLEAN                 GpuMmuSupported;
    BOOLEAN                 IoMmuSupported;
#endif
} DXGK_NODEMETADATA;
#define DDI_HAS_DXGK_NODEMETADATA 1
#endif

/* ---- device and context creation -------------------------------------- */
typedef struct _DXGK_DEVICEINFOFLAGS {
    union {
        struct {
            UINT GuaranteedDmaBufferContract : 1;
            UINT Reserved                    : 31;
        };
        UINT Value;
    };
} DXGK_DEVICEINFOFLAGS;
#define DDI_HAS_DXGK_DEVICEINFOFLAGS 1

typedef struct _DXGK_DEVICEINFO {
    UINT                 DmaBufferSize;
    UINT                 DmaBufferSegmentSet;
    UINT                 DmaBufferPrivateDataSize;
    UINT                 AllocationListSize;
    UINT                 PatchLocationListSize;
    DXGK_DEVICEINFOFLAGS Flags;
} DXGK_DEVICEINFO;
#define DDI_HAS_DXGK_DEVICEINFO 1

/* The documented syntax names the top bit DXGK_DEVICE_RESERVED0, a macro
 * that the header expands to Reserved0; it is declared here by that name. */
typedef struct _DXGK_CREATEDEVICEFLAGS {
    union {
        struct {
            UINT SystemDevice : 1;
#if DDI_AT_LEAST(WIN7)
            UINT GdiDevice    : 1;
#if DDI_AT_LEAST(WIN8)
            UINT Reserved     : 29;
            UINT Reserved0    : 1;
#else
            UINT Reserved     : 30;
#endif
#else
            UINT Reserved     : 31;
#endif
        };
        UINT Value;
    };
} DXGK_CREATEDEVICEFLAGS;
#define DDI_HAS_DXGK_CREATEDEVICEFLAGS 1

typedef struct _DXGKARG_CREATEDEVICE {
    HANDLE hDevice;
    union {
        DXGK_CREATEDEVICEFLAGS Flags;
        DXGK_DEVICEINFO       *pInfo;
    };
#if DDI_AT_LEAST(WDDM2_0)
    ULONG  Pasid;
    HANDLE hKmdProcess;
#endif
} DXGKARG_CREATEDEVICE;
#define DDI_HAS_DXGKARG_CREATEDEVICE 1

typedef struct _DXGK_CREATECONTEXTFLAGS {
    union {
        struct {
            UINT SystemContext          : 1;
#if DDI_AT_LEAST(WIN7)
            UINT GdiContext             : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT VirtualAddressing      : 1;
#if DDI_AT_LEAST(WDDM2_1)
            UINT SystemProtectedContext : 1;
#if DDI_AT_LEAST(WDDM2_3)
            UINT HwQueueSupported       : 1;
#if DDI_AT_LEAST(WDDM3_2)
            UINT TestContext            : 1;
            UINT Reserved               : 26;
#else
            UINT Reserved               : 27;
#endif
#else
            UINT Reserved               : 28;
#endif
#else
            UINT Reserved               : 29;
#endif
#else
            UINT Reserved               : 30;
#endif
#else
            UINT Reserved               : 31;
#endif
        };
        UINT Value;
    };
} DXGK_CREATECONTEXTFLAGS;
#define DDI_HAS_DXGK_CREATECONTEXTFLAGS 1

typedef struct _DXGKARG_CREATECONTEXT {
    HANDLE                  hContext;
    UINT                    NodeOrdinal;
    UINT                    EngineAffinity;
    DXGK_CREATECONTEXTFLAGS Flags;
    VOID                   *pPrivateDriverData;
    UINT                    PrivateDriverDataSize;
    DXGK_CONTEXTINFO        ContextInfo;
} DXGKARG_CREATECONTEXT;
#define DDI_HAS_DXGKARG_CREATECONTEXT 1

/* ---- render and present ------------------------------------------------ */
typedef struct _DXGKARG_RENDER {
    const VOID               *pCommand;
    UINT                      CommandLength;
    VOID                     *pDmaBuffer;
    UINT                      DmaSize;
    VOID                     *pDmaBufferPrivateData;
    UINT                      DmaBufferPrivateDataSize;
    DXGK_ALLOCATIONLIST      *pAllocationList;
    UINT                      AllocationListSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationListIn;
    UINT                      PatchLocationListInSize;
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationListOut;
    UINT                      PatchLocationListOutSize;
    UINT                      MultipassOffset;
    UINT                      DmaBufferSegmentId;
    PHYSICAL_ADDRESS          DmaBufferPhysicalAddress;
} DXGKARG_RENDER;
#define DDI_HAS_DXGKARG_RENDER 1

typedef struct _DXGK_PRESENTFLAGS {
    union {
        struct {
            UINT Blt                       : 1;
            UINT ColorFill                 : 1;
            UINT Flip                      : 1;
            UINT FlipWithNoWait            : 1;
            UINT SrcColorKey               : 1;
            UINT DstColorKey               : 1;
            UINT LinearToSrgb              : 1;
            UINT Rotate                    : 1;
#if DDI_AT_LEAST(WIN8)
            UINT FlipStereo                : 1;
            UINT FlipStereoTemporaryMono   : 1;
            UINT FlipStereoPreferRight     : 1;
            UINT BltStereoUseRight         : 1;
            UINT FlipWithMultiPlaneOverlay : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT RedirectedFlip            : 1;
            UINT Reserved                  : 18;
#else
            UINT Reserved                  : 19;
#endif
#else
            UINT Reserved                  : 24;
#endif
        };
        UINT Value;
    };
} DXGK_PRESENTFLAGS;
#define DDI_HAS_DXGK_PRESENTFLAGS 1

/* Only pointed to here; their contents are outside this model. */
typedef struct _DXGK_PRESENTALLOCATIONINFO        DXGK_PRESENTALLOCATIONINFO;
typedef struct _DXGK_PRESENTMULTIPLANEOVERLAYINFO DXGK_PRESENTMULTIPLANEOVERLAYINFO;

typedef struct _DXGKARG_PRESENT {
    VOID                     *pDmaBuffer;
    UINT                      DmaSize;
    VOID                     *pDmaBufferPrivateData;
    UINT                      DmaBufferPrivateDataSize;
#if DDI_AT_LEAST(WIN7)
    union {
        DXGK_ALLOCATIONLIST               *pAllocationList;
        DXGK_PRESENTALLOCATIONINFO        *pAllocationInfo;
#if DDI_AT_LEAST(WIN8)
        DXGK_PRESENTMULTIPLANEOVERLAYINFO *pPresentMultiPlaneOverlayInfo;
#endif
    };
#else
    DXGK_ALLOCATIONLIST      *pAllocationList;
#endif
    D3DDDI_PATCHLOCATIONLIST *pPatchLocationListOut;
    UINT                      PatchLocationListOutSize;
    UINT                      MultipassOffset;
    UINT                      Color;
    RECT                      DstRect;
    RECT                      SrcRect;
    UINT                      SubRectCnt;
    const RECT               *pDstSubRects;
    D3DDDI_FLIPINTERVAL_TYPE  FlipInterval;
    DXGK_PRESENTFLAGS         Flags;
    UINT                      DmaBufferSegmentId;
    PHYSICAL_ADDRESS          DmaBufferPhysicalAddress;
#if DDI_AT_LEAST(WDDM1_3)
    UINT                      Reserved;
#endif
#if DDI_AT_LEAST(WDDM2_0)
    D3DGPU_VIRTUAL_ADDRESS    DmaBufferGpuVirtualAddress;
    UINT                      NumSrcAllocations;
    UINT                      NumDstAllocations;
    UINT                      PrivateDriverDataSize;
    PVOID                     pPrivateDriverData;
#endif
} DXGKARG_PRESENT;
#define DDI_HAS_DXGKARG_PRESENT 1

/* ---- hardware scheduling (WDDM 2.2 / 2.4 / 2.5) ------------------------- */
/* Guards: see DECISIONS.md (2.2 set as in the WDDM 2.3 header; the 2.4
 * scheduling-model set; DXGKARG_SIGNALMONITOREDFENCE 2.5). */
#if DDI_AT_LEAST(WDDM2_2)
typedef struct _D3DDDI_CREATEHWCONTEXTFLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} D3DDDI_CREATEHWCONTEXTFLAGS;
#define DDI_HAS_D3DDDI_CREATEHWCONTEXTFLAGS 1

typedef struct _DXGK_HWCONTEXT_CAPS {
    union {
        struct {
            UINT UseIoMmu : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_HWCONTEXT_CAPS;
#define DDI_HAS_DXGK_HWCONTEXT_CAPS 1

typedef struct _DXGKARG_CREATEHWCONTEXT {
    HANDLE                      hHwContext;
    UINT                        NodeOrdinal;
    UINT                        EngineAffinity;
    D3DDDI_CREATEHWCONTEXTFLAGS Flags;
    UINT                        PrivateDriverDataSize;
    VOID                       *pPrivateDriverData;
    DXGK_HWCONTEXT_CAPS         ContextCaps;
} DXGKARG_CREATEHWCONTEXT;
#define DDI_HAS_DXGKARG_CREATEHWCONTEXT 1

typedef struct _D3DDDI_CREATEHWQUEUEFLAGS {
    union {
        struct {
            UINT DisableGpuTimeout   : 1;
#if DDI_AT_LEAST(WDDM2_7)
            UINT NoBroadcastSignal   : 1;
            UINT NoBroadcastWait     : 1;
            UINT NoKmdAccess         : 1;
#if DDI_AT_LEAST(WDDM3_1)
            UINT UserModeSubmission  : 1;
#if DDI_AT_LEAST(WDDM3_2)
            UINT NativeProgressFence : 1;
            UINT TestQueue           : 1;
            UINT Reserved            : 25;
#else
            UINT Reserved            : 27;
#endif
#else
            UINT Reserved            : 28;
#endif
#else
            UINT Reserved            : 31;
#endif
        };
        UINT Value;
    };
} D3DDDI_CREATEHWQUEUEFLAGS;
#define DDI_HAS_D3DDDI_CREATEHWQUEUEFLAGS 1

typedef struct _DXGKARG_CREATEHWQUEUE {
    HANDLE                    hHwQueue;
    D3DDDI_CREATEHWQUEUEFLAGS Flags;
    UINT                      PrivateDriverDataSize;
    VOID                     *pPrivateDriverData;
    D3DKMT_HANDLE             hHwQueueProgressFence;
    VOID                     *HwQueueProgressFenceCPUVirtualAddress;
    D3DGPU_VIRTUAL_ADDRESS    HwQueueProgressFenceGPUVirtualAddress;
#if DDI_AT_LEAST(WDDM3_2)
    HANDLE                    hHwQueueNativeProgressFence;
#endif
} DXGKARG_CREATEHWQUEUE;
#define DDI_HAS_DXGKARG_CREATEHWQUEUE 1

typedef struct _DXGKARG_RESETHWENGINE {
    UINT NodeOrdinal;
    UINT EngineOrdinal;
} DXGKARG_RESETHWENGINE;
#define DDI_HAS_DXGKARG_RESETHWENGINE 1
#endif

#if DDI_AT_LEAST(WDDM2_4)
typedef enum _DXGK_SCHEDULING_PRIORITY_BAND {
    DXGK_SCHEDULING_PRIORITY_BAND_IDLE     = 0,
    DXGK_SCHEDULING_PRIORITY_BAND_NORMAL   = 1,
    DXGK_SCHEDULING_PRIORITY_BAND_FOCUS    = 2,
    DXGK_SCHEDULING_PRIORITY_BAND_REALTIME = 3,
    DXGK_SCHEDULING_PRIORITY_BAND_COUNT    = 4
} DXGK_SCHEDULING_PRIORITY_BAND;
#define DDI_HAS_DXGK_SCHEDULING_PRIORITY_BAND 1

typedef struct _DXGKARG_SETUPPRIORITYBANDS {
    UINT64 gracePeriodForBand[DXGK_SCHEDULING_PRIORITY_BAND_COUNT];
    UINT64 processQuantumForBand[DXGK_SCHEDULING_PRIORITY_BAND_COUNT];
    UINT64 processGracePeriodForBand[DXGK_SCHEDULING_PRIORITY_BAND_COUNT];
    UINT   targetNormalBandPercentage;
} DXGKARG_SETUPPRIORITYBANDS;
#define DDI_HAS_DXGKARG_SETUPPRIORITYBANDS 1

typedef struct _DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES {
    HANDLE                        hContext;
    DXGK_SCHEDULING_PRIORITY_BAND priorityBand;
    INT                           realtimeBandPriorityLevel;
    INT                           inProcessPriority;
    UINT64                        quantum;
    UINT64                        gracePeriodSamePriority;
    UINT64                        gracePeriodLowerPriority;
} DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES;
#define DDI_HAS_DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES 1

typedef struct _DXGKARG_SUSPENDCONTEXT {
    HANDLE hContext;
    UINT64 contextSuspendFence;
} DXGKARG_SUSPENDCONTEXT;
#define DDI_HAS_DXGKARG_SUSPENDCONTEXT 1

typedef struct _DXGKARG_RESUMECONTEXT {
    HANDLE hContext;
} DXGKARG_RESUMECONTEXT;
#define DDI_HAS_DXGKARG_RESUMECONTEXT 1

typedef struct _DXGKARG_RESUMEHWENGINE {
    UINT NodeOrdinal;
    UINT EngineOrdinal;
} DXGKARG_RESUMEHWENGINE;
#define DDI_HAS_DXGKARG_RESUMEHWENGINE 1

typedef struct _DXGK_INVALIDATEHWCONTEXTFLAGS {
    union {
        struct {
            UINT CollateralDamage : 1;
            UINT Reserved         : 31;
        };
        UINT Value;
    };
} DXGK_INVALIDATEHWCONTEXTFLAGS;
#define DDI_HAS_DXGK_INVALIDATEHWCONTEXTFLAGS 1
#endif

/* The WDDM 2.2/2.3 form has hHwContext only; hAdapter (in front) and
 * Flags arrive with the WDDM 2.4 scheduling model. */
#if DDI_AT_LEAST(WDDM2_2)
typedef struct _DXGKARGCB_INVALIDATEHWCONTEXT {
#if DDI_AT_LEAST(WDDM2_4)
    HANDLE                        hAdapter;
#endif
    HANDLE                        hHwContext;
#if DDI_AT_LEAST(WDDM2_4)
    DXGK_INVALIDATEHWCONTEXTFLAGS Flags;
#endif
} DXGKARGCB_INVALIDATEHWCONTEXT;
#define DDI_HAS_DXGKARGCB_INVALIDATEHWCONTEXT 1
#endif

#if DDI_AT_LEAST(WDDM2_5)
typedef enum _DXGK_KERNEL_SUBMISSION_TYPE {
    DXGK_KERNEL_SUBMISSION_BUILD_PAGING_BUFFER = 0,
    DXGK_KERNEL_SUBMISSION_RENDERGDI           = 1,
    DXGK_KERNEL_SUBMISSION_PRESENTBLT          = 2
} DXGK_KERNEL_SUBMISSION_TYPE;
#define DDI_HAS_DXGK_KERNEL_SUBMISSION_TYPE 1

typedef struct _DXGKARG_SIGNALMONITOREDFENCE {
    DXGK_KERNEL_SUBMISSION_TYPE KernelSubmissionType;
    VOID                       *pDmaBuffer;
    D3DGPU_VIRTUAL_ADDRESS      DmaBufferGpuVirtualAddress;
    UINT                        DmaSize;
    VOID                       *pDmaBufferPrivateData;
    UINT                        DmaBufferPrivateDataSize;
    UINT                        MultipassOffset;
    D3DGPU_VIRTUAL_ADDRESS      MonitoredFenceGpuVa;
    UINT64                      MonitoredFenceValue;
    VOID                       *MonitoredFenceCpuVa;
    HANDLE                      hHwQueue;
} DXGKARG_SIGNALMONITOREDFENCE;
#define DDI_HAS_DXGKARG_SIGNALMONITOREDFENCE 1
#endif

/* ---- native GPU fences (WDDM 3.1 header items; the OS enables them for WDDM 3.2) ----- */
/* Guards: see DECISIONS.md.  D3DDDI_NATIVE_FENCE_PDD_SIZE is 64 (d3dukmdt.h). */
#if DDI_AT_LEAST(WDDM3_1)
#define D3DDDI_NATIVE_FENCE_PDD_SIZE 64

typedef enum _D3DDDI_NATIVEFENCE_TYPE {
    D3DDDI_NATIVEFENCE_TYPE_DEFAULT   = 0,
    D3DDDI_NATIVEFENCE_TYPE_INTRA_GPU = 1
} D3DDDI_NATIVEFENCE_TYPE;
#define DDI_HAS_D3DDDI_NATIVEFENCE_TYPE 1

typedef struct _DXGKARG_CREATENATIVEFENCE_FLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} DXGKARG_CREATENATIVEFENCE_FLAGS;
#define DDI_HAS_DXGKARG_CREATENATIVEFENCE_FLAGS 1

typedef struct _DXGKARG_CREATENATIVEFENCE {
    HANDLE                          hGlobalNativeFence;
    D3DDDI_NATIVEFENCE_TYPE         Type;
    D3DGPU_VIRTUAL_ADDRESS          CurrentValueSystemProcessGpuVa;
    D3DGPU_VIRTUAL_ADDRESS          MonitoredValueSystemProcessGpuVa;
    BYTE                            pPrivateDriverData[D3DDDI_NATIVE_FENCE_PDD_SIZE];
    DXGKARG_CREATENATIVEFENCE_FLAGS Flags;
    BYTE                            Reserved[32];
} DXGKARG_CREATENATIVEFENCE;
#define DDI_HAS_DXGKARG_CREATENATIVEFENCE 1

typedef struct _DXGK_DESTROYNATIVEFENCE_FLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} DXGK_DESTROYNATIVEFENCE_FLAGS;
#define DDI_HAS_DXGK_DESTROYNATIVEFENCE_FLAGS 1

typedef struct _DXGKARG_DESTROYNATIVEFENCE {
    HANDLE                        hGlobalNativeFence;
    DXGK_DESTROYNATIVEFENCE_FLAGS Flags;
    BYTE                          Reserved[32];
} DXGKARG_DESTROYNATIVEFENCE;
#define DDI_HAS_DXGKARG_DESTROYNATIVEFENCE 1

typedef struct _DXGKARG_UPDATEMONITOREDVALUES_FLAGS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} DXGKARG_UPDATEMONITOREDVALUES_FLAGS;
#define DDI_HAS_DXGKARG_UPDATEMONITOREDVALUES_FLAGS 1

typedef struct _DXGKARG_UPDATEMONITOREDVALUES {
    HANDLE                             *NativeFenceArray;
    UINT64                             *UpdatedValueArray;
    VOID                              **MonitoredValueKernelCpuVa;
    UINT                                NumFences;
    DXGKARG_UPDATEMONITOREDVALUES_FLAGS Flags;
    BYTE                                Reserved[28];
} DXGKARG_UPDATEMONITOREDVALUES;
#define DDI_HAS_DXGKARG_UPDATEMONITOREDVALUES 1

typedef struct _DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS {
    union {
        struct {
            UINT AlwaysSignaled   : 1;
            UINT NotificationOnly : 1;
            UINT Reserved         : 30;
        };
        UINT Value;
    };
} DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS;
#define DDI_HAS_DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS 1

typedef struct _DXGKARG_UPDATECURRENTVALUESFROMCPU {
    HANDLE                               *NativeFenceArray;
    UINT64                               *UpdatedValueArray;
    VOID                                **CurrentValueKernelCpuVa;
    UINT                                  NumFences;
    DXGK_UPDATECURRENTVALUESFROMCPU_FLAGS Flags;
    BYTE                                  Reserved[28];
} DXGKARG_UPDATECURRENTVALUESFROMCPU;
#define DDI_HAS_DXGKARG_UPDATECURRENTVALUESFROMCPU 1

typedef struct _DXGK_NATIVE_FENCE_CAPS {
    UINT                   MonitoredValueStride;
    BOOLEAN                MapToGpuSystemProcess;
    D3DGPU_VIRTUAL_ADDRESS MinimumAddress;
    D3DGPU_VIRTUAL_ADDRESS MaximumAddress;
    BYTE                   Reserved[28];
} DXGK_NATIVE_FENCE_CAPS;
#define DDI_HAS_DXGK_NATIVE_FENCE_CAPS 1
#endif

/* ---- synchronization-object and signal flags (d3dukmdt) ----------------- */
/* The header spells the top bit of the sync-object flags
 * D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS_RESERVED0, a macro for Reserved0.
 * NtSecuritySharing and that bit follow the member pages (Windows 8); the
 * current header leaves both unguarded.  See DECISIONS.md. */
#if DDI_AT_LEAST(WIN7)
typedef struct _D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS {
    union {
        struct {
            UINT Shared                        : 1;
#if DDI_AT_LEAST(WIN8)
            UINT NtSecuritySharing             : 1;
#if DDI_AT_LEAST(WDDM1_3)
            UINT CrossAdapter                  : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT TopOfPipeline                 : 1;
            UINT NoSignal                      : 1;
            UINT NoWait                        : 1;
            UINT NoSignalMaxValueOnTdr         : 1;
            UINT NoGPUAccess                   : 1;
#if DDI_AT_LEAST(WDDM3_0)
            UINT SignalByKmd                   : 1;
#if DDI_AT_LEAST(WDDM3_1)
            UINT Unused                        : 1;
#if DDI_AT_LEAST(WDDM3_2)
            UINT UnwaitCpuWaitersOnlyOnDestroy : 1;
            UINT Reserved                      : 20;
#else
            UINT Reserved                      : 21;
#endif
#else
            UINT Reserved                      : 22;
#endif
#else
            UINT Reserved                      : 23;
#endif
#else
            UINT Reserved                      : 28;
#endif
#else
            UINT Reserved                      : 29;
#endif
            UINT Reserved0                     : 1;
#else
            UINT Reserved                      : 31;
#endif
        };
        UINT Value;
    };
} D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS;
#define DDI_HAS_D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS 1
#endif

typedef struct _D3DDDICB_SIGNALFLAGS {
    union {
        struct {
            UINT SignalAtSubmission         : 1;
#if DDI_AT_LEAST(WIN8)
            UINT EnqueueCpuEvent            : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT AllowFenceRewind           : 1;
            UINT Reserved                   : 28;
            UINT DXGK_SIGNAL_FLAG_INTERNAL0 : 1;
#else
            UINT Reserved                   : 30;
#endif
#else
            UINT Reserved                   : 31;
#endif
        };
        UINT Value;
    };
} D3DDDICB_SIGNALFLAGS;
#define DDI_HAS_D3DDDICB_SIGNALFLAGS 1


/* ---- adapter queries and driver capabilities (DxgkDdiQueryAdapterInfo) -- */
/* Guards follow the header's #if groups where a published header shows
 * them, the member pages otherwise; see DECISIONS.md ("DxgkDdiQueryAdapterInfo
 * and DXGK_DRIVERCAPS").  Enumerator guards do not change any layout. */
typedef enum _DXGK_QUERYADAPTERINFOTYPE {
    DXGKQAITYPE_UMDRIVERPRIVATE               = 0,
    DXGKQAITYPE_DRIVERCAPS                    = 1,
    DXGKQAITYPE_QUERYSEGMENT                  = 2,
#if DDI_AT_LEAST(WIN7)
    DXGKQAITYPE_RESERVED                      = 3,
    DXGKQAITYPE_QUERYSEGMENT2                 = 4,
#endif
#if DDI_AT_LEAST(WIN8)
    DXGKQAITYPE_QUERYSEGMENT3                 = 5,
    DXGKQAITYPE_NUMPOWERCOMPONENTS            = 6,
    DXGKQAITYPE_POWERCOMPONENTINFO            = 7,
    DXGKQAITYPE_PREFERREDGPUNODE              = 8,
#endif
#if DDI_AT_LEAST(WDDM1_3)
    DXGKQAITYPE_POWERCOMPONENTPSTATEINFO      = 9,
    DXGKQAITYPE_HISTORYBUFFERPRECISION        = 10,
#endif
#if DDI_AT_LEAST(WDDM2_0)
    DXGKQAITYPE_QUERYSEGMENT4                 = 11,
    DXGKQAITYPE_SEGMENTMEMORYSTATE            = 12,
    DXGKQAITYPE_GPUMMUCAPS                    = 13,
    DXGKQAITYPE_PAGETABLELEVELDESC            = 14,
    DXGKQAITYPE_PHYSICALADAPTERCAPS           = 15,
    DXGKQAITYPE_DISPLAY_DRIVERCAPS_EXTENSION  = 16,
#endif
#if DDI_AT_LEAST(WDDM2_2)
    DXGKQAITYPE_INTEGRATED_DISPLAY_DESCRIPTOR = 17,
    DXGKQAITYPE_UEFIFRAMEBUFFERRANGES         = 18,
    DXGKQAITYPE_QUERYCOLORIMETRYOVERRIDES     = 19,
#endif
#if DDI_AT_LEAST(WDDM2_3)
    DXGKQAITYPE_DISPLAYID_DESCRIPTOR          = 20,
#endif
#if DDI_AT_LEAST(WDDM2_4)
    DXGKQAITYPE_FRAMEBUFFERSAVESIZE           = 21,
    DXGKQAITYPE_HARDWARERESERVEDRANGES        = 22,
    DXGKQAITYPE_INTEGRATED_DISPLAY_DESCRIPTOR2 = 23,
    DXGKQAITYPE_NODEPERFDATA                  = 24,
    DXGKQAITYPE_ADAPTERPERFDATA               = 25,
    DXGKQAITYPE_ADAPTERPERFDATA_CAPS          = 26,
    DXGKQAITYPE_GPUVERSION                    = 27,
#endif
#if DDI_AT_LEAST(WDDM2_5)
    DXGKQAITYPE_DEVICE_TYPE_CAPS              = 28,
#endif
#if DDI_AT_LEAST(WDDM2_6)
    DXGKQAITYPE_WDDMDEVICECAPS                = 29,
    DXGKQAITYPE_GPUPCAPS                      = 30,
    DXGKQAITYPE_QUERYTARGETGAMMACAPS          = 31,
    DXGKQAITYPE_SCANOUT_CAPS                  = 33,
#endif
#if DDI_AT_LEAST(WDDM2_9)
    DXGKQAITYPE_PHYSICAL_MEMORY_CAPS          = 34,
    DXGKQAITYPE_IOMMU_CAPS                    = 35,
#endif
#if DDI_AT_LEAST(WDDM3_1)
    DXGKQAITYPE_HARDWARERESERVEDRANGES2       = 36,
    DXGKQAITYPE_NATIVE_FENCE_CAPS             = 37,
    DXGKQAITYPE_USERMODESUBMISSION_CAPS       = 38,
#endif
#if DDI_AT_LEAST(WDDM3_2)
    DXGKQAITYPE_DIRTYBITTRACKINGCAPS          = 39,
    DXGKQAITYPE_DIRTYBITTRACKINGSEGMENTCAPS   = 40,
    DXGKQAITYPE_SCATTER_RESERVE               = 41,
    DXGKQAITYPE_QUERYPAGINGBUFFERINFO         = 42,
    DXGKQAITYPE_QUERYSEGMENTCOUNT             = 43,
    DXGKQAITYPE_QUERYSEGMENT5                 = 44,
    DXGKQAITYPE_QUERYMMUCOUNT                 = 45,
    DXGKQAITYPE_QUERYMMUS                     = 46,
    DXGKQAITYPE_64BITONLYCAPS                 = 47,
    DXGKQAITYPE_PAGINGPROCESSGPUVASIZE        = 48,
#endif
} DXGK_QUERYADAPTERINFOTYPE;
#define DDI_HAS_DXGK_QUERYADAPTERINFOTYPE 1

#if DDI_AT_LEAST(WDDM2_2)
typedef struct _DXGK_QUERYADAPTERINFOFLAGS {
    union {
        struct {
            UINT VirtualMachineData   : 1;
#if DDI_AT_LEAST(WDDM2_4)
            UINT SecureVirtualMachine : 1;
            UINT Reserved             : 30;
#else
            UINT Reserved             : 31;
#endif
        };
        UINT Value;
    };
} DXGK_QUERYADAPTERINFOFLAGS;
#define DDI_HAS_DXGK_QUERYADAPTERINFOFLAGS 1
#endif

typedef struct _DXGKARG_QUERYADAPTERINFO {
    DXGK_QUERYADAPTERINFOTYPE  Type;
    VOID                      *pInputData;
    UINT                       InputDataSize;
    VOID                      *pOutputData;
    UINT                       OutputDataSize;
#if DDI_AT_LEAST(WDDM2_2)
    DXGK_QUERYADAPTERINFOFLAGS Flags;
#endif
#if DDI_AT_LEAST(WDDM2_4)
    HANDLE                     hKmdProcessHandle;
#endif
} DXGKARG_QUERYADAPTERINFO;
#define DDI_HAS_DXGKARG_QUERYADAPTERINFO 1

typedef struct _DXGK_POINTERFLAGS {
    union {
        struct {
            UINT Monochrome  : 1;
            UINT Color       : 1;
            UINT MaskedColor : 1;
            UINT Reserved    : 29;
        };
        UINT Value;
    };
} DXGK_POINTERFLAGS;
#define DDI_HAS_DXGK_POINTERFLAGS 1

typedef struct _DXGK_GAMMARAMPCAPS {
    union {
        struct {
            UINT Gamma_Rgb256x3x16 : 1;
            UINT Reserved          : 31;
        };
        UINT Value;
    };
} DXGK_GAMMARAMPCAPS;
#define DDI_HAS_DXGK_GAMMARAMPCAPS 1

#if DDI_AT_LEAST(WDDM2_2)
typedef struct _DXGK_COLORTRANSFORMCAPS {
    union {
        struct {
            UINT Gamma_Rgb256x3x16             : 1;
            UINT Gamma_Dxgi1                   : 1;
#if DDI_AT_LEAST(WDDM2_3)
            UINT Transform_3x4Matrix           : 1;
            UINT Transform_3x4Matrix_WideColor : 1;
            UINT Transform_3x4Matrix_HighColor : 1;
#if DDI_AT_LEAST(WDDM2_6)
            UINT Transform_Matrix_V2           : 1;
            UINT Reserved                      : 26;
#else
            UINT Reserved                      : 27;
#endif
#else
            UINT Reserved                      : 30;
#endif
        };
        UINT Value;
    };
} DXGK_COLORTRANSFORMCAPS;
#define DDI_HAS_DXGK_COLORTRANSFORMCAPS 1
#endif

/* The Vista header has the two screen-blt bits only; the GDI hardware
 * acceleration bits are Windows 7 (unguarded in later headers). */
typedef struct _DXGK_PRESENTATIONCAPS {
    union {
        struct {
            UINT NoScreenToScreenBlt              : 1;
            UINT NoOverlapScreenBlt               : 1;
#if DDI_AT_LEAST(WIN7)
            UINT SupportKernelModeCommandBuffer   : 1;
            UINT NoSameBitmapAlphaBlend           : 1;
            UINT NoSameBitmapStretchBlt           : 1;
            UINT NoSameBitmapTransparentBlt       : 1;
            UINT NoSameBitmapOverlappedAlphaBlend : 1;
            UINT NoSameBitmapOverlappedStretchBlt : 1;
            UINT DriverSupportsCddDwmInterop      : 1;
            UINT Reserved0                        : 1;
            UINT AlignmentShift                   : 4;
            UINT MaxTextureWidthShift             : 3;
            UINT MaxTextureHeightShift            : 3;
            UINT SupportAllBltRops                : 1;
            UINT SupportMirrorStretchBlt          : 1;
            UINT SupportMonoStretchBltModes       : 1;
            UINT StagingRectStartPitchAligned     : 1;
            UINT NoSameBitmapBitBlt               : 1;
            UINT NoSameBitmapOverlappedBitBlt     : 1;
            UINT Reserved1                        : 1;
            UINT NoTempSurfaceForClearTypeBlend   : 1;
#if DDI_AT_LEAST(WIN8)
            UINT SupportSoftwareDeviceBitmaps     : 1;
            UINT NoCacheCoherentApertureMemory    : 1;
            UINT SupportLinearHeap                : 1;
            UINT Reserved                         : 1;
#else
            UINT Reserved                         : 4;
#endif
#else
            UINT Reserved                         : 30;
#endif
        };
        UINT Value;
    };
} DXGK_PRESENTATIONCAPS;
#define DDI_HAS_DXGK_PRESENTATIONCAPS 1

typedef struct _DXGK_FLIPCAPS {
    union {
        struct {
            UINT FlipOnVSyncWithNoWait : 1;
            UINT FlipOnVSyncMmIo       : 1;
            UINT FlipInterval          : 1;
            UINT FlipImmediateMmIo     : 1;
#if DDI_AT_LEAST(WDDM1_3)
            UINT FlipIndependent       : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT DdiPresentForIFlip    : 1;
            UINT FlipImmediateOnHSync  : 1;
            UINT Reserved              : 25;
#else
            UINT Reserved              : 27;
#endif
#else
            UINT Reserved              : 28;
#endif
        };
        UINT Value;
    };
} DXGK_FLIPCAPS;
#define DDI_HAS_DXGK_FLIPCAPS 1

/* SectionBackedPrimary: Windows 8 (member page; the Windows 7 header ends
 * its group at PagingEngineCanSwizzle with Reserved:29). */
typedef struct _DXGK_VIDMMCAPS {
    union {
        struct {
            UINT OutOfOrderLock              : 1;
#if DDI_AT_LEAST(WIN7)
            UINT DedicatedPagingEngine       : 1;
            UINT PagingEngineCanSwizzle      : 1;
#if DDI_AT_LEAST(WIN8)
            UINT SectionBackedPrimary        : 1;
#if DDI_AT_LEAST(WDDM1_3)
            UINT CrossAdapterResource        : 1;
#if DDI_AT_LEAST(WDDM2_0)
            UINT VirtualAddressingSupported  : 1;
            UINT GpuMmuSupported             : 1;
            UINT IoMmuSupported              : 1;
            UINT ReplicateGdiContent         : 1;
            UINT NonCpuVisiblePrimary        : 1;
#if DDI_AT_LEAST(WDDM2_2)
            UINT ParavirtualizationSupported : 1;
#if DDI_AT_LEAST(WDDM2_4)
            UINT IoMmuSecureModeSupported    : 1;
            UINT DisableSelfRefreshVRAMInS3  : 1;
#if DDI_AT_LEAST(WDDM2_7)
            UINT IoMmuSecureModeRequired     : 1;
#if DDI_AT_LEAST(WDDM2_9)
            UINT MapAperture2Supported       : 1;
            UINT CrossAdapterResourceTexture : 1;
            UINT CrossAdapterResourceScanout : 1;
#if DDI_AT_LEAST(WDDM3_1)
            UINT AlwaysPoweredVRAM           : 1;
            UINT Reserved                    : 14;
#else
            UINT Reserved                    : 15;
#endif
#else
            UINT Reserved                    : 18;
#endif
#else
            UINT Reserved                    : 19;
#endif
#else
            UINT Reserved                    : 21;
#endif
#else
            UINT Reserved                    : 22;
#endif
#else
            UINT Reserved                    : 27;
#endif
#else
            UINT Reserved                    : 28;
#endif
#else
            UINT Reserved                    : 29;
#endif
#else
            UINT Reserved                    : 31;
#endif
        };
        UINT Value;
    };
    UINT PagingNode;
} DXGK_VIDMMCAPS;
#define DDI_HAS_DXGK_VIDMMCAPS 1

/* Windows 7 placeholders, named DXGK_VIRTUALADDRESSCAPS / DXGK_DMABUFFERCAPS
 * there (PresentDmaBuffer.Reserved1 was AllocationGroup); declared with the
 * current names at every version. */
#if DDI_AT_LEAST(WIN7)
typedef struct _DXGK_VIRTUALADDRESSCAPS_DEPRECATED {
    union {
        struct {
            UINT PrivilegedMemorySupported : 1;
            UINT ReadOnlyMemorySupported   : 1;
            UINT Reserved                  : 30;
        };
        UINT Value;
    };
    UINT VirtualAddressBitCount;
    UINT PageTableCoverageBitCount;
    UINT PageDirectoryEntrySize;
    UINT PageDirectorySegment;
    UINT PageTableSegment;
    UINT IdealGPUPageSize;
} DXGK_VIRTUALADDRESSCAPS_DEPRECATED;
#define DDI_HAS_DXGK_VIRTUALADDRESSCAPS_DEPRECATED 1

typedef struct _DXGK_DMABUFFERCAPS_DEPRECATED {
    struct {
        UINT Size;
        UINT PrivateDriverDataSize;
        UINT SegmentId;
        UINT Reserved1;
        UINT Reserved[16];
    } PresentDmaBuffer;
    struct {
        UINT Size;
        UINT PrivateDriverDataSize;
        UINT SegmentId;
        UINT Reserved1;
        UINT Reserved[16];
    } PagingDmaBuffer;
} DXGK_DMABUFFERCAPS_DEPRECATED;
#define DDI_HAS_DXGK_DMABUFFERCAPS_DEPRECATED 1

typedef enum _DXGK_WDDMVERSION {
    DXGKDDI_WDDMv1     = 0x1000,
    DXGKDDI_WDDMv2     = 0x2000,
#if DDI_AT_LEAST(WIN8)
    DXGKDDI_WDDMv1_2   = 0x1200,
#endif
#if DDI_AT_LEAST(WDDM1_3)
    DXGKDDI_WDDMv1_3   = 0x1300,
#endif
#if DDI_AT_LEAST(WDDM2_1)
    DXGKDDI_WDDMv2_1   = 0x2100,
    DXGKDDI_WDDMv2_1_5 = 0x2105,
    DXGKDDI_WDDMv2_1_6 = 0x2106,
#endif
#if DDI_AT_LEAST(WDDM2_2)
    DXGKDDI_WDDMv2_2   = 0x2200,
#endif
#if DDI_AT_LEAST(WDDM2_3)
    DXGKDDI_WDDMv2_3   = 0x2300,
#endif
#if DDI_AT_LEAST(WDDM2_4)
    DXGKDDI_WDDMv2_4   = 0x2400,
#endif
#if DDI_AT_LEAST(WDDM2_5)
    DXGKDDI_WDDMv2_5   = 0x2500,
#endif
#if DDI_AT_LEAST(WDDM2_6)
    DXGKDDI_WDDMv2_6   = 0x2600,
#endif
#if DDI_AT_LEAST(WDDM2_7)
    DXGKDDI_WDDMv2_7   = 0x2700,
#endif
#if DDI_AT_LEAST(WDDM2_8)
    DXGKDDI_WDDMv2_8   = 0x2800,
#endif
#if DDI_AT_LEAST(WDDM2_9)
    DXGKDDI_WDDMv2_9   = 0x2900,
#endif
#if DDI_AT_LEAST(WDDM3_0)
    DXGKDDI_WDDMv3_0   = 0x3000,
#endif
#if DDI_AT_LEAST(WDDM3_1)
    DXGKDDI_WDDMv3_1   = 0x3100,
#endif
#if DDI_AT_LEAST(WDDM3_2)
    DXGKDDI_WDDMv3_2   = 0x3200,
#endif
} DXGK_WDDMVERSION;
#define DDI_HAS_DXGK_WDDMVERSION 1
#endif

/* d3dkmdt.h */
#if DDI_AT_LEAST(WIN8)
typedef enum _D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY {
    D3DKMDT_GRAPHICS_PREEMPTION_NONE                = 0,
    D3DKMDT_GRAPHICS_PREEMPTION_DMA_BUFFER_BOUNDARY = 100,
    D3DKMDT_GRAPHICS_PREEMPTION_PRIMITIVE_BOUNDARY  = 200,
    D3DKMDT_GRAPHICS_PREEMPTION_TRIANGLE_BOUNDARY   = 300,
    D3DKMDT_GRAPHICS_PREEMPTION_PIXEL_BOUNDARY      = 400,
    D3DKMDT_GRAPHICS_PREEMPTION_SHADER_BOUNDARY     = 500
} D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY;
#define DDI_HAS_D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY 1

typedef enum _D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY {
    D3DKMDT_COMPUTE_PREEMPTION_NONE                  = 0,
    D3DKMDT_COMPUTE_PREEMPTION_DMA_BUFFER_BOUNDARY   = 100,
    D3DKMDT_COMPUTE_PREEMPTION_DISPATCH_BOUNDARY     = 200,
    D3DKMDT_COMPUTE_PREEMPTION_THREAD_GROUP_BOUNDARY = 300,
    D3DKMDT_COMPUTE_PREEMPTION_THREAD_BOUNDARY       = 400,
    D3DKMDT_COMPUTE_PREEMPTION_SHADER_BOUNDARY       = 500
} D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY;
#define DDI_HAS_D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY 1

typedef struct _D3DKMDT_PREEMPTION_CAPS {
    D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY GraphicsPreemptionGranularity;
    D3DKMDT_COMPUTE_PREEMPTION_GRANULARITY  ComputePreemptionGranularity;
} D3DKMDT_PREEMPTION_CAPS;
#define DDI_HAS_D3DKMDT_PREEMPTION_CAPS 1
#endif

#if DDI_AT_LEAST(WDDM2_9)
typedef struct _DXGK_HWQUEUEDFLIP_CAPS {
    union {
        struct {
            UINT Reserved : 32;
        };
        UINT Value;
    };
} DXGK_HWQUEUEDFLIP_CAPS;
#define DDI_HAS_DXGK_HWQUEUEDFLIP_CAPS 1
#endif

typedef struct _DXGK_DRIVERCAPS {
    PHYSICAL_ADDRESS       HighestAcceptableAddress;
    UINT                   MaxAllocationListSlotId;
    SIZE_T                 ApertureSegmentCommitLimit;
    UINT                   MaxPointerWidth;
    UINT                   MaxPointerHeight;
    DXGK_POINTERFLAGS      PointerCaps;
    UINT                   InterruptMessageNumber;
    UINT                   NumberOfSwizzlingRanges;
    UINT                   MaxOverlays;
    union {
        DXGK_GAMMARAMPCAPS      GammaRampCaps;
#if DDI_AT_LEAST(WDDM2_2)
        DXGK_COLORTRANSFORMCAPS ColorTransformCaps;
#endif
    };
    DXGK_PRESENTATIONCAPS  PresentationCaps;
    UINT                   MaxQueuedFlipOnVSync;
    DXGK_FLIPCAPS          FlipCaps;
    DXGK_VIDSCHCAPS        SchedulingCaps;
    DXGK_VIDMMCAPS         MemoryManagementCaps;
    DXGK_GPUENGINETOPOLOGY GpuEngineTopology;
#if DDI_AT_LEAST(WIN7)
    DXGK_WDDMVERSION                   WDDMVersion;
    DXGK_VIRTUALADDRESSCAPS_DEPRECATED Reserved;
    DXGK_DMABUFFERCAPS_DEPRECATED      Reserved1;
#endif
#if DDI_AT_LEAST(WIN8)
    D3DKMDT_PREEMPTION_CAPS PreemptionCaps;
    BOOLEAN                 SupportNonVGA;
    BOOLEAN                 SupportSmoothRotation;
    BOOLEAN                 SupportPerEngineTDR;
    BOOLEAN                 SupportDirectFlip;
    BOOLEAN                 SupportMultiPlaneOverlay;
    BOOLEAN                 SupportRuntimePowerManagement;
    BOOLEAN                 SupportSurpriseRemovalInHibernation;
#endif
#if DDI_AT_LEAST(WDDM1_3)
    BOOLEAN                 HybridDiscrete;
    UINT                    MaxOverlayPlanes;
#endif
#if DDI_AT_LEAST(WDDM2_0)
    BOOLEAN                 HybridIntegrated;
    D3DGPU_VIRTUAL_ADDRESS  InternalGpuVirtualAddressRangeStart;
    D3DGPU_VIRTUAL_ADDRESS  InternalGpuVirtualAddressRangeEnd;
    BOOLEAN                 SupportSurpriseRemoval;
#endif
#if DDI_AT_LEAST(WDDM2_1)
    BOOLEAN                 SupportMultiPlaneOverlayImmediateFlip;
    BOOLEAN                 CursorScaledWithMultiPlaneOverlayPlane0;
    BOOLEAN                 HybridAcpiChainingRequired;
    UINT                    MaxQueuedMultiPlaneOverlayFlipVSync;
#endif
#if DDI_AT_LEAST(WDDM2_4)
    union {
        struct {
            UINT SupportContextlessPresent                         : 1;
            UINT Detachable                                        : 1;
#if DDI_AT_LEAST(WDDM2_5)
            UINT VirtualGpuOnly                                    : 1;
#if DDI_AT_LEAST(WDDM2_6)
            UINT ComputeOnly                                       : 1;
#if DDI_AT_LEAST(WDDM2_7)
            UINT IndependentVidPnVSyncControl                      : 1;
#if DDI_AT_LEAST(WDDM2_8)
            UINT NoHybridDiscreteDListDllSupport                   : 1;
#if DDI_AT_LEAST(WDDM3_0)
            UINT DisplayableSupport                                : 1;
#if DDI_AT_LEAST(WDDM3_2)
            UINT NoHybridDiscreteDListDllMuxSupport                : 1;
            UINT CursorDoesNotSupportXorBlendWithMultiPlaneOverlay : 1;
            UINT Reserved                                          : 23;
#else
            UINT Reserved                                          : 25;
#endif
#else
            UINT Reserved                                          : 26;
#endif
#else
            UINT Reserved                                          : 27;
#endif
#else
            UINT Reserved                                          : 28;
#endif
#else
            UINT Reserved                                          : 29;
#endif
#else
            UINT Reserved                                          : 30;
#endif
        };
        UINT Value;
    } MiscCaps;
#endif
#if DDI_AT_LEAST(WDDM2_9)
    UINT                    MaxHwQueuedFlips;
    DXGK_HWQUEUEDFLIP_CAPS  HwQueuedFlipCaps;
#endif
} DXGK_DRIVERCAPS;
#define DDI_HAS_DXGK_DRIVERCAPS 1

/* ---- segment queries (DXGKQAITYPE_QUERYSEGMENT, QUERYSEGMENT3) ---------- */
typedef struct _DXGK_QUERYSEGMENTIN {
    PHYSICAL_ADDRESS  AgpApertureBase;
    LARGE_INTEGER     AgpApertureSize;
    DXGK_SEGMENTFLAGS AgpFlags;
} DXGK_QUERYSEGMENTIN;
#define DDI_HAS_DXGK_QUERYSEGMENTIN 1

typedef struct _DXGK_QUERYSEGMENTOUT {
    UINT                    NbSegment;
    DXGK_SEGMENTDESCRIPTOR *pSegmentDescriptor;
    UINT                    PagingBufferSegmentId;
    UINT                    PagingBufferSize;
    UINT                    PagingBufferPrivateDataSize;
} DXGK_QUERYSEGMENTOUT;
#define DDI_HAS_DXGK_QUERYSEGMENTOUT 1

#if DDI_AT_LEAST(WIN8)
typedef struct _DXGK_SEGMENTDESCRIPTOR3 {
    DXGK_SEGMENTFLAGS Flags;
    PHYSICAL_ADDRESS  BaseAddress;
    PHYSICAL_ADDRESS  CpuTranslatedAddress;
    SIZE_T            Size;
    UINT              NbOfBanks;
    SIZE_T           *pBankRangeTable;
    SIZE_T            CommitLimit;
    SIZE_T            SystemMemoryEndAddress;
    SIZE_T            Reserved;
} DXGK_SEGMENTDESCRIPTOR3;
#define DDI_HAS_DXGK_SEGMENTDESCRIPTOR3 1

typedef struct _DXGK_QUERYSEGMENTOUT3 {
    UINT                     NbSegment;
    DXGK_SEGMENTDESCRIPTOR3 *pSegmentDescriptor;
    UINT                     PagingBufferSegmentId;
    UINT                     PagingBufferSize;
    UINT                     PagingBufferPrivateDataSize;
} DXGK_QUERYSEGMENTOUT3;
#define DDI_HAS_DXGK_QUERYSEGMENTOUT3 1
#endif

#endif /* WDDMSIM_DDI_DECLS_H */
