// The start of a mat-vec kernel's main (mul_mat_vec_rows.wgsl's workgroups, for kernels
// whose main takes wid and nwg): the workgroup g, leaving at once past the product's
// workgroups (the whole workgroup: uniform), and its rows w = (i0, bt, b2, b3) (mv_rows).
  let g = group_id(wid, nwg);
  if (g >= mv_groups()) { return; }
  let w = mv_rows(g);
  let i0 = w.x;
  let b2 = w.z;
  let b3 = w.w;
