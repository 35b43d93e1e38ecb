// dst[i, j, b2, b3] = sum_k src0[k, i, b2 / R2, b3 / R3] * src1[k, j, b2, b3]
// A workgroup of 256 invocations computes a 64 x 64 block of dst (64 rows of src0 by 64
// rows of src1), staging 32-wide K slices of both in shared memory; each invocation keeps
// a 4 x 4 block of sums in registers (rows tx + 16 r, columns ty + 16 c). Each invocation
// loads one 8-element chunk of each operand per slice: with VEC_A (VEC_B) src0 (src1) in
// one NAME_get8 (16-byte loads, or a quantized block's quarter dequantized), otherwise
// element by element.
const TM = 64u;
const TK = 32u;
const LD = 33u; // padded row length in shared memory
var<workgroup> ta: array<f32, 2112>; // TM * LD
var<workgroup> tb: array<f32, 2112>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let b = wid.z;
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
  let a_base = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let b_base = b2 * p.B.z + b3 * p.B.w;
  let row0 = wid.x * TM;
  let col0 = wid.y * TM;
  let tx = lid % 16u;
  let ty = lid / 16u;
  // loader coordinates: one row of the tile and one 8-wide chunk of the K slice
  let lr = lid / 4u;
  let lc = (lid % 4u) * 8u;
  let ar = min(row0 + lr, p.M - 1u);
  let br = min(col0 + lr, p.N - 1u);
  let a_row = a_base + ar * p.A.y;
  let b_row = b_base + br * p.B.y;
  var acc: array<f32, 16>;
#include mul_mat_slice
  for (var r = 0u; r < 4u; r = r + 1u) {
    let i = row0 + tx + 16u * r;
    for (var c = 0u; c < 4u; c = c + 1u) {
      let j = col0 + ty + 16u * c;
      if (i < p.M && j < p.N) {
        dst_set(offset4(vec4<u32>(i, j, b2, b3), p.D), acc[r * 4u + c]);
      }
    }
  }
}
