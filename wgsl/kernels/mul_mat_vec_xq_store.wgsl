// A column of the integer mat-vec's XQ form (mul_mat_vec_q4.wgsl) quantized into scratch
// memory, one quant word an invocation: included by the columns' own dispatch
// (mul_mat_vec_q4_act.wgsl) and by the kernels whose results the products read as their
// column (norm.wgsl and flash_attn_reduce.wgsl with XQ: xq_store_row, with XQ_ROW), after
// mul_mat_vec_q4_quant.wgsl. The kernel binds the i32 words as `xq`. Group q
// takes WPG + 1 vectors of 4 words from vector q (WPG + 1): its WPG activation vectors,
// then (dl, sl, dh, sh) as f32 bits. The WPG invocations of a group (consecutive, the
// first at a multiple of WPG: the workgroup size is a multiple of WPG) exchange their
// elements' largest magnitudes, then their quantized sums, through workgroup memory.

var<workgroup> xq_amax: array<vec2<f32>, {{WG}}>; // each invocation's low and high largest magnitude
var<workgroup> xq_qsum: array<vec2<i32>, {{WG}}>; // and its quantized sums

// xq_store quantizes quant word w of group q, whose low nibbles' elements are lo and high
// ones' hi, and stores its activation words and, by the group's first invocation, the
// group's scales; nothing where live is false (an invocation past the last word, which
// must hold one of its workgroup's groups: it takes part in the exchange). Every
// invocation of the workgroup calls it (two barriers).
fn xq_store(lid: u32, w: u32, q: u32, lo: vec4<f32>, hi: vec4<f32>, live: bool) {
  let ml = abs(lo);
  let mh = abs(hi);
  xq_amax[lid] = vec2<f32>(max(max(ml.x, ml.y), max(ml.z, ml.w)), max(max(mh.x, mh.y), max(mh.z, mh.w)));
  workgroupBarrier();
  let g0 = lid - w; // the group's first invocation
  var m = xq_amax[g0];
  for (var k = 1u; k < WPG; k = k + 1u) { m = max(m, xq_amax[g0 + k]); }
#if SPLIT
  // two blocks of 32: the low and the high half's elements
#else
  m = vec2<f32>(max(m.x, m.y)); // one block of 32
#endif
  let l = round8(lo, select(0.0, 127.0 / m.x, m.x > 0.0));
  let h = round8(hi, select(0.0, 127.0 / m.y, m.y > 0.0));
  let o = 4u * q * (WPG + 1u); // the group's first word
  if (live) {
    let x = quant_word(l, h);
    for (var j = 0u; j < 4u; j = j + 1u) { xq_seti(o + 4u * w + j, x[j]); }
  }
  xq_qsum[lid] = vec2<i32>(l.x + l.y + l.z + l.w, h.x + h.y + h.z + h.w);
  workgroupBarrier();
  if (live && w == 0u) {
    var s = xq_qsum[lid];
    for (var k = 1u; k < WPG; k = k + 1u) { s = s + xq_qsum[lid + k]; }
    let dl = m.x / 127.0;
    let dh = m.y / 127.0;
    let d = bitcast<vec4<i32>>(vec4<f32>(dl, dl * if32(s.x), dh, dh * if32(s.y)));
    for (var j = 0u; j < 4u; j = j + 1u) { xq_seti(o + 4u * WPG + j, d[j]); }
  }
}

#if XQ_ROW
var<workgroup> xq_row: array<f32, {{YS}}>; // a result row the workgroup quantizes

// xq_store_row quantizes the first n elements of xq_row (whole groups), which the kernel
// has stored and passed a barrier since, as the groups of row row of the quantized columns
// (the groups row * n / GROUP ..): an invocation a quant word, looping over them. Every
// invocation of the workgroup calls it.
fn xq_store_row(lid: u32, row: u32, n: u32) {
  let groups = n / GROUP;
  let words = groups * WPG;
  for (var base = 0u; base < words; base = base + {{WG}}u) {
    let i = base + lid;
    let q = min(i / WPG, groups - 1u); // invocations past the last word repeat the last group (no stores)
    let wi = i % WPG;
    let e = group_start(q) + word_elem(wi);
    let lo = vec4<f32>(xq_row[e], xq_row[e + 1u], xq_row[e + 2u], xq_row[e + 3u]);
    let hi = vec4<f32>(xq_row[e + HALF], xq_row[e + HALF + 1u], xq_row[e + HALF + 2u], xq_row[e + HALF + 3u]);
    xq_store(lid, wi, row * groups + q, lo, hi, i < words);
  }
}
#endif
