// ROPE, every mode (rope_math.wgsl): one invocation per pair slot. Each invocation reads
// its two elements before writing them, so dst may alias src0.
#include rope_math

fn element(i: u32) {
  let r = rope_pair(i);
  dst_set(r.at.x, r.v.x);
  dst_set(r.at.y, r.v.y);
}

#include elementwise
