// dst = f(src0) element-wise, with arbitrary strides on both sides.
@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, {{WG}}u);
  if (i >= p.N) { return; }
  let c = coords(i, p.Ne0, p.Ne1, p.Ne2);
  let x = src0_get(c.x * p.A0 + c.y * p.A1 + c.z * p.A2 + c.w * p.A3);
#if SCALE
  let y = x * p.Scale + p.Bias;
#endif
#if SILU
  let y = silu(x);
#endif
#if GELU
  let y = gelu(x);
#endif
  dst_set(c.x * p.D0 + c.y * p.D1 + c.z * p.D2 + c.w * p.D3, y);
}
