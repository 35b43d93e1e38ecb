package wgsl

import (
	"fmt"
	"strings"
)

// quantWriter is the one quantization routine of a block format that kernels write (a
// row of quantWriters, next to the format's dequantization in quantFormats): ggml's type
// name, the bytes of one block of 32 elements, and the WGSL that fills the block.
//
// The routine rounds exactly as ggml's CPU backend quantizes (its from_float, see
// docs/ARCHITECTURE.md section 3): it is the body of NAME_set_block(i, x), which sees `v`,
// the block's 32 values (array<f32, 32>), and fills `q` (array<u32, 10>, zeroed) with the
// block's bytes in order, little-endian, through NAME_put(&q, byte, value) (the low
// eight bits of value at byte `byte`) and NAME_f16(x) (the bits of x rounded to f16).
// fns holds helper functions of the routine (NAME-prefixed), emitted before it.
type quantWriter struct {
	name  string
	bytes int
	set   string
	fns   string
}

// quantWriters are the formats kernels can write (the KV cache's types), all with blocks
// of 32 elements.
var quantWriters = map[Format]quantWriter{
	// ggml's x86 quantize_row_q8_0 (AVX): d = amax / 127; q = round-half-even(x * 127 / amax).
	Q8_0: {name: "q8_0", bytes: 34, set: `
  var amax = 0.0;
  for (var j = 0u; j < 32u; j = j + 1u) { amax = max(amax, abs(v[j])); }
  let id = select(0.0, 127.0 / amax, amax != 0.0);
  q[0] = NAME_f16(amax / 127.0);
  for (var j = 0u; j < 32u; j = j + 1u) { NAME_put(&q, 2u + j, u32(i32(round(v[j] * id)))); }`},
	// quantize_row_q4_0_ref: m the first value of largest magnitude, d = m / -8,
	// q = min(15, trunc(x / d + 8.5)).
	Q4_0: {name: "q4_0", bytes: 18, set: `
  let m = NAME_absmax(v);
  let d = m / -8.0;
  let id = select(0.0, 1.0 / d, d != 0.0);
  q[0] = NAME_f16(d);
  for (var j = 0u; j < 16u; j = j + 1u) {
    let lo = min(15u, u32(v[j] * id + 8.5));
    let hi = min(15u, u32(v[j + 16u] * id + 8.5));
    NAME_put(&q, 2u + j, lo | (hi << 4u));
  }`},
	// quantize_row_q4_1_ref: d = (max - min) / 15, m = min, q = min(15, trunc((x - min) / d + 0.5)).
	Q4_1: {name: "q4_1", bytes: 20, set: `
  let r = NAME_range(v);
  let d = (r.y - r.x) / 15.0;
  let id = select(0.0, 1.0 / d, d != 0.0);
  q[0] = NAME_f16(d) | (NAME_f16(r.x) << 16u);
  for (var j = 0u; j < 16u; j = j + 1u) {
    let lo = min(15u, u32((v[j] - r.x) * id + 0.5));
    let hi = min(15u, u32((v[j + 16u] - r.x) * id + 0.5));
    NAME_put(&q, 4u + j, lo | (hi << 4u));
  }`},
	// quantize_row_q5_0_ref: d = m / -16, q = min(31, trunc(x / d + 16.5)); nibbles as
	// Q4_0, the fifth bits in qh.
	Q5_0: {name: "q5_0", bytes: 22, set: `
  let m = NAME_absmax(v);
  let d = m / -16.0;
  let id = select(0.0, 1.0 / d, d != 0.0);
  q[0] = NAME_f16(d);
  var qh = 0u;
  for (var j = 0u; j < 16u; j = j + 1u) {
    let lo = min(31u, u32(v[j] * id + 16.5));
    let hi = min(31u, u32(v[j + 16u] * id + 16.5));
    NAME_put(&q, 6u + j, (lo & 15u) | ((hi & 15u) << 4u));
    qh = qh | (((lo >> 4u) & 1u) << j) | (((hi >> 4u) & 1u) << (j + 16u));
  }
  NAME_put4(&q, 2u, qh);`},
	// quantize_row_q5_1_ref: d = (max - min) / 31, m = min, q = trunc((x - min) / d + 0.5).
	Q5_1: {name: "q5_1", bytes: 24, set: `
  let r = NAME_range(v);
  let d = (r.y - r.x) / 31.0;
  let id = select(0.0, 1.0 / d, d != 0.0);
  q[0] = NAME_f16(d) | (NAME_f16(r.x) << 16u);
  var qh = 0u;
  for (var j = 0u; j < 16u; j = j + 1u) {
    let lo = u32((v[j] - r.x) * id + 0.5) & 255u;
    let hi = u32((v[j + 16u] - r.x) * id + 0.5) & 255u;
    NAME_put(&q, 8u + j, (lo & 15u) | ((hi & 15u) << 4u));
    qh = qh | (((lo >> 4u) & 1u) << j) | (((hi >> 4u) & 1u) << (j + 16u));
  }
  NAME_put4(&q, 4u, qh);`},
	// quantize_row_iq4_nl_ref (no importance weights, so no scale search: ntry = -1): the
	// first scale m / levels[0] picks each element's nearest level l (the binary search
	// of best_index_int8), then d = sum(w q x) / sum(w q q) with w = x^2, in element order.
	// A block of magnitude below 1e-15 has d = 0 (ggml leaves its nibbles unspecified;
	// they are 0 here).
	IQ4_NL: {name: "iq4_nl", bytes: 18, set: `
  let m = NAME_absmax(v);
  var l: array<u32, 32>;
  var d = 0.0;
  if (abs(m) >= 1e-15) {
    let id = 1.0 / (m / iq4_level(0u));
    var sqx = 0.0;
    var sq2 = 0.0;
    for (var j = 0u; j < 32u; j = j + 1u) {
      let k = NAME_level(id * v[j]);
      l[j] = k;
      let w = v[j] * v[j];
      sqx = sqx + w * iq4_level(k) * v[j];
      sq2 = sq2 + w * iq4_level(k) * iq4_level(k);
    }
    d = select(0.0, sqx / sq2, sq2 > 0.0);
  }
  q[0] = NAME_f16(d);
  for (var j = 0u; j < 16u; j = j + 1u) { NAME_put(&q, 2u + j, l[j] | (l[j + 16u] << 4u)); }`,
		fns: `fn NAME_level(x: f32) -> u32 {
  if (x <= iq4_level(0u)) { return 0u; }
  if (x >= iq4_level(15u)) { return 15u; }
  var lo = 0u;
  var hi = 15u;
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (x < iq4_level(mid)) { hi = mid; } else { lo = mid; }
  }
  return select(hi, hi - 1u, x - iq4_level(hi - 1u) < iq4_level(hi) - x);
}
`},
}

// Writable reports whether kernels can write f, a block format with a quantization
// routine (see quantWriters).
func (f Format) Writable() bool {
	_, ok := quantWriters[f]
	return ok
}

// WriteBlockBytes returns the bytes of one block (of 32 elements) of a writable format,
// 0 for the others.
func (f Format) WriteBlockBytes() int { return quantWriters[f].bytes }

// WritableFormat returns the writable block format of ggml's type name (e.g. "q8_0",
// "iq4_nl"); ok is false when kernels cannot write that type.
func WritableFormat(typeName string) (f Format, ok bool) {
	for f, q := range quantWriters {
		if q.name == typeName {
			return f, true
		}
	}
	return 0, false
}

// writeAccessors declares a written block-format operand as atomic u32 words and
// NAME_set_block(i, x: array<f32, 32>), which quantizes x into the block holding
// elements i..i+31 of the operand (i a multiple of 32), the block starting
// p.NAME_off + (i / 32) * block bytes into the binding. Blocks of 18, 22 or 34 bytes
// share words with their neighbours: NAME_store writes the words a block covers whole
// with atomicStore and merges the boundary words with atomicAnd/atomicOr on the block's
// bytes only, so blocks written by different invocations never clobber each other.
func (q quantWriter) writeAccessors(name string, binding int) string {
	return fmt.Sprintf("@group(0) @binding(%d) var<storage, read_write> %s: array<atomic<u32>>;\n", binding, name) +
		strings.ReplaceAll(quantWriterFns+q.fns+`fn NAME_set_block(i: u32, x: array<f32, 32>) {
  var v = x;
  var q: array<u32, 10>;`+q.set+`
  NAME_store(p.NAME_off + (i >> 5u) * `+fmt.Sprint(q.bytes)+`u, q, `+fmt.Sprint(q.bytes)+`u);
}
`, "NAME", name)
}

// quantWriterFns are the helpers every quantization routine may use: NAME_f16,
// NAME_put, NAME_put4, NAME_absmax (the first value of largest magnitude, as ggml's
// quantizers pick it), NAME_range (min, max) and NAME_store.
const quantWriterFns = `fn NAME_f16(x: f32) -> u32 { return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu; }
fn NAME_put(q: ptr<function, array<u32, 10>>, k: u32, b: u32) {
  (*q)[k >> 2u] = (*q)[k >> 2u] | ((b & 255u) << (8u * (k & 3u)));
}
fn NAME_put4(q: ptr<function, array<u32, 10>>, k: u32, w: u32) {
  for (var e = 0u; e < 4u; e = e + 1u) { NAME_put(q, k + e, w >> (8u * e)); }
}
fn NAME_absmax(x: array<f32, 32>) -> f32 {
  var v = x;
  var amax = 0.0;
  var m = 0.0;
  for (var j = 0u; j < 32u; j = j + 1u) {
    if (amax < abs(v[j])) { amax = abs(v[j]); m = v[j]; }
  }
  return m;
}
fn NAME_range(x: array<f32, 32>) -> vec2<f32> {
  var v = x;
  var r = vec2<f32>(3.4028234663852886e38, -3.4028234663852886e38);
  for (var j = 0u; j < 32u; j = j + 1u) {
    if (v[j] < r.x) { r.x = v[j]; }
    if (v[j] > r.y) { r.y = v[j]; }
  }
  return r;
}
fn NAME_store(b: u32, x: array<u32, 10>, n: u32) {
  var q = x;
  let s = b & 3u;
  let w0 = b >> 2u;
  let nw = (s + n + 3u) >> 2u;
  for (var j = 0u; j < nw; j = j + 1u) {
    var w = q[j] << (8u * s);
    if (s != 0u && j > 0u) { w = w | (q[j - 1u] >> (32u - 8u * s)); }
    let lo = select(0u, s, j == 0u);
    let hi = min(4u, s + n - 4u * j);
    let mask = (0xffffffffu >> (32u - 8u * (hi - lo))) << (8u * lo);
    if (mask == 0xffffffffu) {
      atomicStore(&NAME[w0 + j], w);
    } else {
      atomicAnd(&NAME[w0 + j], ~mask);
      atomicOr(&NAME[w0 + j], w & mask);
    }
  }
}
`
