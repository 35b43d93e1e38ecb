// Which rows a mat-vec workgroup computes, for the kernels of mulMatParams-like
// parameters (M, Batches, Ne2) that define ROWS and include it: workgroup g takes ROWS
// consecutive dst rows of one batch.

// The workgroups a product needs: those from it on have nothing to do.
fn mv_groups() -> u32 { return (p.M + ROWS - 1u) / ROWS * p.Batches; }

// Workgroup g's first row i0, its batch bt, and the batch's coordinates b2, b3 (dst dims 2
// and 3), as (i0, bt, b2, b3).
fn mv_rows(g: u32) -> vec4<u32> {
  let blocks = (p.M + ROWS - 1u) / ROWS;
  let bt = g / blocks;
  return vec4<u32>((g % blocks) * ROWS, bt, bt % p.Ne2, bt / p.Ne2);
}

#if IDS
// MUL_MAT_ID (mulMatIDParams): batch coordinates b2, b3 are a slot and a token; the pair's
// expert (clamped: ggml asserts it is in range) picks the matrix, src1's row b2 % Ne11 of
// token b3 the column. Returns their first elements (a, v).
fn mv_expert(b2: u32, b3: u32) -> vec2<u32> {
  let e = min(u32(max(ids_geti(b2 * p.I.x + b3 * p.I.y), 0)), p.Experts - 1u);
  return vec2<u32>(e * p.A.z, (b2 % p.Ne11) * p.B.z + b3 * p.B.w);
}
#endif
