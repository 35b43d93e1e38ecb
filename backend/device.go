package backend

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ggml-wgpu/ggml-wgpu/exec"
	"github.com/ggml-wgpu/ggml-wgpu/gpu"
	"github.com/ggml-wgpu/ggml-wgpu/ops"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/ggml-wgpu/ggml-wgpu/wgsl"
)

// Device types, as ggml numbers them.
const (
	DevTypeGPU  = 1
	DevTypeIGPU = 2
)

// Environment variables of the device.
const (
	// EnvMemory overrides the memory a device reports, in MiB, and caps what its buffers
	// may hold together.
	EnvMemory = "GGML_WGPU_MEMORY_MB"
	// EnvMatVecRows and EnvMatVecWG override the vectorised mat-vec kernel's rows per
	// workgroup and workgroup size (for tuning).
	EnvMatVecRows = "GGML_WGPU_MATVEC_ROWS"
	EnvMatVecWG   = "GGML_WGPU_MATVEC_WG"
	// EnvMatVecUnits=0 turns off the mat-vec kernel's unit reads of quantized weights
	// (ops.Limits.MatVecNoUnits), for comparisons.
	EnvMatVecUnits = "GGML_WGPU_MATVEC_UNITS"
	// EnvSwar=0 turns off the integer mat-vec of 4-bit and Q6_K weights (ops.Limits.SwarOff),
	// EnvSwarRows and EnvSwarWG override its rows per workgroup and workgroup size, and
	// EnvSwarMin the fewest weights of a product that takes it (temporary: for
	// comparisons and tuning).
	EnvSwar     = "GGML_WGPU_SWAR"
	EnvSwarRows = "GGML_WGPU_SWAR_ROWS"
	EnvSwarWG   = "GGML_WGPU_SWAR_WG"
	EnvSwarMin  = "GGML_WGPU_SWAR_MIN"
	// EnvSwarCols caps the src1 columns the integer mat-vec takes (ops.Limits.SwarCols; 1:
	// one column only), EnvSwarColsMin the fewest weights of a product of several columns
	// that takes it (ops.Limits.SwarColsMin), for comparisons and tuning.
	EnvSwarCols    = "GGML_WGPU_SWAR_COLS"
	EnvSwarColsMin = "GGML_WGPU_SWAR_COLS_MIN"
	// EnvSwarXQ=1 makes every single product of one column on the integer mat-vec take its
	// XQ form (ops.Limits.SwarXQ), for comparisons and tests.
	EnvSwarXQ = "GGML_WGPU_SWAR_XQ"
	// EnvQ4KWide=0 keeps Q4_K products off the mat-vec with 16-byte weight loads (for
	// comparisons).
	EnvQ4KWide = "GGML_WGPU_Q4K_WIDE"
	// EnvNormXQ=0 keeps norms from quantizing their result for the integer mat-vec after
	// them (ops.Limits.NormXQOff: the fusion rows add+norm+mul+gate and add+norm+mul+qkv),
	// for comparisons.
	EnvNormXQ = "GGML_WGPU_NORM_XQ"
	// EnvFAXQ=0 keeps split flash attention from quantizing its result for the integer
	// mat-vec after it (ops.Limits.FAXQOff: the fusion row flash_attn+view+mul_mat), for
	// comparisons.
	EnvFAXQ = "GGML_WGPU_FA_XQ"
	// EnvFARows bounds the query rows of a decoding flash attention workgroup and
	// EnvFAGroups sets the workgroups its KV splits aim for (ops.Limits.FADecodeRows,
	// FATargetGroups), for comparisons.
	EnvFARows   = "GGML_WGPU_FA_ROWS"
	EnvFAGroups = "GGML_WGPU_FA_GROUPS"
	// EnvRopeKV=0 keeps the ROPEs and the KV store out of the Q, K and V products before
	// them (ops.Limits.RopeKVOff: the fusion row add+norm+mul+qkv+rope+set_rows), for
	// comparisons.
	EnvRopeKV = "GGML_WGPU_ROPE_KV"
	// EnvSwarXQRows overrides the fewest rows of a single product on the XQ form
	// (ops.Limits.SwarXQMinRows), for comparisons.
	EnvSwarXQRows = "GGML_WGPU_SWAR_XQ_ROWS"
	// EnvMatMulti=0 turns off the fusion of several products of one activation
	// (ops.Limits.MatMultiOff), for comparisons.
	EnvMatMulti = "GGML_WGPU_MULTI"
	// EnvQ6K=0 turns off the Q6_K mat-vec (ops.Limits.Q6KOff), EnvQ6KRows and EnvQ6KWG
	// override its rows per workgroup and workgroup size (temporary: for comparisons and
	// tuning).
	EnvQ6K     = "GGML_WGPU_Q6K"
	EnvQ6KRows = "GGML_WGPU_Q6K_ROWS"
	EnvQ6KWG   = "GGML_WGPU_Q6K_WG"
	// EnvQ6KPairs=0 keeps the Q6_K mat-vec from taking blocks a pair at a time
	// (ops.Limits.Q6KPairsOff), and EnvQ6KPairsMin overrides the fewest weights of a
	// matrix that takes them so (ops.Limits.Q6KPairsMin), for comparisons and tests.
	EnvQ6KPairs    = "GGML_WGPU_Q6K_PAIRS"
	EnvQ6KPairsMin = "GGML_WGPU_Q6K_PAIRS_MIN"
	// EnvBigGroups, set, makes the prompt kernel split K to reach that many workgroups
	// (ops.Limits.BigGroups; 256 is the rule for devices whose multiprocessors are not
	// known) instead of by waves, and EnvComputeUnits overrides the multiprocessor count
	// those waves are reckoned on (ops.Limits.ComputeUnits; 0 or unset: the device's,
	// where Vulkan tells it). Temporary: for comparisons, tuning and tests.
	EnvBigGroups    = "GGML_WGPU_BIG_GROUPS"
	EnvComputeUnits = "GGML_WGPU_COMPUTE_UNITS"
	// EnvQ6KHold sets the columns whose activations the Q6_K mat-vec's several-column
	// kernel holds at a time (1 to 8; 0: every column's, read first), for comparisons
	// (ops.Limits.Q6KHold; temporary).
	EnvQ6KHold = "GGML_WGPU_Q6K_HOLD"
	// EnvGateTail=0 leaves the down product to quantize its own column
	// (ops.Limits.GateTailOff), for comparisons.
	EnvGateTail = "GGML_WGPU_GATE_TAIL"
	// EnvGateTailGroups and EnvGateTailRows replace the most workgroups and the fewest
	// rows a workgroup of the gate forms that quantize the down product's column
	// (ops.Limits.GateTailGroups, GateTailRows). Temporary: for comparisons.
	EnvGateTailGroups = "GGML_WGPU_GATE_TAIL_GROUPS"
	EnvGateTailRows   = "GGML_WGPU_GATE_TAIL_ROWS"
	// EnvQKVCols lets the fusion row add+norm+mul+qkv take up to this many columns
	// (tokens; ops.Limits.QKVCols) where it takes one by default, for comparisons.
	EnvQKVCols = "GGML_WGPU_QKV_COLS"
	// EnvSpecialize chooses which graphs take pipelines with their dispatches' parameters
	// built in (specialize.go): unset, decode steps' graphs on a hardware adapter;
	// "decode", decode steps' graphs on any adapter; "0" none; "all" every graph (for tests
	// and comparisons).
	EnvSpecialize = "GGML_WGPU_SPECIALIZE"
	// EnvPrewake=0 keeps a hardware adapter's waits for the logits from waking the threads
	// that copy them ahead of the copy (prewakeLead), for comparisons.
	EnvPrewake = "GGML_WGPU_PREWAKE"
	// EnvQ6KXQRows overrides the fewest rows of a single Q6_K product (the output heads)
	// that the integer mat-vec takes on XQ (ops.Limits.Q6KXQMinRows), for comparisons.
	EnvQ6KXQRows = "GGML_WGPU_Q6K_XQ_ROWS"
	// EnvQ6KCols overrides the most src1 columns the Q6_K mat-vec takes
	// (ops.Limits.Q6KCols: 1 to 8), for comparisons.
	EnvQ6KCols = "GGML_WGPU_Q6K_COLS"
	// EnvQ6KSwarCols and EnvQ6KSwarMinCols override the most and the fewest src1 columns
	// of a Q6_K product that the integer mat-vec's Q6K form takes
	// (ops.Limits.Q6KSwarCols, Q6KSwarMinCols; 1 as the most: none), for comparisons and
	// tests.
	EnvQ6KSwarCols    = "GGML_WGPU_Q6K_SWAR_COLS"
	EnvQ6KSwarMinCols = "GGML_WGPU_Q6K_SWAR_MIN_COLS"
	// EnvReadOnly=0 binds every operand read_write, as before read-only bindings of weights
	// (backend.readOnlyOperands), for comparisons.
	EnvReadOnly = "GGML_WGPU_READONLY"
	// EnvDequantPrompt=0 makes the prompt kernel read quantized weights directly instead of
	// from F16 chunks dequantized first (ops.Limits.DequantPromptOff), for comparisons.
	EnvDequantPrompt = "GGML_WGPU_DEQUANT_PROMPT"
	// EnvDequantChunkKB caps, in KiB, the F16 rows of one dequantized weight chunk
	// (ops.Limits.DequantChunkBytes; default 32 MiB).
	EnvDequantChunkKB = "GGML_WGPU_DEQUANT_CHUNK_KB"
	// EnvMoEMatVecTokens overrides the most tokens of a MUL_MAT_ID that take the mat-vec
	// (ops.Limits.MulMatIDMaxTokens), and EnvMoEGrouped=1 keeps more tokens on the grouped
	// tiled kernel instead of the routed prompt kernel (ops.Limits.MulMatIDGrouped), for
	// comparisons and tests.
	EnvMoEMatVecTokens = "GGML_WGPU_MOE_MATVEC_TOKENS"
	EnvMoEGrouped      = "GGML_WGPU_MOE_GROUPED"
	// EnvMoECols overrides the routed prompt kernel's columns per workgroup
	// (ops.Limits.MulMatIDCols: 32, 64 or 128), for comparisons.
	EnvMoECols = "GGML_WGPU_MOE_COLS"
	// EnvAblate, a regular expression, makes every dispatch whose node name and kernel
	// ("ffn_out mul_mat_vec_q4") it matches run one workgroup only: results are wrong, and
	// the time a model's tokens lose with a kernel at full size is what that kernel costs
	// beyond a dependent dispatch of one workgroup, inside the graph (for profiling).
	EnvAblate = "GGML_WGPU_ABLATE"
	// EnvSkip, a regular expression over the same names, leaves every matching dispatch
	// out of the graphs planned: results are wrong, and what a model's tokens gain is the
	// whole cost of those dispatches, their place in the chain of dependent dispatches
	// included (for profiling).
	EnvSkip = "GGML_WGPU_SKIP"
)

// envInt reads a positive integer variable (0 when unset or invalid).
func envInt(name string) int {
	v, err := strconv.Atoi(os.Getenv(name))
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// paramSlots is the number of slots in each device's parameter arena.
const paramSlots = 4096

// Device is one WebGPU adapter exposed as a ggml device. The logical WebGPU device is
// opened on first use; every GPU operation holds mu.
type Device struct {
	Index       int
	Name        string // "WGPU0", ...
	Description string
	Type        int // DevTypeGPU or DevTypeIGPU
	adapter     *gpu.Adapter
	// software: a CPU driver (lavapipe), whose submissions are kept short; a graph
	// recorded ahead is then submitted in parts (exec.Recording).
	software bool

	mu        sync.Mutex
	openErr   error
	gpu       *gpu.Device
	exe       *exec.Executor
	buffers   map[uint64]*Buffer
	allocated uint64
	// readNS sums the nanoseconds Buffer.Read took (the profile's reads between graphs).
	readNS atomic.Int64
	reads  atomic.Int64 // Buffer.Read calls
	// writeNS sums the nanoseconds Buffer.Write took (the profile's writes between graphs).
	writeNS atomic.Int64
	scratch scratchMem  // memory of scratch operands (ops.ScratchBuffer)
	tables  *gpu.Buffer // the formats' lookup tables (ensureTables), once needed
	// counters is the atomic counters' buffer (ensureCounters), once needed.
	counters *gpu.Buffer

	memMu             sync.Mutex // guards the cached Vulkan memory reading
	memAt             time.Time
	memFree, memTotal uint64
	memOK             bool

	pciOnce sync.Once // the PCI bus location, read once
	pciID   string

	unitsOnce sync.Once // the multiprocessor count, read once
	units     uint32

	limitsOnce sync.Once // the limits and the environment's settings, read once (Limits)
	limits     ops.Limits

	// readWriteOnly: every operand is bound read_write (EnvReadOnly=0), for comparisons.
	readWriteOnly bool
	// specialize says when dispatches take pipelines with their parameters built in
	// (EnvSpecialize, specialize.go); specialPipes counts the pipelines so compiled,
	// specialFailed the dispatches whose one failed to compile (they took the uniform one).
	specialize    specializeMode
	specialPipes  int
	specialFailed int
	// ablate matches the "node kernel" names of the dispatches that run one workgroup
	// (EnvAblate), or is nil.
	ablate *regexp.Regexp
	// skip matches the names of the dispatches left out of the graphs (EnvSkip), or is nil.
	skip *regexp.Regexp
	// steps records the host's timeline of the device's calls (EnvTimeline), or is nil.
	steps *stepLog
}

// q6kHoldEnv reads EnvQ6KHold's value v as ops.Limits.Q6KHold: 1 to 8 as they are, 0 as
// -1 (every column's activations first), anything else (unset) as 0 (the default).
func q6kHoldEnv(v string) int {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0 || n > 8:
		return 0
	case n == 0:
		return -1
	}
	return n
}

// profilePattern compiles v, the value of the profiling variable env (EnvAblate,
// EnvSkip): nil when empty or not a regular expression (logged); what tells what becomes
// of the matching dispatches, for the warning.
func profilePattern(env, v, what string) *regexp.Regexp {
	if v == "" {
		return nil
	}
	re, err := regexp.Compile(v)
	if err != nil {
		logf(LogWarn, "%s ignored: %v", env, err)
		return nil
	}
	logf(LogWarn, "%s=%q: matching dispatches %s, their results are wrong", env, v, what)
	return re
}

// gpuWaitSpin is how long a hardware adapter's waits for the GPU yield between polls
// before they sleep (gpu.Device.SetWaitSpin; CPU drivers keep the 2 ms default, their
// threads wanting the cores). A wait that sleeps notices the GPU's end late (after ~1,000
// polls by 200 µs), and an 8B decode's wait for its logits lasts ~2.6 ms on an H100 (the
// host's timeline, EnvTimeline: the compute returns 0.84-1.2 ms into a ~3.9 ms step). With
// the profile's compute waiting the whole graph (8B Q4_K, GGML_WGPU_PROFILE=1), the GPU's
// median idle between graphs went 687, 704, 682 -> 435, 484, 479 µs, tg64 240.6, 242.7,
// 240.4 -> 254.6, 252.9, 252.5 t/s.
const gpuWaitSpin = 20 * time.Millisecond

// prewakeLead and prewakeSpin set a hardware adapter's waits that end when llama's logits
// are ready to wake the threads that copy them out of mapped memory prewakeLead before the
// last such wait's length, the threads then watching for the copy for up to prewakeSpin
// (gpu.Device.SetPrewake; EnvPrewake=0 turns it off).
const (
	prewakeLead = 100 * time.Microsecond
	prewakeSpin = 300 * time.Microsecond
)

func newDevice(index int, a *gpu.Adapter) *Device {
	d := &Device{
		Index:   index,
		Name:    fmt.Sprintf("WGPU%d", index),
		adapter: a,
		Type:    DevTypeGPU,
		buffers: map[uint64]*Buffer{},

		readWriteOnly: os.Getenv(EnvReadOnly) == "0",
		specialize:    specializeModeOf(os.Getenv(EnvSpecialize)),
		ablate:        profilePattern(EnvAblate, os.Getenv(EnvAblate), "run one workgroup"),
		skip:          profilePattern(EnvSkip, os.Getenv(EnvSkip), "are left out"),
	}
	if os.Getenv(EnvTimeline) == "1" {
		d.steps = newStepLog()
	}
	info := a.Info
	desc := strings.TrimSpace(info.Description)
	if desc == "" {
		desc = strings.TrimSpace(info.Device)
	}
	if desc == "" {
		desc = "WebGPU adapter"
	}
	switch info.Type {
	case gpu.IntegratedGPU:
		d.Type = DevTypeIGPU
	case gpu.CPU:
		d.software = true
		desc += " (software adapter, WebGPU/Vulkan)"
	default:
		desc += " (WebGPU/Vulkan)"
	}
	d.Description = desc
	return d
}

// open opens the logical device once; later calls return the same device or error.
func (d *Device) open() (*gpu.Device, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.openLocked()
}

func (d *Device) openLocked() (*gpu.Device, error) {
	if d.gpu != nil || d.openErr != nil {
		return d.gpu, d.openErr
	}
	open := d.adapter.Open
	if level, _ := profileSetting(); level >= 1 {
		open = d.adapter.OpenWithTimestamps
	}
	g, err := open()
	if err != nil {
		d.openErr = err
		logf(LogError, "%s: %v", d.Name, err)
		return nil, err
	}
	e, err := exec.New(g, paramSlots, wgsl.SlotSize)
	if err != nil {
		g.Close()
		d.openErr = err
		return nil, err
	}
	if v, err := strconv.Atoi(os.Getenv(EnvFirstPart)); err == nil && v >= 0 {
		e.FirstPart = v
	}
	if l := d.steps; l != nil {
		e.OnSubmit = func() { l.mark(evSubmit) }
		g.OnMapped = func() { l.mark(evReadMapped) }
	}
	if !d.software {
		g.SetWaitSpin(gpuWaitSpin)
		if os.Getenv(EnvPrewake) != "0" {
			g.SetPrewake(prewakeLead, prewakeSpin)
		}
	}
	d.gpu, d.exe = g, e
	return g, nil
}

// usable says why the device cannot take work, if it cannot. Callers hold mu.
func (d *Device) usable() error {
	if d.gpu == nil {
		if d.openErr != nil {
			return d.openErr
		}
		return fmt.Errorf("%s: device not open", d.Name)
	}
	if err := d.gpu.Lost(); err != nil {
		return fmt.Errorf("%s: %w", d.Name, err)
	}
	return nil
}

// Limits returns the limits ops must respect; zero limits when the device cannot open.
// They are read once, the environment's settings with them (the library sees the
// environment of its load): ggml asks supports_op for every node of each graph it splits
// anew, and ~50 variables read at every call made half its cost.
func (d *Device) Limits() ops.Limits {
	g, err := d.open()
	if err != nil {
		return ops.Limits{}
	}
	d.limitsOnce.Do(func() { d.limits = d.readLimits(g) })
	return d.limits
}

// readLimits reads the limits of g and the environment's settings.
func (d *Device) readLimits(g *gpu.Device) ops.Limits {
	return ops.Limits{
		MaxBinding:          g.Limits.MaxStorageBufferBindingSize,
		MaxGroupsPerDim:     g.Limits.MaxComputeWorkgroupsPerDim,
		MaxGroupSize:        int(g.Limits.MaxComputeInvocationsPerGroup),
		MaxWorkgroupStorage: int(g.Limits.MaxComputeWorkgroupStorageSize),
		MaxStorageBuffers:   storageBindings(g),
		StorageAlign:        g.Limits.MinStorageBufferOffsetAlignment,
		ComputeUnits:        d.computeUnits(),
		// comparisons and tuning (the variables' documentation above)
		MatVecRows:        envInt(EnvMatVecRows),
		MatVecWG:          envInt(EnvMatVecWG),
		MatVecNoUnits:     os.Getenv(EnvMatVecUnits) == "0",
		MatMultiOff:       os.Getenv(EnvMatMulti) == "0",
		DequantPromptOff:  os.Getenv(EnvDequantPrompt) == "0",
		DequantChunkBytes: uint64(envInt(EnvDequantChunkKB)) << 10,
		MulMatIDMaxTokens: envInt(EnvMoEMatVecTokens),
		MulMatIDGrouped:   os.Getenv(EnvMoEGrouped) == "1",
		MulMatIDCols:      envInt(EnvMoECols),
		SwarOff:           os.Getenv(EnvSwar) == "0",
		SwarRows:          envInt(EnvSwarRows),
		SwarWG:            envInt(EnvSwarWG),
		SwarMin:           envInt(EnvSwarMin),
		SwarCols:          envInt(EnvSwarCols),
		SwarColsMin:       envInt(EnvSwarColsMin),
		SwarXQ:            os.Getenv(EnvSwarXQ) == "1",
		Q4KWideOff:        os.Getenv(EnvQ4KWide) == "0",
		NormXQOff:         os.Getenv(EnvNormXQ) == "0",
		FAXQOff:           os.Getenv(EnvFAXQ) == "0",
		FADecodeRows:      envInt(EnvFARows),
		FATargetGroups:    envInt(EnvFAGroups),
		RopeKVOff:         os.Getenv(EnvRopeKV) == "0",
		SwarXQMinRows:     envInt(EnvSwarXQRows),
		Q6KOff:            os.Getenv(EnvQ6K) == "0",
		Q6KPairsOff:       os.Getenv(EnvQ6KPairs) == "0",
		Q6KPairsMin:       envInt(EnvQ6KPairsMin),
		Q6KXQMinRows:      envInt(EnvQ6KXQRows),
		Q6KCols:           envInt(EnvQ6KCols),
		Q6KSwarCols:       envInt(EnvQ6KSwarCols),
		Q6KSwarMinCols:    envInt(EnvQ6KSwarMinCols),
		Q6KHold:           q6kHoldEnv(os.Getenv(EnvQ6KHold)),
		Q6KRows:           envInt(EnvQ6KRows),
		Q6KWG:             envInt(EnvQ6KWG),
		BigGroups:         envInt(EnvBigGroups),
		GateTailOff:       os.Getenv(EnvGateTail) == "0",
		GateTailGroups:    envInt(EnvGateTailGroups),
		GateTailRows:      envInt(EnvGateTailRows),
		QKVCols:           envInt(EnvQKVCols),
	}
}

// OwnMemory returns the GPU memory in buffers that the device holds beyond those ggml
// allocated: the parameter arena, scratch memory (one buffer: the one it replaced is
// released), the readback buffer and timing buffers.
func (d *Device) OwnMemory() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gpu == nil {
		return 0
	}
	var ggml uint64
	for _, b := range d.buffers {
		ggml += b.gpu.Size
	}
	return d.gpu.LiveBytes() - min(ggml, d.gpu.LiveBytes())
}

// Alignment is the buffer alignment ggml must respect: the storage offset alignment.
func (d *Device) Alignment() uint64 {
	g, err := d.open()
	if err != nil {
		return 256
	}
	return uint64(g.Limits.MinStorageBufferOffsetAlignment)
}

// MaxAlloc is the largest tensor one buffer can hold: what one binding can address.
func (d *Device) MaxAlloc() uint64 {
	g, err := d.open()
	if err != nil {
		return 0
	}
	return min(g.Limits.MaxStorageBufferBindingSize, g.Limits.MaxBufferSize)
}

// Memory reports free and total bytes. WebGPU has no memory query: EnvMemory decides if
// set; else the Vulkan device-local heaps behind the adapter (free from the driver's
// budget); else, for software adapters or when Vulkan cannot tell, the system's memory
// less what this device has allocated.
func (d *Device) Memory() (free, total uint64) {
	d.mu.Lock()
	used := d.allocated
	d.mu.Unlock()
	if v := memoryOverride(); v > 0 {
		total = v
	} else if f, t, ok := d.vulkanMemory(); ok && d.adapter.Info.Type != gpu.CPU {
		return f, t
	} else {
		total = systemMemory()
	}
	if used > total {
		return 0, total
	}
	return total - used, total
}

// PCIBusID is the adapter's PCI bus location as ggml's device_id property spells it
// ("0000:c1:00.0"), or "" when Vulkan cannot tell (software adapters, several identical
// devices). It is read once.
func (d *Device) PCIBusID() string {
	d.pciOnce.Do(func() {
		if id, ok := d.adapter.PCIBusID(); ok {
			d.pciID = id
		}
	})
	return d.pciID
}

// computeUnits is the adapter's multiprocessor count (gpu.Adapter.ComputeUnits), 0 when
// it cannot be told, or EnvComputeUnits where set. It is read once.
func (d *Device) computeUnits() uint32 {
	d.unitsOnce.Do(func() {
		if v := envInt(EnvComputeUnits); v > 0 {
			d.units = uint32(v)
		} else if n, ok := d.adapter.ComputeUnits(); ok && !d.software {
			d.units = n
		}
		logf(LogDebug, "%s: compute units %d", d.Name, d.units)
	})
	return d.units
}

// memoryOverride is EnvMemory in bytes, or 0 when it is unset or not a positive number.
func memoryOverride() uint64 {
	v, err := strconv.ParseUint(os.Getenv(EnvMemory), 10, 64)
	if err != nil || v == 0 || v > 1<<43 {
		return 0
	}
	return v << 20
}

// memoryTTL is how long a Vulkan memory reading is reused: each reading creates and
// destroys a Vulkan instance, which costs milliseconds.
const memoryTTL = time.Second

// vulkanMemory is the adapter's Vulkan memory reading, taken at most once per memoryTTL.
func (d *Device) vulkanMemory() (free, total uint64, ok bool) {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if d.memAt.IsZero() || time.Since(d.memAt) > memoryTTL {
		d.memFree, d.memTotal, d.memOK = d.adapter.Memory()
		d.memAt = time.Now()
	}
	return d.memFree, d.memTotal, d.memOK
}

func systemMemory() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 8 << 30
}

// Supports reports whether the device computes node t.
func (d *Device) Supports(t *tensor.Tensor) bool {
	l := d.Limits()
	if l.MaxBinding == 0 {
		return false
	}
	return ops.Supports(t, &l)
}

// Synchronize waits for all submitted work.
func (d *Device) Synchronize() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gpu == nil {
		return nil
	}
	return d.gpu.WaitIdle()
}

// PipelineCount returns how many pipelines the device has compiled.
func (d *Device) PipelineCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.exe == nil {
		return 0
	}
	return d.exe.Pipelines()
}

// readsTaken returns how many buffer reads were served from outputs read ahead.
func (d *Device) readsTaken() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gpu == nil {
		return 0
	}
	return d.gpu.ReadsTaken()
}

// waitStats returns the GPU layer's statistics of waits for the GPU (gpu.WaitStats).
func (d *Device) waitStats() gpu.WaitStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gpu == nil {
		return gpu.WaitStats{}
	}
	return d.gpu.WaitStats()
}

// storageBindings is the most storage bindings a dispatch on g may have: the device's
// limit, within the executor's.
func storageBindings(g *gpu.Device) int {
	return min(int(g.Limits.MaxStorageBuffersPerShaderStage), exec.MaxBindings)
}
