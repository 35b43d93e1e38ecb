// Several matrix-vector products of one src1 in one dispatch (llama's Q, K and V
// projections): product P (P < PRODUCTS) multiplies its own 2-D weights wP (its own format,
// p.M[P] rows of p.K elements, row stride p.A[P]) by the shared src1 into dP (strides p.DP):
// dP[i, j, b2, b3] = sum_k wP[k, i] * src1[k, j, b2, b3]
// The grid is the products' workgroups one after the other: workgroups p.Start[P] to
// p.Start[P + 1] - 1 compute product P, ROWS rows of all NCOLS columns of one batch each.
// The branch is per workgroup, so each product's row loop is its own instantiation with its
// operand's accessors; it reads as mul_mat_vec8.wgsl does: eight elements at a time,
// adjacent invocations adjacent chunks, quantized weights unit by unit with UNITSP (the
// blocks of a unit unrolled, pairs of eighths that read the same words with PAIRP), src1
// eight at a time with VEC1 (else element by element, with its strides).
// With ROPE_KV (three products of one column, two rows a workgroup) the results are not
// stored as such: llama's Q and K are rotated and Q stored into ROPE Q's result, K and V
// into their caches (rope_kv_store.wgsl; the fusion row
// mul_mat+view+mul_mat+view+mul_mat+rope+set_rows, ops/mul_mat_multi_rope.go).
const ROWS = {{ROWS}}u;
const NCOLS = {{NCOLS}}u;
const OUTS = {{ROWS}}u * {{NCOLS}}u; // results per workgroup
#include mul_mat_vec_sum
#if ROPE_KV
#include rope_math
#include rope_kv_store
#endif

// Elements c..c+7 of the NCOLS columns of src1 from base v.
fn src1_cols8(x: ptr<function, array<mat2x4<f32>, {{NCOLS}}>>, v: u32, c: u32) {
  for (var j = 0u; j < NCOLS; j = j + 1u) {
#if VEC1
    (*x)[j] = src1_get8(v + j * p.B.y + c);
#else
    let i = v + j * p.B.y + c * p.B.x;
    let s = p.B.x;
    (*x)[j] = mat2x4<f32>(vec4<f32>(src1_get(i), src1_get(i + s), src1_get(i + 2u * s), src1_get(i + 3u * s)),
                          vec4<f32>(src1_get(i + 4u * s), src1_get(i + 5u * s), src1_get(i + 6u * s), src1_get(i + 7u * s)));
#endif
  }
}

#for P {{PRODUCTS}}
#if UNITS{{P}}
const E{{P}} = w{{P}}_BLOCK_EIGHTHS;
#if PAIR{{P}}
const D{{P}} = {{W{{P}}_PAIR}}u; // eighths s and s + D of a block read the same words
const LANES{{P}} = E{{P}} / 2u; // invocations per block
#else
const LANES{{P}} = E{{P}};
#endif

// Adds the products of eighth s of block blk (a literal) of the unit at element k of
// product P's ROWS rows from i0 to the partial sums.
fn stepu{{P}}(acc: ptr<function, array<f32, {{ACC}}>>, i0: u32, v: u32, k: u32, blk: u32, s: u32) {
  let c = k + blk * w{{P}}_BLOCK_ELEMS + 8u * s; // the chunk's first element
  var x: array<mat2x4<f32>, {{NCOLS}}>;
  src1_cols8(&x, v, c);
#if PAIR{{P}}
  var x2: array<mat2x4<f32>, {{NCOLS}}>; // the partner chunk, 8 D elements on
  src1_cols8(&x2, v, c + 8u * D{{P}});
#endif
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let row = min(i0 + r, p.M[{{P}}] - 1u) * p.A[{{P}}] + k;
    let wa = w{{P}}_unit_word(row);
    let w = w{{P}}_get8u(wa, blk, s);
#if PAIR{{P}}
    let w2 = w{{P}}_get8u(wa, blk, s + D{{P}});
#endif
    for (var j = 0u; j < NCOLS; j = j + 1u) {
      var y = dot(w[0], x[j][0]) + dot(w[1], x[j][1]);
#if PAIR{{P}}
      y = y + dot(w2[0], x2[j][0]) + dot(w2[1], x2[j][1]);
#endif
      (*acc)[r * NCOLS + j] = (*acc)[r * NCOLS + j] + y;
    }
  }
}

// Product P's partial sums of rows i0.. of the batch at src1 element v.
fn product{{P}}(acc: ptr<function, array<f32, {{ACC}}>>, i0: u32, v: u32, lid: u32) {
  let t = lid % LANES{{P}};
#if PAIR{{P}}
  let s = (t / D{{P}}) * 2u * D{{P}} + t % D{{P}}; // the first of a pair
#else
  let s = t;
#endif
  for (var k = (lid / LANES{{P}}) * w{{P}}_UNIT_ELEMS; k < p.K; k = k + ({{WG}}u / LANES{{P}}) * w{{P}}_UNIT_ELEMS) {
#for B {{W{{P}}_UNIT_BLOCKS}}
    stepu{{P}}(acc, i0, v, k, {{B}}u, s);
#endfor
  }
}
#else
// Product P's partial sums of rows i0.. of the batch at src1 element v.
fn product{{P}}(acc: ptr<function, array<f32, {{ACC}}>>, i0: u32, v: u32, lid: u32) {
  for (var k = lid * 8u; k < p.K; k = k + {{WG}}u * 8u) {
    var x: array<mat2x4<f32>, {{NCOLS}}>;
    src1_cols8(&x, v, k);
    for (var r = 0u; r < ROWS; r = r + 1u) {
      let w = w{{P}}_get8(min(i0 + r, p.M[{{P}}] - 1u) * p.A[{{P}}] + k);
      for (var j = 0u; j < NCOLS; j = j + 1u) {
        (*acc)[r * NCOLS + j] = (*acc)[r * NCOLS + j] + dot(w[0], x[j][0]) + dot(w[1], x[j][1]);
      }
    }
  }
}
#endif
#endfor

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let g = group_id(wid, nwg);
  if (g >= p.Start[{{PRODUCTS}}]) { return; }
  var prod = 0u; // the product of this workgroup
#for P {{PRODUCTS}}
  if (g >= p.Start[{{P}}]) { prod = {{P}}u; }
#endfor
  let m = p.M[prod];
  let blocks = (m + ROWS - 1u) / ROWS;
  let lg = g - p.Start[prod];
  let i0 = (lg % blocks) * ROWS;
  let b = lg / blocks;
  let b2 = b % p.Ne2;
  let b3 = b / p.Ne2;
  let v = b2 * p.B.z + b3 * p.B.w;
  var acc: array<f32, {{ACC}}>;
#for P {{PRODUCTS}}
  if (prod == {{P}}u) { product{{P}}(&acc, i0, v, lid); }
#endfor
  sum_partials(lid, &acc);
#if ROPE_KV
  if (lid == 0u && i0 < m) { rope_kv_store(prod, i0, vec2<f32>(red[0], red[{{WG}}u])); } // rows i0, i0 + 1
#else
  if (lid < OUTS) {
    let i = i0 + lid / NCOLS;
    let j = lid % NCOLS;
    if (i < m) {
      let y = red[lid * {{WG}}u];
#for P {{PRODUCTS}}
      if (prod == {{P}}u) { d{{P}}_set(offset4(vec4<u32>(i, j, b2, b3), p.D{{P}}), y); }
#endfor
    }
  }
#endif
}
