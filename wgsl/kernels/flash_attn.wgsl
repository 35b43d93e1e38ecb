// Flash attention (see ops/flash_attn.go): a workgroup takes R query rows that share a KV
// head (row j of the KV head's rows: query j % NQ of head kvh * RK2 + j / NQ) and the KV
// positions of its split (all of them without SPLIT), T positions per tile.
// Per tile: every position's dot products with the R rows (P threads per position, the
// scaled Q rows in workgroup memory), the online softmax (every score at once; running max
// and sum per row in workgroup memory), then the accumulators. With VT the tile's V rows
// are staged in workgroup memory as the scores are computed, and each thread keeps OPT
// groups of four output columns of one row over the whole tile, written at the end as
// they are. Without (heads of more than 128 V columns), thread (slot, tp) keeps, for its
// CPT groups of eight V columns and every row, the sum over the positions tp, tp + TP, ...
// of the tile, and at the end the TP partitions are added up in workgroup memory. Each row
// is written normalised into dst, or (SPLIT) as its max, sum and accumulators into `part`.
const R = {{R}}u;
const T = {{T}}u;
const P = {{P}}u;
const CPT = {{CPT}}u;

var<workgroup> qs: array<vec4<f32>, {{QS}}>; // R scaled Q rows of D; at the end R rows of Dv
var<workgroup> part_dot: array<f32, {{RTP}}>; // partial dot products [R][T][P]
var<workgroup> ps: array<f32, {{RT}}>;        // scores, then probabilities [R][T]
var<workgroup> row_m: array<f32, R>;          // running max per row
var<workgroup> row_l: array<f32, R>;          // running sum per row
var<workgroup> row_a: array<f32, R>;          // the tile's rescale of the accumulators
var<workgroup> row_mask: array<u32, R>;       // mask row offset
var<workgroup> row_slope: array<f32, R>;      // ALiBi slope
#if VT
const OPT = {{OPT}}u;
var<workgroup> vt: array<vec4<f32>, {{VTS}}>; // the tile's V rows [T][Dv / 4]
#endif

#include flash_attn_io

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let g = wid.x + wid.y * nwg.x;
  if (g >= p.Groups * p.NHeadKV * p.NSeq) { return; }
  let split = wid.z;
  let row0 = (g % p.Groups) * R;
  let kvh = (g / p.Groups) % p.NHeadKV;
  let seq = g / (p.Groups * p.NHeadKV);
  let kbase = kvh * p.K.z + seq * p.K.w;
  let vbase = kvh * p.V.z + seq * p.V.w;
  let c0 = split * p.Chunk;
  let c1 = min(c0 + p.Chunk, p.NKV);
  let dq4 = p.D / 4u;
  let dv4 = p.Dv / 4u;
  let ncg = p.Dv / 8u;

  // The Q rows, scaled; rows past the KV head's last are zero (never written).
  for (var e = lid; e < R * dq4; e = e + {{WG}}u) {
    let r = e / dq4;
    let c = (e % dq4) * 4u;
    let j = row0 + r;
    var x = vec4<f32>(0.0);
    if (j < p.Rows) {
      let b = (j % p.NQ) * p.Q.y + (kvh * p.RK2 + j / p.NQ) * p.Q.z + seq * p.Q.w + c * p.Q.x;
      x = vec4<f32>(q_get(b), q_get(b + p.Q.x), q_get(b + 2u * p.Q.x), q_get(b + 3u * p.Q.x)) * p.Scale;
    }
    qs[e] = x;
  }
  if (lid < R) {
    let j = min(row0 + lid, p.Rows - 1u);
    let h = kvh * p.RK2 + j / p.NQ;
    row_m[lid] = neg_inf();
    row_l[lid] = 0.0;
    // ALiBi: slope m0^(h+1) for the first NHeadLog2 heads, m1^(2(h-NHeadLog2)+1) after;
    // the bases come as their log2 (0 without ALiBi: slope 1).
    row_slope[lid] = exp2(select(p.L1 * f32(2u * (h - p.NHeadLog2) + 1u), p.L0 * f32(h + 1u), h < p.NHeadLog2));
    row_mask[lid] = (j % p.NQ) * p.M.y + (h % p.Me.z) * p.M.z + (seq % p.Me.w) * p.M.w;
  }
#if VT
  var acc4: array<vec4<f32>, OPT>; // output columns 4c..4c+3 of row r, (r, c) = lid + k WG of [R][Dv / 4]
  for (var k = 0u; k < OPT; k = k + 1u) { acc4[k] = vec4<f32>(0.0); }
#else
  var acc: array<vec4<f32>, {{ACC}}>; // [R][CPT] pairs of vec4 (eight columns)
  for (var i = 0u; i < 2u * R * CPT; i = i + 1u) { acc[i] = vec4<f32>(0.0); }
#endif
  workgroupBarrier();

  let ts = lid / P;    // the position this thread scores
  let share = lid % P; // and its share of the head
  let slot = lid % p.NCGW;
  let tp = lid / p.NCGW; // the positions this thread accumulates: tp, tp + TP, ...
  for (var t0 = c0; t0 < c1; t0 = t0 + T) {
#if VT
    // This thread's share of the tile's V rows (element i = lid + k WG of [T][Dv / 8], eight
    // columns each), loaded now and staged once the scores are computed.
    var vpre: array<VW, {{VP}}>;
    for (var k = 0u; k < {{VP}}u; k = k + 1u) {
      let i = lid + k * {{WG}}u;
      vpre[k] = VW();
      if (i < T * ncg && t0 + i / ncg < c1) { vpre[k] = vw8(vbase + (t0 + i / ncg) * p.V.y + 8u * (i % ncg)); }
    }
#endif
#if MASK
    // The mask values this thread scores (element e = lid + i WG of [R][T]), loaded early too.
    var mpre: array<MW, {{MP}}>;
    for (var i = 0u; i < {{MP}}u; i = i + 1u) {
      let e = lid + i * {{WG}}u;
      mpre[i] = MW();
      if (e < R * T && t0 + e % T < c1) { mpre[i] = mw(row_mask[e / T] + t0 + e % T); }
    }
#endif
    // Partial dot products: chunks part, part + P, ... of eight elements.
    var s: array<f32, R>;
    for (var r = 0u; r < R; r = r + 1u) { s[r] = 0.0; }
    let kv = t0 + ts;
    if (kv < c1) {
      let kb = kbase + kv * p.K.y;
      for (var c = share; c < p.D / 8u; c = c + P) {
        let kk = k8(kb + 8u * c);
        for (var r = 0u; r < R; r = r + 1u) {
          s[r] = s[r] + dot(kk[0], qs[r * dq4 + 2u * c]) + dot(kk[1], qs[r * dq4 + 2u * c + 1u]);
        }
      }
    }
    for (var r = 0u; r < R; r = r + 1u) { part_dot[(r * T + ts) * P + share] = s[r]; }
#if VT
    for (var k = 0u; k < {{VP}}u; k = k + 1u) {
      let i = lid + k * {{WG}}u;
      if (i < T * ncg) {
        let vv = v_dec(vpre[k]); // zeros past the split's last position
        let o = (i / ncg) * dv4 + 2u * (i % ncg);
        vt[o] = vv[0];
        vt[o + 1u] = vv[1];
      }
    }
#endif
    workgroupBarrier();
    // Scores (element e = lid + i WG of [R][T]): the parts added, softcap, mask; -Inf for
    // masked and absent positions.
    var xs: array<f32, {{MP}}>;
    for (var i = 0u; i < {{MP}}u; i = i + 1u) {
      let e = lid + i * {{WG}}u;
      if (e >= R * T) { break; }
      let r = e / T;
      let pos = t0 + e % T;
      var x = neg_inf();
      if (pos < c1) {
        var d = 0.0;
        for (var i = 0u; i < P; i = i + 1u) { d = d + part_dot[e * P + i]; }
        if (p.Softcap != 0.0) { d = p.Softcap * tanh(d); }
        x = d;
#if MASK
        let mv = row_slope[r] * m_dec(mpre[i], row_mask[r] + pos);
        x = select(d + mv, neg_inf(), is_neg_inf(mv));
#endif
      }
      ps[e] = x;
      xs[i] = x;
    }
    workgroupBarrier();
    // Online softmax, every score at once: its row's max over the tile, the new running
    // max, its weight and the accumulators' rescale (1 while the row has seen no position).
    var ws: array<f32, {{MP}}>;
    var ms: array<f32, {{MP}}>;
    var rs: array<f32, {{MP}}>;
    for (var i = 0u; i < {{MP}}u; i = i + 1u) {
      let e = lid + i * {{WG}}u;
      if (e >= R * T) { break; }
      let r = e / T;
      var mx = neg_inf();
      for (var t = 0u; t < T; t = t + 1u) { mx = max(mx, ps[r * T + t]); }
      let mold = row_m[r];
      let mnew = max(mold, mx);
      var a = 1.0;
      var w = 0.0;
      if (!is_neg_inf(mnew)) {
        a = select(exp(mold - mnew), 0.0, is_neg_inf(mold));
        w = select(exp(xs[i] - mnew), 0.0, is_neg_inf(xs[i]));
      }
      ws[i] = w;
      ms[i] = mnew;
      rs[i] = a;
    }
    workgroupBarrier();
    for (var i = 0u; i < {{MP}}u; i = i + 1u) {
      let e = lid + i * {{WG}}u;
      if (e >= R * T) { break; }
      ps[e] = ws[i];
      if (e % T == 0u) {
        row_m[e / T] = ms[i];
        row_a[e / T] = rs[i];
      }
    }
    workgroupBarrier();
    // The running sums, a thread per row.
    if (lid < R) {
      var sum = 0.0;
      for (var t = 0u; t < T; t = t + 1u) { sum = sum + ps[lid * T + t]; }
      row_l[lid] = row_l[lid] * row_a[lid] + sum;
    }
    // Accumulators: rescaled, then the tile's weighted V rows (a zero weight adds nothing,
    // whatever V holds there).
#if VT
    for (var k = 0u; k < OPT; k = k + 1u) {
      let i = lid + k * {{WG}}u;
      if (i < R * dv4) {
        let r = i / dv4;
        let c = i % dv4;
        var o = acc4[k] * row_a[r];
        for (var t = 0u; t < T; t = t + 1u) {
          let w = ps[r * T + t];
          o = o + select(vec4<f32>(0.0), w * vt[t * dv4 + c], w != 0.0);
        }
        acc4[k] = o;
      }
    }
#else
    if (tp < p.TP) {
      for (var r = 0u; r < R; r = r + 1u) {
        let a = row_a[r];
        for (var c = 0u; c < CPT; c = c + 1u) {
          let i = 2u * (r * CPT + c);
          acc[i] = acc[i] * a;
          acc[i + 1u] = acc[i + 1u] * a;
        }
      }
      for (var t = tp; t < T && t0 + t < c1; t = t + p.TP) {
        let vb = vbase + (t0 + t) * p.V.y;
        for (var c = 0u; c < CPT; c = c + 1u) {
          let cg = slot + c * p.NCGW;
          if (cg < ncg) {
            let vv = v8(vb + 8u * cg);
            for (var r = 0u; r < R; r = r + 1u) {
              let w = ps[r * T + t];
              let i = 2u * (r * CPT + c);
              acc[i] = acc[i] + select(vec4<f32>(0.0), w * vv[0], w != 0.0);
              acc[i + 1u] = acc[i + 1u] + select(vec4<f32>(0.0), w * vv[1], w != 0.0);
            }
          }
        }
      }
    }
#endif
    workgroupBarrier();
  }

#if VT
  for (var k = 0u; k < OPT; k = k + 1u) {
    let i = lid + k * {{WG}}u;
    if (i < R * dv4) { store_row(i / dv4, 4u * (i % dv4), acc4[k], row0, kvh, seq, split); }
  }
#else
  // The TP partitions of the accumulators added up in qs ([R][Dv]).
  for (var k = 0u; k < p.TP; k = k + 1u) {
    if (tp == k) {
      for (var c = 0u; c < CPT; c = c + 1u) {
        let cg = slot + c * p.NCGW;
        if (cg < ncg) {
          for (var r = 0u; r < R; r = r + 1u) {
            let i = 2u * (r * CPT + c);
            let o = r * dv4 + 2u * cg;
            if (k == 0u) {
              qs[o] = acc[i];
              qs[o + 1u] = acc[i + 1u];
            } else {
              qs[o] = qs[o] + acc[i];
              qs[o + 1u] = qs[o + 1u] + acc[i + 1u];
            }
          }
        }
      }
    }
    workgroupBarrier();
  }

  for (var e = lid; e < R * dv4; e = e + {{WG}}u) { store_row(e / dv4, 4u * (e % dv4), qs[e], row0, kvh, seq, split); }
#endif
}

// store_row writes output columns c..c+3 of the tile's row r, o: normalised into dst, or
// (SPLIT) with the row's max and sum into part.
fn store_row(r: u32, c: u32, acc: vec4<f32>, row0: u32, kvh: u32, seq: u32, split: u32) {
  let j = row0 + r;
  if (j >= p.Rows) { return; }
  let h = kvh * p.RK2 + j / p.NQ;
  let row = (seq * p.NQ + j % p.NQ) * p.NHead + h; // dst row: [Dv, n_head, n_q, n_seq]
  let m = row_m[r];
  let l = row_l[r];
  var o = acc;
#if SPLIT
  let b = (row * p.Splits + split) * (p.Dv + 2u);
  if (c == 0u) {
    part_set(b, m);
    part_set(b + 1u, l);
  }
  for (var i = 0u; i < 4u; i = i + 1u) { part_set(b + 2u + c + i, o[i]); }
#else
  var sum = l;
#if SINKS
  // The sink: one more logit, with no value.
  let sk = sinks_get(h);
  let mn = max(m, sk);
  let a = select(exp(m - mn), 0.0, is_neg_inf(m));
  sum = l * a + exp(sk - mn);
  o = o * a;
#endif
  let inv = select(1.0 / sum, 0.0, sum == 0.0);
  for (var i = 0u; i < 4u; i = i + 1u) { dst_set(row * p.Dv + c + i, o[i] * inv); }
#endif
}
