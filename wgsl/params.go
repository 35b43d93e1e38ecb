package wgsl

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// SlotSize is the size of one parameter slot: the uniform window each dispatch sees. It is
// the largest minUniformBufferOffsetAlignment among the drivers we run on.
const SlotSize = 256

// A parameter struct's fields are uint32, int32 and float32 scalars (WGSL u32, i32, f32)
// and [4] arrays of them (vec4<u32>, vec4<i32>, vec4<f32>); an embedded struct's fields
// take its place, in order (a fused kernel's parameters extend those of the kernel whose
// WGSL functions it shares). In the uniform address space a
// scalar is 4-byte aligned and a vec4 16-byte aligned: scalars stay packed, and a vec4 that
// would start off a 16-byte boundary is preceded by u32 padding fields. The struct's size
// is its end rounded up to its alignment, and it must fit one slot.

// paramField is one member of the uniform struct: a field of the Go struct, a padding
// word, or an operand's element offset.
type paramField struct {
	name   string
	wgsl   string       // WGSL type
	kind   reflect.Kind // element kind (Uint32, Int32 or Float32)
	index  []int        // Go field index path (reflect's FieldByIndex); nil for padding and operand offsets
	offset int          // byte offset in the slot
	words  int          // 1, or 4 for a vec4
}

// paramLayout is the member list of a uniform struct and its size in bytes.
type paramLayout struct {
	fields []paramField
	size   int
	pads   int // padding fields so far
}

// layouts caches paramLayout by parameter struct type (without operand offsets).
var layouts sync.Map

var scalarTypes = map[reflect.Kind]string{reflect.Uint32: "u32", reflect.Int32: "i32", reflect.Float32: "f32"}

// layoutOf lays out a parameter struct type (nil: no fields).
func layoutOf(t reflect.Type) (*paramLayout, error) {
	if t == nil {
		return &paramLayout{}, nil
	}
	if l, ok := layouts.Load(t); ok {
		return l.(*paramLayout), nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("wgsl: params type %s is not a struct", t)
	}
	l := &paramLayout{}
	if err := l.add(t, nil); err != nil {
		return nil, err
	}
	layouts.Store(t, l)
	return l, nil
}

// add appends the fields of struct type t (an embedded struct's in its place), whose
// values lie at the Go field index path at.
func (l *paramLayout) add(t reflect.Type, at []int) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), at...), i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := l.add(f.Type, index); err != nil {
				return err
			}
			continue
		}
		kind, words := f.Type.Kind(), 1
		if kind == reflect.Array && f.Type.Len() == 4 {
			kind, words = f.Type.Elem().Kind(), 4
		}
		ty, ok := scalarTypes[kind]
		if !ok {
			return fmt.Errorf("wgsl: params field %s.%s has unsupported type %s", t.Name(), f.Name, f.Type)
		}
		if words == 4 {
			ty = "vec4<" + ty + ">"
			for l.size%16 != 0 {
				l.fields = append(l.fields, paramField{name: fmt.Sprintf("pad_%d", l.pads), wgsl: "u32", kind: reflect.Uint32, offset: l.size, words: 1})
				l.pads++
				l.size += 4
			}
		}
		l.fields = append(l.fields, paramField{name: f.Name, wgsl: ty, kind: kind, index: index, offset: l.size, words: words})
		l.size += 4 * words
	}
	return nil
}

// withOperands appends one `<operand>_off: u32` member per operand (at least one member
// in all: WGSL has no empty structs) and returns the member list and the struct's size.
func (l *paramLayout) withOperands(names []string) ([]paramField, int) {
	fields := append([]paramField(nil), l.fields...)
	end := l.size
	for _, n := range names {
		fields = append(fields, paramField{name: n + "_off", wgsl: "u32", kind: reflect.Uint32, offset: end, words: 1})
		end += 4
	}
	if len(fields) == 0 {
		fields = append(fields, paramField{name: "unused", wgsl: "u32", kind: reflect.Uint32, words: 1})
		end += 4
	}
	align := 4
	for _, f := range fields {
		align = max(align, 4*f.words)
	}
	return fields, (end + align - 1) / align * align
}

// ParamsDecl returns the WGSL declaration of the uniform struct `p` for a Go parameter
// struct: its fields in order (uint32 -> u32, int32 -> i32, float32 -> f32, [4] arrays of
// those -> vec4 of them, after padding to a 16-byte boundary), followed by one
// `<operand>_off: u32` field per operand, the operand's first element within its binding.
// It fails if the struct does not fit one SlotSize slot.
func ParamsDecl(t reflect.Type, operands []Operand) (string, error) {
	decl, _, err := paramsStruct(t, operands)
	if err != nil {
		return "", err
	}
	return decl + "@group(0) @binding(0) var<uniform> p: Params;\n", nil
}

// paramsStruct returns the WGSL struct Params of ParamsDecl and its members, or fails if
// it does not fit one SlotSize slot.
func paramsStruct(t reflect.Type, operands []Operand) (string, []paramField, error) {
	l, err := layoutOf(t)
	if err != nil {
		return "", nil, err
	}
	names := make([]string, len(operands))
	for i, o := range operands {
		names[i] = o.Name
	}
	fields, size := l.withOperands(names)
	if size > SlotSize {
		return "", nil, fmt.Errorf("wgsl: params of %d bytes exceed a %d-byte slot", size, SlotSize)
	}
	var b strings.Builder
	b.WriteString("struct Params {\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "  %s: %s,\n", f.name, f.wgsl)
	}
	b.WriteString("}\n")
	return b.String(), fields, nil
}

// EncodeParams writes a parameter struct value followed by the operand element offsets into
// dst (at least SlotSize bytes), in the layout ParamsDecl declares; padding is zeroed.
func EncodeParams(dst []byte, params any, offsets []uint32) error {
	var v reflect.Value
	var t reflect.Type
	if params != nil {
		v = reflect.ValueOf(params)
		if v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		t = v.Type()
	}
	l, err := layoutOf(t)
	if err != nil {
		return err
	}
	end := l.size
	if end+4*len(offsets) > len(dst) {
		return fmt.Errorf("wgsl: params of %d bytes exceed a %d-byte slot", end+4*len(offsets), len(dst))
	}
	for _, f := range l.fields {
		if f.index == nil {
			binary.LittleEndian.PutUint32(dst[f.offset:], 0)
			continue
		}
		fv := v.FieldByIndex(f.index)
		for w := 0; w < f.words; w++ {
			e := fv
			if f.words > 1 {
				e = fv.Index(w)
			}
			var word uint32
			switch f.kind {
			case reflect.Uint32:
				word = uint32(e.Uint())
			case reflect.Int32:
				word = uint32(int32(e.Int()))
			case reflect.Float32:
				word = math.Float32bits(float32(e.Float()))
			}
			binary.LittleEndian.PutUint32(dst[f.offset+4*w:], word)
		}
	}
	for i, o := range offsets {
		binary.LittleEndian.PutUint32(dst[end+4*i:], o)
	}
	return nil
}

// paramsConst is ParamsDecl with p a module constant holding the values of slot, a
// dispatch's encoded parameters (EncodeParams), instead of the uniform binding
// (Spec.Constants). It fails for a slot with a non-finite float, which has no literal.
func paramsConst(t reflect.Type, operands []Operand, slot []byte) (string, error) {
	decl, fields, err := paramsStruct(t, operands)
	if err != nil {
		return "", err
	}
	if len(slot) < SlotSize {
		return "", fmt.Errorf("wgsl: a parameter slot of %d bytes", len(slot))
	}
	var b strings.Builder
	b.WriteString(decl)
	b.WriteString("const p = Params(")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		vals := make([]string, f.words)
		for w := range vals {
			word := binary.LittleEndian.Uint32(slot[f.offset+4*w:])
			switch f.kind {
			case reflect.Int32:
				vals[w] = fmt.Sprintf("%di", int32(word))
			case reflect.Float32:
				v := math.Float32frombits(word)
				if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
					return "", fmt.Errorf("wgsl: non-finite parameter")
				}
				// the f32's exact value, shortest as an f64: read as f64 or as f32, the
				// literal is that f32
				vals[w] = strconv.FormatFloat(float64(v), 'e', -1, 64) + "f"
			default:
				vals[w] = fmt.Sprintf("%du", word)
			}
		}
		if f.words > 1 {
			fmt.Fprintf(&b, "%s(%s)", f.wgsl, strings.Join(vals, ", "))
		} else {
			b.WriteString(vals[0])
		}
	}
	b.WriteString(");\n")
	return b.String(), nil
}
