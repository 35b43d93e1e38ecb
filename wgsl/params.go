package wgsl

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// SlotSize is the size of one parameter slot: the uniform window each dispatch sees. It is
// the largest minUniformBufferOffsetAlignment among the drivers we run on.
const SlotSize = 256

// ParamsDecl returns the WGSL declaration of the uniform struct `p` for a Go parameter
// struct: its fields in order (uint32 -> u32, int32 -> i32, float32 -> f32), followed by one
// `<operand>_off: u32` field per operand, the operand's first element within its binding.
func ParamsDecl(t reflect.Type, operands []Operand) (string, error) {
	var b strings.Builder
	b.WriteString("struct Params {\n")
	n := 0
	if t != nil {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			var ty string
			switch f.Type.Kind() {
			case reflect.Uint32:
				ty = "u32"
			case reflect.Int32:
				ty = "i32"
			case reflect.Float32:
				ty = "f32"
			default:
				return "", fmt.Errorf("wgsl: params field %s.%s has unsupported type %s", t.Name(), f.Name, f.Type)
			}
			fmt.Fprintf(&b, "  %s: %s,\n", f.Name, ty)
			n++
		}
	}
	for _, o := range operands {
		fmt.Fprintf(&b, "  %s_off: u32,\n", o.Name)
		n++
	}
	if n == 0 {
		b.WriteString("  unused: u32,\n")
		n++
	}
	if 4*n > SlotSize {
		return "", fmt.Errorf("wgsl: params of %d words exceed a %d-byte slot", n, SlotSize)
	}
	b.WriteString("}\n@group(0) @binding(0) var<uniform> p: Params;\n")
	return b.String(), nil
}

// EncodeParams writes a parameter struct value followed by the operand element offsets into
// dst (at least SlotSize bytes), in the layout ParamsDecl declares.
func EncodeParams(dst []byte, params any, offsets []uint32) error {
	off := 0
	if params != nil {
		v := reflect.ValueOf(params)
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			var w uint32
			switch f.Kind() {
			case reflect.Uint32:
				w = uint32(f.Uint())
			case reflect.Int32:
				w = uint32(int32(f.Int()))
			case reflect.Float32:
				w = math.Float32bits(float32(f.Float()))
			default:
				return fmt.Errorf("wgsl: params field %d has unsupported kind %s", i, f.Kind())
			}
			binary.LittleEndian.PutUint32(dst[off:], w)
			off += 4
		}
	}
	for _, o := range offsets {
		binary.LittleEndian.PutUint32(dst[off:], o)
		off += 4
	}
	return nil
}
