package wgsl

import "fmt"

// vecWriter declares NAME_set8(i, v) for a written Vec operand: it stores elements
// i..i+7 (the two columns of v; i and the operand's first element multiples of 8) as one
// 16-byte vector. Only F16 has it (rounded to nearest by pack2x16float): the eight halves
// fill whole words, so no neighbouring element shares them and no atomics are needed. The
// operand is declared by vecAccessors as vec4<u32>, which reads it back with NAME_get8.
func (f Format) vecWriter(name string) (string, error) {
	if f != F16 {
		return "", fmt.Errorf("wgsl: no vector stores for %s", f)
	}
	return fmt.Sprintf("fn %[1]s_set8(i: u32, v: mat2x4<f32>) {\n"+
		"  %[1]s[(p.%[1]s_off + i) >> 3u] = vec4<u32>(pack2x16float(v[0].xy), pack2x16float(v[0].zw), pack2x16float(v[1].xy), pack2x16float(v[1].zw));\n}\n", name), nil
}
