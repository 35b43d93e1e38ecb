package wgsl

import (
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
