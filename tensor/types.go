package tensor

// Block is the storage unit of a type: Elems elements in Bytes bytes (one element for
// plain types, a quantization block for the others). Values from ggml-common.h of the
// pinned release; include/abi checks every row against the real ggml_blck_size and
// ggml_type_size.
type Block struct{ Elems, Bytes int }

var blocks = map[Type]Block{
	F32: {1, 4}, F16: {1, 2}, BF16: {1, 2}, F64: {1, 8},
	I8: {1, 1}, I16: {1, 2}, I32: {1, 4}, I64: {1, 8},
	Q4_0: {32, 18}, Q4_1: {32, 20}, Q5_0: {32, 22}, Q5_1: {32, 24}, Q8_0: {32, 34}, Q8_1: {32, 36},
	Q2_K: {256, 84}, Q3_K: {256, 110}, Q4_K: {256, 144}, Q5_K: {256, 176}, Q6_K: {256, 210}, Q8_K: {256, 292},
	IQ2_XXS: {256, 66}, IQ2_XS: {256, 74}, IQ3_XXS: {256, 98}, IQ1_S: {256, 50}, IQ4_NL: {32, 18},
	IQ3_S: {256, 110}, IQ2_S: {256, 82}, IQ4_XS: {256, 136}, IQ1_M: {256, 56},
	TQ1_0: {256, 54}, TQ2_0: {256, 66}, MXFP4: {32, 17}, NVFP4: {64, 36}, Q1_0: {128, 18}, Q2_0: {64, 18},
}

// Block returns the type's storage block; ok is false for a value ggml does not define.
func (t Type) Block() (b Block, ok bool) {
	b, ok = blocks[t]
	return b, ok
}

// BlockElems returns the elements of one block (1 for plain types), 0 when unknown.
func (t Type) BlockElems() int { return blocks[t].Elems }

// Size returns the bytes of one block (one element for plain types), 0 when unknown.
func (t Type) Size() int { return blocks[t].Bytes }

// Quantized reports whether the type stores elements in blocks of more than one.
func (t Type) Quantized() bool { return blocks[t].Elems > 1 }

// Types lists every type ggml defines, in enum order.
func Types() []Type {
	var out []Type
	for t := Type(0); t < TypeCount; t++ {
		if _, ok := blocks[t]; ok {
			out = append(out, t)
		}
	}
	return out
}
