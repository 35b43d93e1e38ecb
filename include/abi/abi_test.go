package abi

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
	"github.com/stretchr/testify/require"
)

// ggmlObjectSize is sizeof(struct ggml_object) in ggml.c (offs, size, next, type, padding[4]):
// ggml_tensor_overhead() is this plus the library's own sizeof(struct ggml_tensor).
const ggmlObjectSize = 32

func newContext(t *testing.T, noAlloc bool) *Context {
	t.Helper()
	c, err := NewContext(1<<20, noAlloc)
	require.NoError(t, err)
	t.Cleanup(c.Free)
	return c
}

func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// The size of our struct ggml_tensor equals the one libggml-base was built with: ggml
// places tensors in a context at a stride of ggml_tensor_overhead(), which is ggml's object
// header plus its sizeof(struct ggml_tensor).
func TestTensorSize(t *testing.T) {
	require.Equal(t, uintptr(336), Layout()["sizeof(ggml_tensor)"])
	require.Equal(t, Layout()["sizeof(ggml_tensor)"], TensorOverhead()-ggmlObjectSize,
		"ggml_tensor_overhead() - sizeof(ggml_object) is libggml-base's sizeof(struct ggml_tensor)")

	c := newContext(t, true)
	a := c.NewTensor2D(int(tensor.F32), 4, 4)
	b := c.NewTensor2D(int(tensor.F32), 4, 4)
	require.Equal(t, TensorOverhead(), b.Ptr()-a.Ptr(), "consecutive tensors in a no_alloc context")
}

// Tensors made by the real ggml_new_tensor_2d/4d read back through our struct: type, ne,
// the strides ggml computed, data, name; and fields we write are the ones ggml reads.
func TestTensorFields(t *testing.T) {
	c := newContext(t, false)

	a := c.NewTensor2D(int(tensor.F16), 7, 5)
	require.Equal(t, int(tensor.F16), a.Type())
	require.Equal(t, "f16", TypeName(a.Type()))
	require.Equal(t, [4]int64{7, 5, 1, 1}, a.Ne())
	require.Equal(t, [4]uintptr{2, 14, 70, 70}, a.Nb())
	require.Equal(t, int(tensor.OpNone), a.Op())
	require.Equal(t, int32(0), a.Flags())
	require.Equal(t, uintptr(0), a.BufferPtr())
	require.Equal(t, uintptr(70), a.NBytes())
	require.Equal(t, int64(35), a.NElements())
	require.NotZero(t, a.Data(), "a context with memory gives tensors data")
	require.Equal(t, a.GGMLData(), a.Data())
	require.Zero(t, a.Extra())
	for i := 0; i < 10; i++ {
		require.True(t, a.Src(i).IsNil(), "src[%d]", i)
	}
	require.True(t, a.ViewSrc().IsNil())
	require.Zero(t, a.ViewOffs())
	require.Equal(t, [16]int32{}, a.OpParams())

	q := c.NewTensor4D(int(tensor.Q4_0), 64, 3, 2, 5)
	require.Equal(t, int(tensor.Q4_0), q.Type())
	require.Equal(t, "q4_0", TypeName(q.Type()))
	require.Equal(t, [4]int64{64, 3, 2, 5}, q.Ne())
	require.Equal(t, [4]uintptr{18, 36, 108, 216}, q.Nb(), "2 blocks of 18 bytes per row")
	require.Equal(t, uintptr(1080), q.NBytes())

	f := c.NewTensor4D(int(tensor.F32), 4, 3, 2, 2)
	require.Equal(t, [4]int64{4, 3, 2, 2}, f.Ne())
	require.Equal(t, [4]uintptr{4, 16, 48, 96}, f.Nb())
	require.Equal(t, uintptr(192), f.NBytes())
	// ggml_nbytes = type_size + sum((ne[i]-1)*nb[i]): it follows nb[3] written through our struct.
	f.SetNb(3, 1000)
	require.Equal(t, uintptr(4+3*4+2*16+1*48+1*1000), f.NBytes())
	f.SetNb(3, 96)

	// name: ggml_set_name writes where we read, ggml_get_name returns our field's address.
	a.SetName("abi-tensor-a")
	require.Equal(t, "abi-tensor-a", a.Name())
	require.Equal(t, a.Ptr()+256, a.NameFieldPtr())
	require.Equal(t, a.NameFieldPtr(), a.GGMLNamePtr())
	q.SetNameField("written-through-our-header")
	require.Equal(t, "written-through-our-header", q.GGMLName())
}

// Op nodes: op, src[], op_params of ops that write them, views, and flags.
func TestTensorOpsViewsFlags(t *testing.T) {
	c := newContext(t, false)
	b := c.NewTensor2D(int(tensor.F32), 8, 4)
	d := c.NewTensor2D(int(tensor.F32), 8, 4)

	sum := c.Add(b, d)
	require.Equal(t, int(tensor.OpAdd), sum.Op())
	require.Equal(t, "ADD", OpName(sum.Op()))
	require.Equal(t, b, sum.Src(0))
	require.Equal(t, d, sum.Src(1))
	require.True(t, sum.Src(2).IsNil())
	require.Equal(t, [4]int64{8, 4, 1, 1}, sum.Ne())

	rn := c.RMSNorm(b, 1e-5)
	require.Equal(t, int(tensor.OpRMSNorm), rn.Op())
	require.Equal(t, "RMS_NORM", OpName(rn.Op()))
	require.Equal(t, float32(1e-5), rn.OpParamF32(0))
	require.Equal(t, b, rn.Src(0))

	sc := c.ScaleBias(b, 2.5, -0.75)
	require.Equal(t, int(tensor.OpScale), sc.Op())
	require.Equal(t, "SCALE", OpName(sc.Op()))
	require.Equal(t, float32(2.5), sc.OpParamF32(0))
	require.Equal(t, float32(-0.75), sc.OpParamF32(1))

	off := 2*b.Nb()[1] + 4
	v := c.View2D(b, 3, 2, b.Nb()[1], off)
	require.Equal(t, int(tensor.OpView), v.Op())
	require.Equal(t, "VIEW", OpName(v.Op()))
	require.Equal(t, b, v.ViewSrc())
	require.Equal(t, off, v.ViewOffs())
	require.Equal(t, uint64(off), v.OpParamU64(0), "VIEW keeps its byte offset in op_params[0..1]")
	require.Equal(t, b, v.Src(0))
	require.Equal(t, b.Data()+off, v.Data())
	require.Equal(t, [4]int64{3, 2, 1, 1}, v.Ne())
	require.Equal(t, [4]uintptr{4, 32, 64, 64}, v.Nb())

	b.SetInput()
	require.Equal(t, FlagInput, b.Flags())
	out := c.Add(sc, rn)
	out.SetOutput()
	require.Equal(t, FlagOutput, out.Flags())

	g := c.NewGraph()
	g.BuildForwardExpand(out)
	require.Equal(t, FlagOutput|FlagCompute, out.Flags())
	require.Equal(t, FlagCompute, sc.Flags())
	require.Equal(t, FlagCompute, rn.Flags())
	require.Equal(t, FlagInput, b.Flags(), "a leaf is not marked COMPUTE")
	require.Equal(t, int32(0), sum.Flags(), "a node outside the graph is untouched")
}

// ggml_graph_n_nodes/ggml_graph_node (declared in our header) walk a graph built with
// ggml_build_forward_expand; the internal cgraph layout docs/ARCHITECTURE.md names agrees.
func TestGraphWalk(t *testing.T) {
	c := newContext(t, true)
	x := c.NewTensor2D(int(tensor.F32), 8, 4)
	y := c.NewTensor2D(int(tensor.F32), 8, 4)
	y.SetName("y")
	rn := c.RMSNorm(x, 1e-6)
	add := c.Add(rn, y)
	sc := c.ScaleBias(add, 2, 0.5)

	g := c.NewGraph()
	require.Equal(t, 0, g.NNodes())
	g.BuildForwardExpand(sc)
	require.Equal(t, 3, g.NNodes())
	require.Equal(t, []Tensor{rn, add, sc}, []Tensor{g.Node(0), g.Node(1), g.Node(2)})
	require.Equal(t, sc, g.Node(-1))
	require.Equal(t, rn, g.Node(-3))
	require.Equal(t, "node_0", rn.Name(), "ggml names unnamed nodes through our name field")
	require.Equal(t, "leaf_0", x.Name())
	require.Equal(t, "y", y.Name())

	require.Equal(t, g.NNodes(), g.RawNNodes(), "n_nodes at offset 4")
	for i := 0; i < g.NNodes(); i++ {
		require.Equal(t, g.Node(i), g.RawNode(i), "nodes[%d] through the pointer at offset 16", i)
	}

	// Expanding again with a new root appends only the new node.
	sq := c.ScaleBias(rn, -1, 0)
	g.BuildForwardExpand(sq)
	require.Equal(t, 4, g.NNodes())
	require.Equal(t, sq, g.Node(3))
	require.Equal(t, 4, g.RawNNodes())
}

// Every field offset and struct size of our header against docs/ARCHITECTURE.md.
func TestLayoutOffsets(t *testing.T) {
	want := map[string]uintptr{
		"sizeof(ggml_tensor)": 336,
		"ggml_tensor.type":    0, "ggml_tensor.buffer": 8, "ggml_tensor.ne": 16, "ggml_tensor.nb": 48,
		"ggml_tensor.op": 80, "ggml_tensor.op_params": 84, "ggml_tensor.flags": 148, "ggml_tensor.src": 152,
		"ggml_tensor.view_src": 232, "ggml_tensor.view_offs": 240, "ggml_tensor.data": 248,
		"ggml_tensor.name": 256, "ggml_tensor.extra": 320, "ggml_tensor.padding": 328,

		"sizeof(ggml_backend_buffer_type_i)":  48,
		"ggml_backend_buffer_type_i.get_name": 0, "ggml_backend_buffer_type_i.alloc_buffer": 8,
		"ggml_backend_buffer_type_i.get_alignment": 16, "ggml_backend_buffer_type_i.get_max_size": 24,
		"ggml_backend_buffer_type_i.get_alloc_size": 32, "ggml_backend_buffer_type_i.is_host": 40,
		"sizeof(ggml_backend_buffer_type)": 64,
		"ggml_backend_buffer_type.iface":   0, "ggml_backend_buffer_type.device": 48, "ggml_backend_buffer_type.context": 56,

		"sizeof(ggml_backend_buffer_i)":     88,
		"ggml_backend_buffer_i.free_buffer": 0, "ggml_backend_buffer_i.get_base": 8,
		"ggml_backend_buffer_i.init_tensor": 16, "ggml_backend_buffer_i.memset_tensor": 24,
		"ggml_backend_buffer_i.set_tensor": 32, "ggml_backend_buffer_i.get_tensor": 40,
		"ggml_backend_buffer_i.set_tensor_2d": 48, "ggml_backend_buffer_i.get_tensor_2d": 56,
		"ggml_backend_buffer_i.cpy_tensor": 64, "ggml_backend_buffer_i.clear": 72, "ggml_backend_buffer_i.reset": 80,
		"sizeof(ggml_backend_buffer)": 120,
		"ggml_backend_buffer.iface":   0, "ggml_backend_buffer.buft": 88, "ggml_backend_buffer.context": 96,
		"ggml_backend_buffer.size": 104, "ggml_backend_buffer.usage": 112,

		"sizeof(ggml_backend_i)":  128,
		"ggml_backend_i.get_name": 0, "ggml_backend_i.free": 8, "ggml_backend_i.set_tensor_async": 16,
		"ggml_backend_i.get_tensor_async": 24, "ggml_backend_i.set_tensor_2d_async": 32,
		"ggml_backend_i.get_tensor_2d_async": 40, "ggml_backend_i.cpy_tensor_async": 48,
		"ggml_backend_i.synchronize": 56, "ggml_backend_i.graph_plan_create": 64,
		"ggml_backend_i.graph_plan_free": 72, "ggml_backend_i.graph_plan_update": 80,
		"ggml_backend_i.graph_plan_compute": 88, "ggml_backend_i.graph_compute": 96,
		"ggml_backend_i.event_record": 104, "ggml_backend_i.event_wait": 112, "ggml_backend_i.graph_optimize": 120,
		"sizeof(ggml_backend)": 152,
		"ggml_backend.guid":    0, "ggml_backend.iface": 8, "ggml_backend.device": 136, "ggml_backend.context": 144,
		"sizeof(ggml_backend_event)": 16,
		"ggml_backend_event.device":  0, "ggml_backend_event.context": 8,

		"sizeof(ggml_backend_device_i)":  120,
		"ggml_backend_device_i.get_name": 0, "ggml_backend_device_i.get_description": 8,
		"ggml_backend_device_i.get_memory": 16, "ggml_backend_device_i.get_type": 24,
		"ggml_backend_device_i.get_props": 32, "ggml_backend_device_i.init_backend": 40,
		"ggml_backend_device_i.get_buffer_type": 48, "ggml_backend_device_i.get_host_buffer_type": 56,
		"ggml_backend_device_i.buffer_from_host_ptr": 64, "ggml_backend_device_i.supports_op": 72,
		"ggml_backend_device_i.supports_buft": 80, "ggml_backend_device_i.offload_op": 88,
		"ggml_backend_device_i.event_new": 96, "ggml_backend_device_i.event_free": 104,
		"ggml_backend_device_i.event_synchronize": 112,
		"sizeof(ggml_backend_device)":             136,
		"ggml_backend_device.iface":               0, "ggml_backend_device.reg": 120, "ggml_backend_device.context": 128,

		"sizeof(ggml_backend_dev_caps)": 5,
		"ggml_backend_dev_caps.async":   0, "ggml_backend_dev_caps.host_buffer": 1,
		"ggml_backend_dev_caps.buffer_from_host_ptr": 2, "ggml_backend_dev_caps.events": 3,
		"ggml_backend_dev_caps.mmap_support": 4,
		"sizeof(ggml_backend_dev_props)":     56,
		"ggml_backend_dev_props.name":        0, "ggml_backend_dev_props.description": 8,
		"ggml_backend_dev_props.memory_free": 16, "ggml_backend_dev_props.memory_total": 24,
		"ggml_backend_dev_props.type": 32, "ggml_backend_dev_props.device_id": 40, "ggml_backend_dev_props.caps": 48,

		"sizeof(ggml_backend_reg_i)":  32,
		"ggml_backend_reg_i.get_name": 0, "ggml_backend_reg_i.get_device_count": 8,
		"ggml_backend_reg_i.get_device": 16, "ggml_backend_reg_i.get_proc_address": 24,
		"sizeof(ggml_backend_reg)":     48,
		"ggml_backend_reg.api_version": 0, "ggml_backend_reg.iface": 8, "ggml_backend_reg.context": 40,
	}
	require.Equal(t, want, Layout())
}

// A buffer made by the real ggml_backend_buffer_init for a buffer type whose vtables we
// filled through our header: ggml's accessors return our fields, and ggml calls our slots.
func TestBufferRoundTrip(t *testing.T) {
	ResetProbe()
	bt := ProbeBufferType()
	hbt := ProbeHostBufferType()

	require.Equal(t, "ABI0", bt.Name(), "get_name reads the buft context")
	require.Equal(t, ProbeBuftAlignment, bt.Alignment())
	require.Equal(t, ProbeBuftMaxSize, bt.MaxSize())
	require.False(t, bt.IsHost())
	require.Equal(t, ProbeDevice(), bt.Device())
	require.Equal(t, "ABI0_Host", hbt.Name())
	require.Equal(t, ProbeHostBuftAlignment, hbt.Alignment())
	require.Equal(t, ProbeHostBuftMaxSize, hbt.MaxSize())
	require.True(t, hbt.IsHost())
	calls := Calls()
	require.Equal(t, 2, calls["buft.get_name"])
	require.Equal(t, 2, calls["buft.get_alignment"])
	require.Equal(t, 2, calls["buft.get_max_size"])
	require.Equal(t, 2, calls["buft.is_host"])
	require.Equal(t, hbt.Ptr(), Last().Self)

	// allocation through the real ggml_backend_buft_alloc_buffer
	buf := bt.AllocBuffer(4096)
	require.False(t, buf.IsNil())
	require.Equal(t, 1, Calls()["buft.alloc_buffer"])
	require.Equal(t, uintptr(4096), Last().Size)
	require.Equal(t, bt.Ptr(), Last().Self)

	require.Equal(t, bt, buf.BuftField())
	require.Equal(t, bt, buf.Type())
	require.Equal(t, uintptr(4096), buf.SizeField())
	require.Equal(t, uintptr(4096), buf.Size())
	base := buf.Base()
	require.Equal(t, 1, Calls()["buffer.get_base"])
	require.Equal(t, buf.HostMemory(), base)
	require.Zero(t, base%ProbeBuftAlignment)
	require.Equal(t, UsageAny, buf.UsageField())
	require.Equal(t, UsageAny, buf.Usage())
	buf.SetUsage(UsageWeights)
	require.Equal(t, UsageWeights, buf.UsageField())
	require.Equal(t, UsageWeights, buf.Usage())
	buf.SetUsage(UsageCompute)
	require.Equal(t, UsageCompute, buf.UsageField())
	require.Equal(t, UsageCompute, buf.Usage())
	require.Equal(t, "ABI0", buf.Name())
	require.Equal(t, ProbeBuftAlignment, buf.Alignment())
	require.Equal(t, ProbeBuftMaxSize, buf.MaxSize())
	require.False(t, buf.IsHost())

	// get_alloc_size: leaves padded, op nodes not
	c := newContext(t, true)
	x := c.NewTensor2D(int(tensor.F32), 16, 4) // 256 bytes
	y := c.NewTensor2D(int(tensor.F32), 16, 4)
	node := c.Add(x, y)
	require.Equal(t, uintptr(256)+ProbeLeafAllocPad, bt.AllocSize(x))
	require.Equal(t, x.Ptr(), Last().Tensor)
	require.Equal(t, uintptr(256)+ProbeLeafAllocPad, buf.AllocSize(x))
	require.Equal(t, uintptr(256), bt.AllocSize(node))

	// placing tensors: ggml_backend_tensor_alloc sets buffer and data, calls init_tensor
	ResetProbe()
	require.Equal(t, StatusSuccess, buf.AllocTensor(x, 128))
	require.Equal(t, buf.Ptr(), x.BufferPtr())
	require.Equal(t, buf.Base()+128, x.Data())
	require.Equal(t, 1, Calls()["buffer.init_tensor"])
	require.Equal(t, x.Ptr(), Last().Tensor)
	require.Equal(t, buf.Ptr(), Last().Self)
	require.Equal(t, ExtraMarker(), x.Extra(), "init_tensor's write to extra is where we read it")
	require.Equal(t, StatusSuccess, buf.AllocTensor(y, 1024))

	// set/get through our set_tensor/get_tensor
	data := pattern(100, 3)
	TensorSet(x, data, 20)
	require.Equal(t, 1, Calls()["buffer.set_tensor"])
	l := Last()
	require.Equal(t, buf.Ptr(), l.Self)
	require.Equal(t, x.Ptr(), l.Tensor)
	require.Equal(t, uintptr(20), l.Offset)
	require.Equal(t, uintptr(100), l.Size)
	require.Equal(t, data, buf.Bytes(128+20, 100))
	require.Equal(t, data, TensorGet(x, 20, 100))
	require.Equal(t, 1, Calls()["buffer.get_tensor"])
	require.Equal(t, uintptr(20), Last().Offset)
	require.Equal(t, uintptr(100), Last().Size)

	// memset
	TensorMemset(x, 0x5a, 8, 16)
	require.Equal(t, 1, Calls()["buffer.memset_tensor"])
	l = Last()
	require.Equal(t, 0x5a, l.Value)
	require.Equal(t, uintptr(8), l.Offset)
	require.Equal(t, uintptr(16), l.Size)
	require.Equal(t, bytes.Repeat([]byte{0x5a}, 16), buf.Bytes(128+8, 16))

	// 2-D copies (n_copies > 1 goes to the optional 2-D slots)
	rows := pattern(30, 40)
	TensorSet2D(x, rows, 4, 8, 3, 64, 10)
	require.Equal(t, 1, Calls()["buffer.set_tensor_2d"])
	l = Last()
	require.Equal(t, []uintptr{4, 8, 3, 64, 10}, []uintptr{l.Offset, l.Size, l.NCopies, l.StrideTensor, l.StrideData})
	for i := uintptr(0); i < 3; i++ {
		require.Equal(t, rows[i*10:i*10+8], buf.Bytes(128+4+i*64, 8), "row %d", i)
	}
	got := TensorGet2D(x, 24, 4, 8, 3, 64, 8)
	require.Equal(t, 1, Calls()["buffer.get_tensor_2d"])
	require.Equal(t, append(append(append([]byte{}, rows[0:8]...), rows[10:18]...), rows[20:28]...), got)

	// copy between two tensors of a non-host buffer: the dst buffer's cpy_tensor
	TensorCopy(x, y)
	require.Equal(t, 1, Calls()["buffer.cpy_tensor"])
	l = Last()
	require.Equal(t, x.Ptr(), l.Tensor)
	require.Equal(t, y.Ptr(), l.Tensor2)
	require.Equal(t, buf.Bytes(128, 256), buf.Bytes(1024, 256))

	// clear, reset
	buf.Clear(0xa5)
	require.Equal(t, 1, Calls()["buffer.clear"])
	require.Equal(t, 0xa5, Last().Value)
	require.Equal(t, bytes.Repeat([]byte{0xa5}, 4096), buf.Bytes(0, 4096))
	buf.Reset()
	require.Equal(t, 1, Calls()["buffer.reset"])

	// a host buffer from our memory (device buffer_from_host_ptr); copying out of a host
	// buffer uses the dst buffer's set_tensor
	mem := NewHostMem(1024)
	defer mem.Free()
	hb := ProbeDevice().BufferFromHostPtr(mem, 512)
	require.Equal(t, 1, Calls()["device.buffer_from_host_ptr"])
	l = Last()
	require.Equal(t, mem.Ptr(), l.Data)
	require.Equal(t, uintptr(1024), l.Size)
	require.Equal(t, uintptr(512), l.MaxTensorSize)
	require.Equal(t, mem.Ptr(), hb.Base())
	require.Equal(t, uintptr(1024), hb.Size())
	require.Equal(t, hbt, hb.Type())
	require.True(t, hb.IsHost())
	z := c.NewTensor2D(int(tensor.F32), 16, 4)
	require.Equal(t, StatusSuccess, hb.AllocTensor(z, 0))
	zdata := pattern(256, 9)
	TensorSet(z, zdata, 0)
	setsBefore := Calls()["buffer.set_tensor"]
	cpyBefore := Calls()["buffer.cpy_tensor"]
	TensorCopy(z, y)
	require.Equal(t, setsBefore+1, Calls()["buffer.set_tensor"], "the copy out of a host buffer is a set_tensor on y")
	require.Equal(t, buf.Ptr(), Last().Self)
	require.Equal(t, y.Ptr(), Last().Tensor)
	require.Equal(t, z.Data(), Last().Data)
	require.Equal(t, cpyBefore, Calls()["buffer.cpy_tensor"])
	require.Equal(t, zdata, buf.Bytes(1024, 256))

	// free: ggml calls our free_buffer, then deletes the struct it made
	hb.Free()
	require.Equal(t, 1, Calls()["buffer.free_buffer"])
	require.Equal(t, hb.Ptr(), Last().Self)
	bufPtr := buf.Ptr()
	buf.Free()
	require.Equal(t, 2, Calls()["buffer.free_buffer"])
	require.Equal(t, bufPtr, Last().Self)
}

// The registry and device vtables, slot by slot, through libggml-base's public API.
func TestRegistryAndDevice(t *testing.T) {
	ResetProbe()
	reg := ProbeReg()
	dev := ProbeDevice()

	require.Equal(t, 2, reg.APIVersion())
	require.Equal(t, "ABI", reg.Name(), "get_name checks the reg context")
	require.Equal(t, 1, reg.DevCount())
	require.Equal(t, dev, reg.Dev(0))
	require.Equal(t, uintptr(0), Last().Index)
	require.Equal(t, Device{}, reg.Dev(1))
	require.Equal(t, uintptr(1), Last().Index)
	require.Equal(t, ProbeProc(), reg.ProcAddress("abi_probe"))
	require.Equal(t, "abi_probe", Last().ProcName)
	require.Zero(t, reg.ProcAddress("ggml_backend_set_n_threads"))
	calls := Calls()
	require.Equal(t, 1, calls["reg.get_name"])
	require.Equal(t, 1, calls["reg.get_device_count"])
	require.Equal(t, 2, calls["reg.get_device"])
	require.Equal(t, 2, calls["reg.get_proc_address"])

	require.Equal(t, "ABI0", dev.Name())
	require.Equal(t, "ABI probe device", dev.Description())
	free, total := dev.Memory()
	require.Equal(t, ProbeMemFree, free)
	require.Equal(t, ProbeMemTotal, total)
	require.Equal(t, DevTypeGPU, dev.Type())
	SetProbeDeviceType(DevTypeCPU)
	require.Equal(t, DevTypeCPU, dev.Type())
	SetProbeDeviceType(DevTypeGPU)
	require.Equal(t, Props{
		Name: "ABI0", Description: "ABI probe device", MemoryFree: ProbeMemFree, MemoryTotal: ProbeMemTotal,
		Type: DevTypeGPU, DeviceID: "0000:c1:00.0",
		Async: true, HostBuffer: false, BufferFromHostPtr: true, Events: true, MmapSupport: false,
	}, dev.Props())
	seen := PropsSeen()
	require.Equal(t, make([]byte, 56), seen[:56], "ggml_backend_dev_get_props zeroes sizeof(props) bytes")
	require.Equal(t, bytes.Repeat([]byte{0xcc}, 128-56), seen[56:], "... and not one more: libggml-base's sizeof is 56")
	require.Equal(t, reg, dev.BackendReg())
	require.Equal(t, reg, dev.RegField())
	require.Equal(t, ProbeBufferType(), dev.BufferType())
	require.Equal(t, ProbeHostBufferType(), dev.HostBufferType())
	require.True(t, dev.SupportsBuft(ProbeBufferType()))
	require.Equal(t, ProbeBufferType().Ptr(), Last().Buft)

	c := newContext(t, true)
	a := c.NewTensor2D(int(tensor.F32), 8, 2)
	h := c.NewTensor2D(int(tensor.F16), 8, 2)
	add := c.Add(a, a)
	addF16 := c.Add(h, h)
	rn := c.RMSNorm(a, 1e-5)
	require.True(t, dev.SupportsOp(add))
	require.Equal(t, add.Ptr(), Last().Tensor)
	require.False(t, dev.SupportsOp(addF16))
	require.True(t, dev.OffloadOp(rn))
	require.False(t, dev.OffloadOp(add))

	calls = Calls()
	for _, slot := range []string{"device.get_name", "device.get_description", "device.get_memory",
		"device.get_props", "device.get_buffer_type", "device.get_host_buffer_type", "device.supports_buft"} {
		require.Equal(t, 1, calls[slot], slot)
	}
	require.Equal(t, 2, calls["device.get_type"])
	require.Equal(t, 2, calls["device.supports_op"])
	require.Equal(t, 2, calls["device.offload_op"])
	require.Equal(t, dev.Ptr(), Last().Self)

	// events: made by the device, recorded/waited on by a backend
	be := dev.Init(nil)
	defer be.Free()
	ev := dev.EventNew()
	require.Equal(t, 1, Calls()["device.event_new"])
	require.Equal(t, dev, ev.DeviceField())
	ev.Record(be)
	require.Equal(t, 1, Calls()["backend.event_record"])
	require.Equal(t, be.Ptr(), Last().Self)
	require.Equal(t, ev.Ptr(), Last().Event)
	ev.Wait(be)
	require.Equal(t, 1, Calls()["backend.event_wait"])
	require.Equal(t, ev.Ptr(), Last().Event)
	ev.Synchronize()
	require.Equal(t, 1, Calls()["device.event_synchronize"])
	require.Equal(t, dev.Ptr(), Last().Self)
	require.Equal(t, ev.Ptr(), Last().Event)
	evPtr := ev.Ptr()
	ev.Free()
	require.Equal(t, 1, Calls()["device.event_free"])
	require.Equal(t, evPtr, Last().Event)
}

// The backend vtable, slot by slot, through libggml-base's public API, including a graph
// our C interpreter computes by reading op, src, ne, nb, data and op_params.
func TestBackendVtable(t *testing.T) {
	ResetProbe()
	dev := ProbeDevice()
	params := "n_threads=3"
	be := dev.Init(&params)
	require.False(t, be.IsNil())
	require.Equal(t, 1, Calls()["device.init_backend"])
	p, ok := be.ContextParams()
	require.True(t, ok)
	require.Equal(t, params, p)
	be2 := dev.Init(nil)
	require.Zero(t, Last().Params)
	_, ok = be2.ContextParams()
	require.False(t, ok, "init_backend got NULL params")

	require.Equal(t, "ABI0", be.Name(), "get_name reads the backend context")
	require.Equal(t, ProbeGUID(), be.GUID())
	require.Equal(t, dev, be.Device())
	require.Equal(t, dev, be.DeviceField())
	require.Equal(t, ProbeBufferType(), be.DefaultBufferType())
	be.Synchronize()
	require.Equal(t, 1, Calls()["backend.synchronize"])
	require.Equal(t, be.Ptr(), Last().Self)

	c := newContext(t, true)
	x := c.NewTensor2D(int(tensor.F32), 8, 4)
	y := c.NewTensor2D(int(tensor.F32), 8, 1)
	rn := c.RMSNorm(x, 1e-5)
	add := c.Add(rn, y)
	out := c.ScaleBias(add, 2, 0.5)
	x2 := c.NewTensor2D(int(tensor.F32), 8, 4)
	require.True(t, be.SupportsOp(add))
	require.True(t, be.SupportsBuft(ProbeBufferType()))
	require.True(t, be.OffloadOp(rn))
	g := c.NewGraph()
	g.BuildForwardExpand(out)

	buf := AllocCtxTensors(c, ProbeBufferType())
	require.False(t, buf.IsNil())
	defer buf.Free()
	require.Equal(t, buf.Ptr(), x.BufferPtr())

	// async tensor access
	xs := make([]float32, 32)
	for i := range xs {
		xs[i] = float32(i%7) - 2.5
	}
	ys := []float32{1, -1, 2, -2, 0.5, -0.5, 3, -3}
	be.TensorSetAsync(x, f32Bytes(xs), 0)
	require.Equal(t, 1, Calls()["backend.set_tensor_async"])
	require.Equal(t, be.Ptr(), Last().Self)
	require.Equal(t, x.Ptr(), Last().Tensor)
	require.Equal(t, uintptr(128), Last().Size)
	be.TensorSetAsync(y, f32Bytes(ys[:4]), 0)
	be.TensorSetAsync(y, f32Bytes(ys[4:]), 16)
	require.Equal(t, uintptr(16), Last().Offset)
	require.Equal(t, f32Bytes(ys), be.TensorGetAsync(y, 0, 32))
	require.Equal(t, 1, Calls()["backend.get_tensor_async"])
	require.Equal(t, 0, Calls()["buffer.set_tensor"], "the async slots were used, not the buffer's")

	be.TensorSet2DAsync(x2, pattern(24, 1), 0, 8, 3, 32, 8)
	require.Equal(t, 1, Calls()["backend.set_tensor_2d_async"])
	l := Last()
	require.Equal(t, []uintptr{0, 8, 3, 32, 8}, []uintptr{l.Offset, l.Size, l.NCopies, l.StrideTensor, l.StrideData})
	require.Equal(t, pattern(24, 1), be.TensorGet2DAsync(x2, 24, 0, 8, 3, 32, 8))
	require.Equal(t, 1, Calls()["backend.get_tensor_2d_async"])

	// cpy_tensor_async is called on the dst backend with (src backend, dst backend, src, dst)
	be.TensorCopyAsync(be2, x, x2)
	require.Equal(t, 1, Calls()["backend.cpy_tensor_async"])
	l = Last()
	require.Equal(t, be.Ptr(), l.Self, "first argument: the src backend")
	require.Equal(t, be2.Ptr(), l.Backend2)
	require.Equal(t, x.Ptr(), l.Tensor)
	require.Equal(t, x2.Ptr(), l.Tensor2)
	require.Equal(t, f32Bytes(xs), be.TensorGetAsync(x2, 0, 128))

	want := make([]float32, 32)
	for r := 0; r < 4; r++ {
		var ss float64
		for i := 0; i < 8; i++ {
			ss += float64(xs[r*8+i]) * float64(xs[r*8+i])
		}
		sc := 1 / math.Sqrt(ss/8+1e-5)
		for i := 0; i < 8; i++ {
			want[r*8+i] = float32((float64(xs[r*8+i])*sc+float64(ys[i]))*2 + 0.5)
		}
	}

	// graph plans
	plan := be.GraphPlanCreate(g)
	require.Equal(t, 1, Calls()["backend.graph_plan_create"])
	require.Equal(t, g.Ptr(), Last().Graph)
	require.Equal(t, plan.Ptr(), Last().Plan)
	require.Equal(t, StatusSuccess, be.GraphPlanCompute(plan))
	require.Equal(t, 1, Calls()["backend.graph_plan_compute"])
	require.Equal(t, []uintptr{rn.Ptr(), add.Ptr(), out.Ptr()}, Last().Seen)
	require.InDeltaSlice(t, want, bytesF32(be.TensorGetAsync(out, 0, 128)), 1e-5)
	be.GraphPlanFree(plan)
	require.Equal(t, 1, Calls()["backend.graph_plan_free"])
	require.Equal(t, plan.Ptr(), Last().Plan)

	// graph_compute (then synchronize)
	be.TensorSetAsync(out, make([]byte, 128), 0)
	syncs := Calls()["backend.synchronize"]
	require.Equal(t, StatusSuccess, be.GraphCompute(g))
	require.Equal(t, 1, Calls()["backend.graph_compute"])
	require.Equal(t, syncs+1, Calls()["backend.synchronize"])
	require.Equal(t, 3, Last().GraphNNodes)
	require.Equal(t, []uintptr{rn.Ptr(), add.Ptr(), out.Ptr()}, Last().Seen)
	require.InDeltaSlice(t, want, bytesF32(be.TensorGetAsync(out, 0, 128)), 1e-5)

	// the status travels back: an F16 node makes our interpreter return FAILED
	c2 := newContext(t, true)
	h := c2.ScaleBias(c2.NewTensor2D(int(tensor.F16), 8, 4), 2, 0)
	g2 := c2.NewGraph()
	g2.BuildForwardExpand(h)
	buf2 := AllocCtxTensors(c2, ProbeBufferType())
	defer buf2.Free()
	require.Equal(t, StatusFailed, be.GraphCompute(g2))
	require.Equal(t, 2, Calls()["backend.graph_compute"])
	require.Equal(t, []uintptr{h.Ptr()}, Last().Seen)

	be2Ptr := be2.Ptr()
	be2.Free()
	require.Equal(t, 1, Calls()["backend.free"])
	require.Equal(t, be2Ptr, Last().Self)
	be.Free()
	require.Equal(t, 2, Calls()["backend.free"])
}

// The real ggml scheduler drives the probe backend end to end: it asks the device for its
// buffer type, allocates the graph in our buffers, calls graph_optimize and graph_compute.
func TestSchedulerCompute(t *testing.T) {
	ResetProbe()
	SetProbeDeviceType(DevTypeCPU) // ggml_backend_sched_new requires a CPU last backend
	defer SetProbeDeviceType(DevTypeGPU)
	be := ProbeDevice().Init(nil)
	defer be.Free()
	sched := NewSched(be, 64)
	defer sched.Free()
	require.Equal(t, 1, Calls()["device.supports_buft"])

	c := newContext(t, true)
	x := c.NewTensor2D(int(tensor.F32), 6, 3)
	y := c.NewTensor2D(int(tensor.F32), 6, 1)
	x.SetInput()
	y.SetInput()
	rn := c.RMSNorm(x, 1e-6)
	add := c.Add(rn, y)
	out := c.ScaleBias(add, -1.5, 0.25)
	out.SetOutput()
	g := c.NewGraph()
	g.BuildForwardExpand(out)

	require.True(t, sched.AllocGraph(g))
	require.GreaterOrEqual(t, Calls()["buft.alloc_buffer"], 1)
	require.NotZero(t, x.BufferPtr())
	require.Equal(t, ProbeBufferType(), x.Buffer().Type())

	xs := []float32{1, 2, 3, 4, 5, 6, -1, 0, 1, 0, -1, 0, 0.5, 0.25, 0.125, 8, 16, 32}
	ys := []float32{0, 1, 0, -1, 0, 2}
	TensorSet(x, f32Bytes(xs), 0)
	TensorSet(y, f32Bytes(ys), 0)
	require.Equal(t, StatusSuccess, sched.GraphCompute(g))
	require.Equal(t, 1, sched.NSplits())
	calls := Calls()
	require.GreaterOrEqual(t, calls["backend.graph_optimize"], 1)
	require.NotZero(t, Last().OptParams, "the scheduler passes graph_optimize its params")
	require.GreaterOrEqual(t, calls["backend.graph_compute"], 1)
	require.Equal(t, []uintptr{rn.Ptr(), add.Ptr(), out.Ptr()}, Last().Seen)

	want := make([]float32, 18)
	for r := 0; r < 3; r++ {
		var ss float64
		for i := 0; i < 6; i++ {
			ss += float64(xs[r*6+i]) * float64(xs[r*6+i])
		}
		sc := 1 / math.Sqrt(ss/6+1e-6)
		for i := 0; i < 6; i++ {
			want[r*6+i] = float32((float64(xs[r*6+i])*sc+float64(ys[i]))*-1.5 + 0.25)
		}
	}
	require.InDeltaSlice(t, want, bytesF32(TensorGet(out, 0, 72)), 1e-5)
}

// The test binary was built from the header on disk. Go's build cache does not track C
// headers outside the package directory (go help cache), so after an edit of
// include/ggml-backend-abi.h a cached build of this package (or of capi) can be stale: this
// compiles the same layout table against the header on disk and compares.
func TestBuildMatchesHeaderOnDisk(t *testing.T) {
	root := repoRoot(t)
	cc, err := exec.Command("go", "env", "CC").Output()
	require.NoError(t, err)
	dir := t.TempDir()
	src := filepath.Join(dir, "layout.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <stdio.h>
#include <stddef.h>
#include "ggml-backend-abi.h"
#include "abi_layout.h"
#define P_SZ(T) printf("sizeof(" #T ")=%zu\n", sizeof(struct T));
#define P_OFF(T, F) printf(#T "." #F "=%zu\n", offsetof(struct T, F));
int main(void) { ABI_LAYOUT(P_SZ, P_OFF) return 0; }
`), 0o644))
	exe := filepath.Join(dir, "layout")
	ccArgs := strings.Fields(strings.TrimSpace(string(cc)))
	args := append(ccArgs[1:], "-I"+filepath.Join(root, "include"), "-I"+filepath.Join(root, "include", "abi"),
		"-o", exe, src)
	out, err := exec.Command(ccArgs[0], args...).CombinedOutput()
	require.NoError(t, err, "compiling the layout table: %s", out)
	out, err = exec.Command(exe).Output()
	require.NoError(t, err)
	onDisk := map[string]uintptr{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, val, ok := strings.Cut(line, "=")
		require.True(t, ok, line)
		v, err := strconv.ParseUint(val, 10, 64)
		require.NoError(t, err)
		onDisk[name] = uintptr(v)
	}
	require.Equal(t, onDisk, Layout(), "this test binary was built from another include/ggml-backend-abi.h "+
		"than the one on disk (stale Go build cache): run go clean -cache, or go test -a")
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test directory")
		dir = parent
	}
}

// The built library exports exactly the public API (docs/ARCHITECTURE.md: a version script keeps the
// bundled wgpu-native symbols in), needs libggml-base.so and finds it next to itself.
func TestLibraryExports(t *testing.T) {
	lib := filepath.Join(repoRoot(t), "build", "libggml-wgpu.so")
	_, err := os.Stat(lib)
	require.NoError(t, err, "%s is missing: run scripts/build.sh first", lib)

	out, err := exec.Command("nm", "-D", "--defined-only", lib).CombinedOutput()
	require.NoError(t, err, "nm: %s", out)
	var text, other []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kind, name := f[len(f)-2], f[len(f)-1]
		name, _, _ = strings.Cut(name, "@")
		switch kind {
		case "T", "t", "W", "i":
			text = append(text, name)
		case "A": // version definitions of a version script
		default:
			other = append(other, kind+" "+name)
		}
	}
	sort.Strings(text)
	require.Equal(t, []string{
		"ggml_backend_init",
		"ggml_backend_is_wgpu",
		"ggml_backend_score",
		"ggml_backend_wgpu_device_count",
		"ggml_backend_wgpu_reg",
	}, text, "defined dynamic text symbols of %s", lib)
	require.Empty(t, other, "defined dynamic data symbols of %s", lib)

	out, err = exec.Command("readelf", "-d", lib).CombinedOutput()
	require.NoError(t, err, "readelf: %s", out)
	dyn := string(out)
	require.Contains(t, dyn, "(NEEDED)             Shared library: [libggml-base.so]")
	require.Regexp(t, `\(RUNPATH\)\s+Library runpath: \[\$ORIGIN\]`, dyn)
}
