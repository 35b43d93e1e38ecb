// The start of the Q6_K mat-vec kernels' main (mul_mat_vec_q6k.wgsl and its several-column
// form): the workgroup's rows i0.. of batch (b2, b3), the first element a of its matrix
// and col of its first src1 column, the invocation's place t among its sixteen and the
// sixteen j, the blocks nb of a row, and the zeroed sums acc.
#include mul_mat_vec_begin
  let a = (b2 / p.R2) * p.A.z + (b3 / p.R3) * p.A.w;
  let col = b2 * p.B.z + b3 * p.B.w;
  let t = lid & 15u;
  let j = lid >> 4u;
  let nb = p.K / 256u;
  var acc: array<f32, {{ACC}}>;
  for (var r = 0u; r < {{ACC}}u; r = r + 1u) { acc[r] = 0.0; }
