// mul_mat_big: the K loop of the prompt kernels (mul_mat_big, mul_mat_id_big) over the
// slices from kbeg to kend (ns of them): declares the loader's registers w (wr with RAW_A)
// and the sums acc, then fetches, stages and multiplies the slices (see mul_mat_big.wgsl).
// The including kernel declares TK, TN, SLICE, SLICEB, ta, tb, kbeg, kend, ns, tx, ty,
// is_a, lr, a_row and b_row.
  var w = mat2x4<f32>();
#if RAW_A
  var wr = vec4<u32>(); // src0's raw F16 words, turned into floats when staged
#endif
  var acc: array<vec4<f32>, {{ACC}}>; // acc[(TN / 64) q + h]: row q (0..7), columns 64 h + 4 ty ..
  {
    let kf = kbeg;
#include mul_mat_big_fetch
  }
  {
    let off = 0u;
#include mul_mat_big_stage
  }
  workgroupBarrier();
  // Two slices per iteration: the even one in buffer 0, the odd one in buffer 1.
  for (var s = 0u; s < ns; s = s + 2u) {
    if (s + 1u < ns) {
      let kf = kbeg + (s + 1u) * TK;
#include mul_mat_big_fetch
    }
    {
      let off = 0u;
#include mul_mat_big_fma
    }
    if (s + 1u >= ns) {
      break;
    }
    {
      let off = SLICE;
#include mul_mat_big_stage
    }
    workgroupBarrier();
    if (s + 2u < ns) {
      let kf = kbeg + (s + 2u) * TK;
#include mul_mat_big_fetch
    }
    {
      let off = SLICE;
#include mul_mat_big_fma
    }
    if (s + 2u < ns) {
      let off = 0u;
#include mul_mat_big_stage
    }
    workgroupBarrier();
  }
