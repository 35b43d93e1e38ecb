package wgsl

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type testParams struct {
	N     uint32
	Shift int32
	Scale float32
}

func TestPreprocess(t *testing.T) {
	var b strings.Builder
	src := "a\n#if X\nb {{V}}\n#if Y\nc\n#else\nd\n#endif\n#else\ne\n#endif\nf"
	require.NoError(t, preprocess(&b, src, map[string]string{"X": "1", "Y": "0", "V": "7"}))
	require.Equal(t, "a\nb 7\nd\nf\n", b.String())
	b.Reset()
	require.NoError(t, preprocess(&b, src, map[string]string{"X": "", "V": "7"}))
	require.Equal(t, "a\ne\nf\n", b.String())
	require.Error(t, preprocess(&b, "#if X\n", nil), "missing #endif")
	require.Error(t, preprocess(&b, "#endif\n", nil), "stray #endif")
	require.Error(t, preprocess(&b, "{{NOPE}}\n", nil), "undefined value")
	require.Error(t, preprocess(&b, "#pragma\n", nil), "unknown directive")
	require.Error(t, preprocess(&b, "#include nothing_here\n", nil), "missing include")
	b.Reset()
	require.NoError(t, preprocess(&b, "#if X\n#include nothing_here\n#endif\n#include elementwise\n", map[string]string{"WG": "64"}))
	require.Contains(t, b.String(), "@workgroup_size(64)", "an include is preprocessed with the same defines")
}

func TestPreprocessFor(t *testing.T) {
	var b strings.Builder
	src := "a\n#for I {{N}}\nx{{I}} {{V}}\n#if Y\ny{{I}}\n#endif\n#endfor\nb"
	require.NoError(t, preprocess(&b, src, map[string]string{"N": "3", "V": "v", "Y": "1"}))
	require.Equal(t, "a\nx0 v\ny0\nx1 v\ny1\nx2 v\ny2\nb\n", b.String())
	b.Reset()
	require.NoError(t, preprocess(&b, "#if X\n#for I 2\nz{{I}}\n#endfor\n#endif\nq", nil))
	require.Equal(t, "q\n", b.String(), "a #for under a false #if emits nothing")
	b.Reset()
	require.NoError(t, preprocess(&b, "#for I 0\nz\n#endfor\nw", nil))
	require.Equal(t, "w\n", b.String(), "zero repeats")
	require.Error(t, preprocess(&b, "#for I 2\nz\n", nil), "missing #endfor")
	require.Error(t, preprocess(&b, "#endfor\n", nil), "stray #endfor")
	b.Reset()
	require.NoError(t, preprocess(&b, "#for I 2\n#for J {{N{{I}}}}\nz{{I}}{{J}}\n#endfor\n#if Y{{I}}\ny{{I}}\n#endif\n#endfor",
		map[string]string{"N0": "1", "N1": "2", "Y1": "1"}))
	require.Equal(t, "z00\nz10\nz11\ny1\n", b.String(), "nested #for, names built from the loop variable")
	b.Reset()
	require.NoError(t, preprocess(&b, "a }} {{V}} }}", map[string]string{"V": "7"}))
	require.Equal(t, "a }} 7 }}\n", b.String(), "braces of the code itself")
	require.Error(t, preprocess(&b, "#for I 2\n#for J 2\n#endfor\n", nil), "nested #for without its #endfor")
	require.Error(t, preprocess(&b, "{{A{{I}}}}\n", map[string]string{"I": "0"}), "undefined built name")
	require.Error(t, preprocess(&b, "#for I x\nz\n#endfor\n", nil), "count not a number")
	require.Error(t, preprocess(&b, "#for I\nz\n#endfor\n", nil), "no count")
}

type arrayParams struct {
	N     uint32
	Ne    [4]uint32
	Shift int32
	Off   [4]int32
	Scale [4]float32
	Eps   float32
}

// words returns a struct type of n uint32 fields, followed by a [4]uint32 if vec is set.
func words(n int, vec bool) reflect.Type {
	var fs []reflect.StructField
	for i := 0; i < n; i++ {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("W%d", i), Type: reflect.TypeOf(uint32(0))})
	}
	if vec {
		fs = append(fs, reflect.StructField{Name: "V", Type: reflect.TypeOf([4]uint32{})})
	}
	return reflect.StructOf(fs)
}

func TestParamsLayout(t *testing.T) {
	ops := []Operand{{Name: "src0", Type: F32}, {Name: "dst", Type: F16, Written: true}}
	decl, err := ParamsDecl(reflect.TypeOf(testParams{}), ops)
	require.NoError(t, err)
	require.Contains(t, decl, "N: u32,\n  Shift: i32,\n  Scale: f32,\n  src0_off: u32,\n  dst_off: u32,")
	buf := make([]byte, SlotSize)
	require.NoError(t, EncodeParams(buf, testParams{N: 5, Shift: -1, Scale: 1.5}, []uint32{9, 10}))
	require.Equal(t, []byte{5, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xc0, 0x3f, 9, 0, 0, 0, 10, 0, 0, 0}, buf[:20])
	type tooBig struct{ A [70]uint32 }
	_, err = ParamsDecl(reflect.TypeOf(tooBig{}), nil)
	require.Error(t, err)
	_, err = ParamsDecl(words(65, false), nil)
	require.ErrorContains(t, err, "exceed")

	// [4] arrays are vec4 members, 16-byte aligned: padding words precede them as needed.
	decl, err = ParamsDecl(reflect.TypeOf(arrayParams{}), ops)
	require.NoError(t, err)
	require.Equal(t, "struct Params {\n"+
		"  N: u32,\n  pad_0: u32,\n  pad_1: u32,\n  pad_2: u32,\n"+ // vec4 members start on 16 bytes
		"  Ne: vec4<u32>,\n"+
		"  Shift: i32,\n  pad_3: u32,\n  pad_4: u32,\n  pad_5: u32,\n"+
		"  Off: vec4<i32>,\n"+
		"  Scale: vec4<f32>,\n"+ // already aligned: no padding
		"  Eps: f32,\n"+
		"  src0_off: u32,\n  dst_off: u32,\n"+
		"}\n@group(0) @binding(0) var<uniform> p: Params;\n", decl)

	buf = make([]byte, SlotSize)
	for i := range buf {
		buf[i] = 0xaa
	}
	v := arrayParams{N: 5, Ne: [4]uint32{1, 2, 3, 4}, Shift: -1, Off: [4]int32{-2, 0, 0, 7}, Scale: [4]float32{1.5, 0, 0, -2}, Eps: 0.25}
	require.NoError(t, EncodeParams(buf, v, []uint32{9, 10}))
	require.Equal(t, []byte{
		5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // N, padding zeroed
		1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, // Ne at 16
		0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // Shift, padding
		0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, // Off at 48
		0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, // Scale at 64
		0, 0, 0x80, 0x3e, // Eps at 80
		9, 0, 0, 0, 10, 0, 0, 0, // operand offsets at 84
		0xaa, // untouched
	}, buf[:93])
	buf2 := make([]byte, SlotSize)
	require.NoError(t, EncodeParams(buf2, &v, []uint32{9, 10}), "a pointer to the struct encodes the same")
	require.Equal(t, buf[:92], buf2[:92])

	// 57 words and a vec4 would take 244 bytes packed, but the vec4 starts at 240: with one
	// operand offset the struct (260 bytes, rounded up to its 16-byte alignment) no longer
	// fits a slot.
	_, err = ParamsDecl(words(57, true), nil)
	require.NoError(t, err)
	_, err = ParamsDecl(words(57, true), ops[:1])
	require.ErrorContains(t, err, "272 bytes exceed")
	require.Error(t, EncodeParams(buf, reflect.New(words(57, true)).Elem().Interface(), []uint32{1}))
	_, err = ParamsDecl(words(56, true), ops[:1])
	require.NoError(t, err)

	type vec2 struct{ V [2]uint32 }
	_, err = ParamsDecl(reflect.TypeOf(vec2{}), nil)
	require.Error(t, err, "only 4-element arrays")
	type u64 struct{ V [4]uint64 }
	_, err = ParamsDecl(reflect.TypeOf(u64{}), nil)
	require.Error(t, err, "only 32-bit elements")
}

func TestSpecKeyDistinguishesVariants(t *testing.T) {
	a := &Spec{Kernel: "binary", Defines: map[string]string{"OP": "+"}, Operands: []Operand{{Name: "src0", Type: F32}}, Workgroup: 64}
	b := &Spec{Kernel: "binary", Defines: map[string]string{"OP": "-"}, Operands: []Operand{{Name: "src0", Type: F32}}, Workgroup: 64}
	c := &Spec{Kernel: "binary", Defines: map[string]string{"OP": "+"}, Operands: []Operand{{Name: "src0", Type: F16}}, Workgroup: 64}
	require.NotEqual(t, a.Key(), b.Key())
	require.NotEqual(t, a.Key(), c.Key())
	_, err := Source(&Spec{Kernel: "no_such_kernel"})
	require.Error(t, err)
}

// TestReadOnlyOperands: a ReadOnly operand is declared var<storage, read>, its own pipeline,
// and counted in the layout's read-only bits; a written one cannot be.
func TestReadOnlyOperands(t *testing.T) {
	spec := func(ro bool) *Spec {
		return &Spec{Kernel: "binary", Defines: map[string]string{"OP": "+"}, Operands: []Operand{
			{Name: "src0", Type: F32, ReadOnly: ro}, {Name: "src1", Type: F16}, {Name: "dst", Type: F32, Written: true}},
			Params: reflect.TypeOf(struct{ N uint32 }{}), Workgroup: 64}
	}
	rw, ro := spec(false), spec(true)
	require.NotEqual(t, rw.Key(), ro.Key())
	require.Zero(t, rw.ReadOnly())
	require.Equal(t, uint32(1), ro.ReadOnly())
	a, err := Source(rw)
	require.NoError(t, err)
	b, err := Source(ro)
	require.NoError(t, err)
	require.Contains(t, a, "@binding(1) var<storage, read_write> src0: array<f32>;")
	require.Contains(t, b, "@binding(1) var<storage, read> src0: array<f32>;")
	require.Contains(t, b, "@binding(2) var<storage, read_write> src1: ")
	bad := spec(false)
	bad.Operands[2].ReadOnly = true
	_, err = Source(bad)
	require.ErrorContains(t, err, "both written and read-only")
}

func TestQuantizedFormats(t *testing.T) {
	for f, want := range map[Format]struct {
		name         string
		elems, bytes int
	}{Q8_0: {"q8_0", 32, 34}, Q4_0: {"q4_0", 32, 18}, Q4_1: {"q4_1", 32, 20}, Q5_0: {"q5_0", 32, 22}, Q5_1: {"q5_1", 32, 24},
		Q2_K: {"q2_K", 256, 84}, Q3_K: {"q3_K", 256, 110}, Q4_K: {"q4_K", 256, 144}, Q5_K: {"q5_K", 256, 176}, Q6_K: {"q6_K", 256, 210},
		MXFP4: {"mxfp4", 32, 17}, NVFP4: {"nvfp4", 64, 36}, TQ1_0: {"tq1_0", 256, 54}, TQ2_0: {"tq2_0", 256, 66},
		Q1_0: {"q1_0", 128, 18}, Q2_0: {"q2_0", 64, 18},

		IQ4_NL: {"iq4_nl", 32, 18}, IQ4_XS: {"iq4_xs", 256, 136}, IQ2_XXS: {"iq2_xxs", 256, 66}, IQ2_XS: {"iq2_xs", 256, 74},
		IQ2_S: {"iq2_s", 256, 82}, IQ3_XXS: {"iq3_xxs", 256, 98}, IQ3_S: {"iq3_s", 256, 110}, IQ1_S: {"iq1_s", 256, 50}, IQ1_M: {"iq1_m", 256, 56}} {
		require.True(t, f.Quantized())
		require.Equal(t, want.name, f.String())
		require.Equal(t, want.elems, f.BlockElems())
		require.Equal(t, want.bytes, f.BlockBytes())
		require.Equal(t, 1, f.OffsetUnit(), "%s blocks start at any byte", f)
		src, err := Source(&Spec{Kernel: "get_rows", Defines: map[string]string{"QUANT": "1"}, Workgroup: 64,
			Operands: []Operand{{Name: "src0", Type: f, Vec: true}, {Name: "src1", Type: I32}, {Name: "dst", Type: F32, Written: true}}})
		require.NoError(t, err)
		require.Contains(t, src, "fn src0_get8(i: u32) -> mat2x4<f32>")
		require.Contains(t, src, "src0: array<u32>;")
		require.NotContains(t, src, "NAME", "every placeholder is replaced")
		_, err = Source(&Spec{Kernel: "get_rows", Workgroup: 64,
			Operands: []Operand{{Name: "src0", Type: f}, {Name: "src1", Type: I32}, {Name: "dst", Type: F32, Written: true}}})
		require.Error(t, err, "%s is read eight elements at a time only", f)
	}
	require.False(t, F16.Quantized())
	require.Equal(t, 2, F16.OffsetUnit())
	require.False(t, BF16.Quantized())
	require.Equal(t, 2, BF16.OffsetUnit())
	require.Equal(t, "bf16", BF16.String())
}

// TestPairDistances checks that every pair distance splits a block's eighth groups into
// pairs (s, s + D), as the mat-vec kernel's invocations take them.
func TestPairDistances(t *testing.T) {
	for f, d := range quantPairs {
		e := f.BlockElems() / 8
		require.True(t, d > 0 && d&(d-1) == 0 && 2*d <= e, "%s: distance %d, %d groups", f, d, e)
		seen := map[int]bool{}
		for lane := 0; lane < e/2; lane++ {
			s := (lane/d)*2*d + lane%d
			seen[s], seen[s+d] = true, true
		}
		require.Len(t, seen, e, "%s: every group once", f)
	}
}

// embeddedParams extends arrayParams the way a fused kernel's parameters extend those of
// the kernel whose functions it shares.
type embeddedParams struct {
	arrayParams
	More uint32
	Tail [4]uint32
}

func TestParamsEmbeddedStruct(t *testing.T) {
	ops := []Operand{{Name: "src0", Type: F32}}
	base, err := ParamsDecl(reflect.TypeOf(arrayParams{}), nil)
	require.NoError(t, err)
	decl, err := ParamsDecl(reflect.TypeOf(embeddedParams{}), ops)
	require.NoError(t, err)
	head := strings.TrimSuffix(base, "}\n@group(0) @binding(0) var<uniform> p: Params;\n")
	require.True(t, strings.HasPrefix(decl, head), "the embedded struct's members come first, laid out as its own:\n%s", decl)
	require.Contains(t, decl, "  Eps: f32,\n  More: u32,\n  pad_6: u32,\n  pad_7: u32,\n  Tail: vec4<u32>,\n  src0_off: u32,\n")
	v := embeddedParams{arrayParams: arrayParams{N: 5, Eps: 0.25}, More: 7, Tail: [4]uint32{1, 2, 3, 4}}
	buf := make([]byte, SlotSize)
	require.NoError(t, EncodeParams(buf, v, []uint32{9}))
	require.Equal(t, []byte{5, 0, 0, 0}, buf[:4])
	require.Equal(t, []byte{0, 0, 0x80, 0x3e, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 9, 0, 0, 0}, buf[80:116])
}

// TestParamsConstants: a spec with Constants declares p as a module constant holding the
// encoded slot's values (every member, padding included, each float exactly), keys a
// pipeline of its own, and keeps the uniform binding for a slot it cannot write as
// literals (a non-finite float).
func TestParamsConstants(t *testing.T) {
	ops := []Operand{{Name: "src0", Type: F32}, {Name: "dst", Type: F32, Written: true}}
	v := arrayParams{N: 5, Ne: [4]uint32{1, 2, 3, 4000000000}, Shift: -1, Off: [4]int32{-2, 0, 0, 7},
		Scale: [4]float32{1.5, 0, 1e-7, -2}, Eps: 0.1}
	slot := make([]byte, SlotSize)
	require.NoError(t, EncodeParams(slot, v, []uint32{9, 10}))
	decl, err := paramsConst(reflect.TypeOf(arrayParams{}), ops, slot)
	require.NoError(t, err)
	require.Contains(t, decl, "  Eps: f32,\n  src0_off: u32,\n  dst_off: u32,\n}\n")
	require.Contains(t, decl, "const p = Params(5u, 0u, 0u, 0u, vec4<u32>(1u, 2u, 3u, 4000000000u), -1i, 0u, 0u, 0u, "+
		"vec4<i32>(-2i, 0i, 0i, 7i), vec4<f32>(1.5e+00f, 0e+00f, 1.0000000116860974e-07f, -2e+00f), 1.0000000149011612e-01f, 9u, 10u);\n")
	require.NotContains(t, decl, "var<uniform>")

	spec := &Spec{Kernel: "unary", Defines: map[string]string{"OP": "x"}, Operands: ops, Params: reflect.TypeOf(arrayParams{}), Workgroup: 64}
	withConsts := *spec
	withConsts.Constants = slot
	require.NotEqual(t, spec.Key(), withConsts.Key())
	other := append([]byte(nil), slot...)
	other[0] = 6
	withOther := withConsts
	withOther.Constants = other
	require.NotEqual(t, withConsts.Key(), withOther.Key(), "one pipeline per slot")

	v.Eps = float32(math.Inf(1))
	require.NoError(t, EncodeParams(slot, v, []uint32{9, 10}))
	_, err = paramsConst(reflect.TypeOf(arrayParams{}), ops, slot)
	require.ErrorContains(t, err, "non-finite")
}

// TestVec16Operands: a read quantized operand taken as 16-byte words is declared an array
// of vec4<u32> with NAME_v16 and none of the format's accessors, keys its own pipeline,
// and is refused for a written or unquantized operand.
func TestVec16Operands(t *testing.T) {
	spec := func(src0 Operand) *Spec {
		return &Spec{Kernel: "binary", Defines: map[string]string{"OP": "+"}, Operands: []Operand{
			src0, {Name: "src1", Type: F32}, {Name: "dst", Type: F32, Written: true}},
			Params: reflect.TypeOf(struct{ N uint32 }{}), Workgroup: 64}
	}
	words := spec(Operand{Name: "src0", Type: Q4_K, Vec16: true, ReadOnly: true})
	require.NotEqual(t, spec(Operand{Name: "src0", Type: Q4_K, Vec: true, ReadOnly: true}).Key(), words.Key())
	src, err := Source(words)
	require.NoError(t, err)
	require.Contains(t, src, "@binding(1) var<storage, read> src0: array<vec4<u32>>;")
	require.Contains(t, src, "fn src0_v16(v: u32) -> vec4<u32> { return src0[v]; }")
	require.NotContains(t, src, "fn src0_get8(")
	_, err = Source(spec(Operand{Name: "src0", Type: F32, Vec16: true}))
	require.ErrorContains(t, err, "only read quantized operands")
	_, err = Source(spec(Operand{Name: "src0", Type: Q4_K, Vec16: true, Written: true}))
	require.ErrorContains(t, err, "only read quantized operands")
}

// TestCounters: a Spec.Counters kernel binds the counters after its operands (and the
// tables), read-write, and its pipeline is another than the kernel's without them.
func TestCounters(t *testing.T) {
	spec := &Spec{Kernel: "binary", Defines: map[string]string{"OP": "+"}, Operands: []Operand{
		{Name: "src0", Type: F32}, {Name: "src1", Type: F32}, {Name: "dst", Type: F32, Written: true}},
		Params: reflect.TypeOf(struct{ N uint32 }{}), Workgroup: 64}
	with := *spec
	with.Counters = true
	require.NotEqual(t, spec.Key(), with.Key())
	require.Equal(t, 3, spec.Bindings())
	require.Equal(t, 4, with.Bindings())
	require.Zero(t, with.ReadOnly(), "the counters are written")
	src, err := Source(&with)
	require.NoError(t, err)
	require.Contains(t, src, fmt.Sprintf("@binding(4) var<storage, read_write> counters: array<atomic<u32>, %d>;", CounterSlots))
	plain, err := Source(spec)
	require.NoError(t, err)
	require.NotContains(t, plain, "counters")
}
