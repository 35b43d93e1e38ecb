package wgsl

import "fmt"

// Format is the storage format of an operand, as the kernels see it.
type Format int

// Formats the kernels can read (and, for F32, F16 and I32, write).
const (
	F32 Format = iota
	F16
	I32
	I64 // read only; values outside the i32 range read as -1
)

func (f Format) String() string {
	switch f {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case I32:
		return "i32"
	case I64:
		return "i64"
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// ElemSize is the size of one element in bytes.
func (f Format) ElemSize() int {
	switch f {
	case F16:
		return 2
	case I64:
		return 8
	}
	return 4
}

// accessors declares the binding of an operand and the functions that read and write its
// elements. Indices are element indices relative to the operand's first element.
func (f Format) accessors(name string, binding int, written bool) string {
	decl := fmt.Sprintf("@group(0) @binding(%d) var<storage, read_write> %s: ", binding, name)
	switch f {
	case F32:
		s := decl + "array<f32>;\n" +
			fmt.Sprintf("fn %[1]s_get(i: u32) -> f32 { return %[1]s[p.%[1]s_off + i]; }\n", name)
		if written {
			s += fmt.Sprintf("fn %[1]s_set(i: u32, v: f32) { %[1]s[p.%[1]s_off + i] = v; }\n", name)
		}
		return s
	case I32:
		s := decl + "array<i32>;\n" +
			fmt.Sprintf("fn %[1]s_geti(i: u32) -> i32 { return %[1]s[p.%[1]s_off + i]; }\n", name)
		if written {
			s += fmt.Sprintf("fn %[1]s_seti(i: u32, v: i32) { %[1]s[p.%[1]s_off + i] = v; }\n", name)
		}
		return s
	case I64:
		// A value outside the i32 range reads as -1, which every index check rejects.
		return decl + "array<i32>;\n" + fmt.Sprintf(
			"fn %[1]s_geti(i: u32) -> i32 {\n"+
				"  let e = 2u * (p.%[1]s_off + i); let lo = %[1]s[e];\n"+
				"  return select(-1, lo, %[1]s[e + 1u] == select(0, -1, lo < 0));\n}\n", name)
	case F16:
		// Two halves per u32 word. Written f16 operands are atomic so that neighbouring
		// halves stored by different invocations do not clobber each other.
		if !written {
			return decl + "array<u32>;\n" + fmt.Sprintf(
				"fn %[1]s_get(i: u32) -> f32 { let e = p.%[1]s_off + i; return unpack2x16float(%[1]s[e >> 1u])[e & 1u]; }\n", name)
		}
		return decl + "array<atomic<u32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get(i: u32) -> f32 { let e = p.%[1]s_off + i; return unpack2x16float(atomicLoad(&%[1]s[e >> 1u]))[e & 1u]; }\n"+
				"fn %[1]s_set(i: u32, v: f32) {\n"+
				"  let e = p.%[1]s_off + i; let sh = (e & 1u) * 16u;\n"+
				"  let h = pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu;\n"+
				"  atomicAnd(&%[1]s[e >> 1u], ~(0xffffu << sh));\n"+
				"  atomicOr(&%[1]s[e >> 1u], h << sh);\n}\n", name)
	}
	panic("wgsl: unknown format")
}

// vecAccessors declares a read-only operand as 16-byte vectors and NAME_get8(i), which
// returns elements i..i+7 as the two columns of a mat2x4<f32>.
func (f Format) vecAccessors(name string, binding int) (string, error) {
	decl := fmt.Sprintf("@group(0) @binding(%d) var<storage, read_write> %s: ", binding, name)
	switch f {
	case F32:
		return decl + "array<vec4<f32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get8(i: u32) -> mat2x4<f32> { let e = (p.%[1]s_off + i) >> 2u; return mat2x4<f32>(%[1]s[e], %[1]s[e + 1u]); }\n", name), nil
	case F16:
		return decl + "array<vec4<u32>>;\n" + fmt.Sprintf(
			"fn %[1]s_get8(i: u32) -> mat2x4<f32> {\n"+
				"  let w = %[1]s[(p.%[1]s_off + i) >> 3u];\n"+
				"  return mat2x4<f32>(vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)), vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w)));\n}\n", name), nil
	}
	return "", fmt.Errorf("wgsl: no vector access for %s", f)
}
