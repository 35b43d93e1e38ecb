// Flash attention for prompts (see ops/flash_attn.go): a workgroup takes BR query rows
// that share a KV head (row j of the KV head's rows: query j % NQ of head kvh * RK2 + j / NQ)
// and walks the KV sequence in tiles of BC positions with the online softmax.
//
// Workgroup memory: the scaled Q rows transposed (qt, [HD][BR] as vec4 of four rows); the
// tile's scores, then probabilities, transposed (pt, [BC][BR]); one staging buffer (kv)
// that holds a chunk of DC elements of the tile's K rows transposed ([DC][BC]) while the
// scores are computed, then VC of its V rows ([VC][HDV]) at a time while they are added.
//
// Invocation (tr, tc), tr = lid % RG, tc = lid / RG, owns the four rows 4tr..4tr+3: their
// scores at positions 4tc..4tc+3 of the tile (a 4 x 4 block, vec4 reads of qt and kv),
// and their output columns at vec4 columns tc, tc + CG, ... (NV of them: 4 x NV vec4
// accumulators in registers, vec4 reads of pt and kv). The softmax gives each row NP
// invocations (sr = lid % BR, sp = lid / BR) of CPP positions each: each keeps its row's
// running max and its share of the running sum; the rows' maxima meet in workgroup memory.
//
// With a mask, the tiles at the end and at the start of the KV sequence that the mask hides
// from all of the workgroup's rows (causal masks, sliding windows) are found first and
// skipped. Positions past NKV score -Inf and their K and V rows are never read (zeros are staged).
// Masked positions (-Inf) get weight 0; their V rows are multiplied by it, so they must
// hold finite values (llama.cpp clears its caches).
const BR = {{BR}}u;   // query rows per workgroup
const BC = {{BC}}u;   // KV positions per tile
const HD = {{HD}}u;   // K (and Q) head size
const HDV = {{HDV}}u; // V head size
const DC = {{DC}}u;   // K elements staged at a time (divides HD)
const VC = {{VC}}u;   // V rows staged at a time (divides BC)
const NV = {{NV}}u;   // output vec4 columns per invocation and row
const RG = BR / 4u;   // row groups of four: invocations along the rows
const CG = BC / 4u;   // position groups of four (scores), output column groups
const NP = {{WG}}u / BR; // invocations per row in the softmax...
const CPP = BC / NP;  // ...of CPP positions each (16)
const HV4 = HDV / 4u; // vec4 per V row

var<workgroup> qt: array<vec4<f32>, {{QT}}>;  // [HD][RG]
var<workgroup> pt: array<vec4<f32>, {{PT}}>;  // [BC][RG]
var<workgroup> kv: array<vec4<f32>, {{KVB}}>; // [DC][CG] or [VC][HV4]
var<workgroup> red: array<f32, {{RED}}>;      // [NP][BR]: partial maxima, at the end sums
var<workgroup> row_alpha: array<f32, BR>;     // the tile's rescale of each row's accumulators
var<workgroup> row_m: array<f32, BR>;         // each row's final max
var<workgroup> live: atomic<u32>;             // tile_live: some row sees a position
var<workgroup> live_now: u32;                 // a copy of live that the workgroup reads uniformly

#include flash_attn_io

const KE = CG * (DC / 8u);  // K staging items of a chunk: four positions, eight elements
const VE = VC * (HDV / 8u); // V staging items of a chunk: one position, eight elements

// KRows are elements 8c..8c+7 of the K rows of four consecutive positions.
struct KRows { a: KW, b: KW, c: KW, d: KW }

// k_load reads K staging item e of the chunk at element dc of the tile at t0: positions
// t0 + 4(e % CG).., elements dc + 8(e / CG)..; zeros past NKV (and for e past KE).
fn k_load(kbase: u32, t0: u32, dc: u32, e: u32) -> KRows {
  let pos = t0 + 4u * (e % CG);
  let kb = kbase + pos * p.K.y + dc + 8u * (e / CG);
  var w = KRows(KW(), KW(), KW(), KW());
  if (e < KE) {
    if (pos < p.NKV) { w.a = kw8(kb); }
    if (pos + 1u < p.NKV) { w.b = kw8(kb + p.K.y); }
    if (pos + 2u < p.NKV) { w.c = kw8(kb + 2u * p.K.y); }
    if (pos + 3u < p.NKV) { w.d = kw8(kb + 3u * p.K.y); }
  }
  return w;
}

// k_store writes K staging item e transposed: kv[(8c + k) * CG + g] = (a[k], b[k], c[k], d[k])
// for g = e % CG, c = e / CG (nothing for e past KE).
fn k_store(e: u32, w: KRows) {
  if (e >= KE) { return; }
  let i = 8u * (e / CG) * CG + e % CG;
  let a = k_dec(w.a);
  let b = k_dec(w.b);
  let c = k_dec(w.c);
  let d = k_dec(w.d);
  kv[i] = vec4<f32>(a[0].x, b[0].x, c[0].x, d[0].x);
  kv[i + CG] = vec4<f32>(a[0].y, b[0].y, c[0].y, d[0].y);
  kv[i + 2u * CG] = vec4<f32>(a[0].z, b[0].z, c[0].z, d[0].z);
  kv[i + 3u * CG] = vec4<f32>(a[0].w, b[0].w, c[0].w, d[0].w);
  kv[i + 4u * CG] = vec4<f32>(a[1].x, b[1].x, c[1].x, d[1].x);
  kv[i + 5u * CG] = vec4<f32>(a[1].y, b[1].y, c[1].y, d[1].y);
  kv[i + 6u * CG] = vec4<f32>(a[1].z, b[1].z, c[1].z, d[1].z);
  kv[i + 7u * CG] = vec4<f32>(a[1].w, b[1].w, c[1].w, d[1].w);
}

#if PRE
// k_fetch loads this invocation's K staging items of a chunk into registers; k_put stages them.
fn k_fetch(kpre: ptr<function, array<KRows, {{KI}}>>, kbase: u32, t0: u32, dc: u32, lid: u32) {
  for (var i = 0u; i < {{KI}}u; i = i + 1u) { (*kpre)[i] = k_load(kbase, t0, dc, lid + i * {{WG}}u); }
}
fn k_put(kpre: ptr<function, array<KRows, {{KI}}>>, lid: u32) {
  for (var i = 0u; i < {{KI}}u; i = i + 1u) { k_store(lid + i * {{WG}}u, (*kpre)[i]); }
}
#endif

// v_load reads V staging item e of the chunk at position t: elements 8(e % (HDV/8)).. of
// position t + e / (HDV/8); zeros past NKV (and for e past VE).
fn v_load(vbase: u32, t: u32, e: u32) -> VW {
  let pos = t + e / (HDV / 8u);
  var w = VW();
  if (e < VE && pos < p.NKV) { w = vw8(vbase + pos * p.V.y + 8u * (e % (HDV / 8u))); }
  return w;
}

// v_store writes V staging item e: row e / (HDV/8) of the chunk, vec4 columns 2c, 2c + 1.
fn v_store(e: u32, w: VW) {
  if (e >= VE) { return; }
  let i = (e / (HDV / 8u)) * HV4 + 2u * (e % (HDV / 8u));
  let f = v_dec(w);
  kv[i] = f[0];
  kv[i + 1u] = f[1];
}

#if MASK
// tile_live reports, to the whole workgroup, whether the mask leaves any position of the
// tile at t0 to any of its rows (invocation (sr, sp) looks at its row's CPP positions from
// t0 + CPP sp, its row's mask starting at moff). live is 0 on entry and on return.
fn tile_live(t0: u32, moff: u32, sp: u32, lid: u32) -> bool {
  var seen = false;
  for (var k = 0u; k < CPP; k = k + 1u) {
    let pos = t0 + CPP * sp + k;
    if (pos < p.NKV && !is_neg_inf(mask_get(moff + pos))) { seen = true; }
  }
  if (seen) { atomicOr(&live, 1u); }
  workgroupBarrier();
  if (lid == 0u) {
    live_now = atomicLoad(&live);
    atomicStore(&live, 0u);
  }
  return workgroupUniformLoad(&live_now) != 0u;
}
#endif

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  formats_init(lid); // tables of quantized formats
  let g = wid.x + wid.y * nwg.x;
  if (g >= p.Groups * p.NHeadKV * p.NSeq) { return; }
  let row0 = (g % p.Groups) * BR;
  let kvh = (g / p.Groups) % p.NHeadKV;
  let seq = g / (p.Groups * p.NHeadKV);
  let kbase = kvh * p.K.z + seq * p.K.w;
  let vbase = kvh * p.V.z + seq * p.V.w;

  // Q transposed and scaled: (rg, c) stages rows 4rg..4rg+3, elements 8c..8c+7; rows past
  // the KV head's last are zero.
  for (var e = lid; e < RG * (HD / 8u); e = e + {{WG}}u) {
    let rg = e % RG;
    let c = e / RG;
    var x: array<vec4<f32>, 8>;
    for (var i = 0u; i < 4u; i = i + 1u) {
      let j = row0 + 4u * rg + i;
      if (j < p.Rows) {
        let b = (j % p.NQ) * p.Q.y + (kvh * p.RK2 + j / p.NQ) * p.Q.z + seq * p.Q.w + 8u * c * p.Q.x;
        for (var k = 0u; k < 8u; k = k + 1u) { x[k][i] = q_get(b + k * p.Q.x) * p.Scale; }
      }
    }
    for (var k = 0u; k < 8u; k = k + 1u) { qt[(8u * c + k) * RG + rg] = x[k]; }
  }

  // The softmax's row: its mask row and ALiBi slope (m0^(h+1) for the first NHeadLog2
  // heads, m1^(2(h-NHeadLog2)+1) after; the bases come as their log2, 0 without ALiBi).
  let sr = lid % BR;
  let sp = lid / BR;
  let sj = min(row0 + sr, p.Rows - 1u);
  let sh = kvh * p.RK2 + sj / p.NQ;
  let slope = exp2(select(p.L1 * f32(2u * (sh - p.NHeadLog2) + 1u), p.L0 * f32(sh + 1u), sh < p.NHeadLog2));
  let moff = (sj % p.NQ) * p.M.y + (sh % p.Me.z) * p.M.z + (seq % p.Me.w) * p.M.w;
  // The tiles that some row sees: masked tiles at the end (causal masks) and at the start
  // (sliding windows) are skipped.
  // SPLIT: this workgroup's share of the KV sequence, Chunk positions (whole tiles) from
  // wid.z * Chunk.
  var t_begin = wid.z * p.Chunk;
  var t_end = min(t_begin + p.Chunk, (p.NKV + BC - 1u) / BC * BC);
#if MASK
  if (lid == 0u) { atomicStore(&live, 0u); }
  workgroupBarrier();
  loop {
    if (t_end <= t_begin || tile_live(t_end - BC, moff, sp, lid)) { break; }
    t_end = t_end - BC;
  }
  loop {
    if (t_begin >= t_end || tile_live(t_begin, moff, sp, lid)) { break; }
    t_begin = t_begin + BC;
  }
#endif
  var m_run = neg_inf();
  var l_run = 0.0;

  let tr = lid % RG;
  let tc = lid / RG;
  var o: array<vec4<f32>, {{NO}}>; // [4][NV]
  for (var i = 0u; i < 4u * NV; i = i + 1u) { o[i] = vec4<f32>(0.0); }

#if PRE
  var kpre: array<KRows, {{KI}}>; // the next K chunk, loaded ahead
  k_fetch(&kpre, kbase, t_begin, 0u, lid);
#endif
  for (var t0 = t_begin; t0 < t_end; t0 = t0 + BC) {
#if MASK
    // The softmax's mask values of the tile, loaded now so that they arrive during the scores.
    var mk: array<MW, CPP>;
    for (var k = 0u; k < CPP; k = k + 1u) {
      let pos = t0 + CPP * sp + k;
      mk[k] = MW();
      if (pos < p.NKV) { mk[k] = mw(moff + pos); }
    }
#endif
    // Scores: the 4 x 4 block of rows 4tr.., positions t0 + 4tc.., a K chunk at a time.
    var s: array<vec4<f32>, 4>;
    for (var i = 0u; i < 4u; i = i + 1u) { s[i] = vec4<f32>(0.0); }
    for (var dc = 0u; dc < HD; dc = dc + DC) {
      workgroupBarrier(); // kv and pt are free
#if PRE
      if (dc == 0u) {
        k_put(&kpre, lid);
      } else {
        k_fetch(&kpre, kbase, t0, dc, lid);
        k_put(&kpre, lid);
      }
#else
      for (var e = lid; e < KE; e = e + {{WG}}u) { k_store(e, k_load(kbase, t0, dc, e)); }
#endif
      workgroupBarrier();
      for (var d = 0u; d < DC; d = d + 1u) {
        let b = kv[d * CG + tc];
        let a = qt[(dc + d) * RG + tr];
        s[0] = s[0] + a.x * b;
        s[1] = s[1] + a.y * b;
        s[2] = s[2] + a.z * b;
        s[3] = s[3] + a.w * b;
      }
    }
#if PRE
    // The first V chunk, loaded now: it is staged while the softmax runs.
    var vpre: array<VW, {{VI}}>;
    for (var i = 0u; i < {{VI}}u; i = i + 1u) { vpre[i] = v_load(vbase, t0, lid + i * {{WG}}u); }
#endif
    let o0 = 4u * tc * RG + tr;
    pt[o0] = vec4<f32>(s[0].x, s[1].x, s[2].x, s[3].x);
    pt[o0 + RG] = vec4<f32>(s[0].y, s[1].y, s[2].y, s[3].y);
    pt[o0 + 2u * RG] = vec4<f32>(s[0].z, s[1].z, s[2].z, s[3].z);
    pt[o0 + 3u * RG] = vec4<f32>(s[0].w, s[1].w, s[2].w, s[3].w);
    workgroupBarrier(); // scores written, kv free
#if PRE
    for (var i = 0u; i < {{VI}}u; i = i + 1u) { v_store(lid + i * {{WG}}u, vpre[i]); }
#endif

    // Softmax: row sr, positions CPP sp..; softcap, mask, -Inf past NKV.
    var xs: array<f32, CPP>;
    var mx = neg_inf();
    for (var k = 0u; k < CPP; k = k + 1u) {
      let c = CPP * sp + k;
      let pos = t0 + c;
      var x = neg_inf();
      if (pos < p.NKV) {
        x = pt[c * RG + sr / 4u][sr % 4u];
        if (p.Softcap != 0.0) { x = p.Softcap * tanh(x); }
#if MASK
        let mv = slope * m_dec(mk[k], moff + pos);
        x = select(x + mv, neg_inf(), is_neg_inf(mv));
#endif
      }
      xs[k] = x;
      mx = max(mx, x);
    }
    red[sp * BR + sr] = mx;
    workgroupBarrier();
    var mnew = m_run;
    for (var k = 0u; k < NP; k = k + 1u) { mnew = max(mnew, red[k * BR + sr]); }
    var alpha = 1.0;
    if (!is_neg_inf(mnew)) { alpha = select(exp(m_run - mnew), 0.0, is_neg_inf(m_run)); }
    var sum = 0.0;
    for (var k = 0u; k < CPP; k = k + 1u) {
      let x = xs[k];
      var w = 0.0;
      if (!is_neg_inf(x)) { w = exp(x - mnew); }
      pt[(CPP * sp + k) * RG + sr / 4u][sr % 4u] = w;
      sum = sum + w;
    }
    l_run = l_run * alpha + sum;
    m_run = mnew;
    if (sp == 0u) { row_alpha[sr] = alpha; }

    // Accumulators: rescaled, then the tile's weighted V rows, VC at a time.
    for (var cc = 0u; cc < BC; cc = cc + VC) {
#if PRE
      if (cc > 0u) {
        workgroupBarrier(); // kv free
        for (var e = lid; e < VE; e = e + {{WG}}u) { v_store(e, v_load(vbase, t0 + cc, e)); }
      }
      workgroupBarrier(); // pt, row_alpha and the V chunk written
      if (cc + VC >= BC && t0 + BC < t_end) {
        k_fetch(&kpre, kbase, t0 + BC, 0u, lid); // the next tile's first K chunk
      }
#else
      workgroupBarrier(); // pt and row_alpha written; kv free
      for (var e = lid; e < VE; e = e + {{WG}}u) { v_store(e, v_load(vbase, t0 + cc, e)); }
      workgroupBarrier();
#endif
      if (cc == 0u) {
        for (var i = 0u; i < 4u; i = i + 1u) {
          let a = row_alpha[4u * tr + i];
          for (var j = 0u; j < NV; j = j + 1u) { o[i * NV + j] = o[i * NV + j] * a; }
        }
      }
      for (var c = 0u; c < VC; c = c + 1u) {
        let pw = pt[(cc + c) * RG + tr];
        for (var j = 0u; j < NV; j = j + 1u) {
#if VCLAMP
          let v = kv[c * HV4 + min(tc + CG * j, HV4 - 1u)]; // columns past HDV: never written
#else
          let v = kv[c * HV4 + tc + CG * j];
#endif
          o[j] = o[j] + pw.x * v;
          o[j + NV] = o[j + NV] + pw.y * v;
          o[j + 2u * NV] = o[j + 2u * NV] + pw.z * v;
          o[j + 3u * NV] = o[j + 3u * NV] + pw.w * v;
        }
      }
    }
  }

  // The rows' sums: the NP shares added.
  workgroupBarrier();
  red[sp * BR + sr] = l_run;
  if (sp == 0u) { row_m[sr] = m_run; }
  workgroupBarrier();
  for (var i = 0u; i < 4u; i = i + 1u) {
    let r = 4u * tr + i;
    let j = row0 + r;
    if (j >= p.Rows) { break; }
    let h = kvh * p.RK2 + j / p.NQ;
    let row = (seq * p.NQ + j % p.NQ) * p.NHead + h; // dst row: [Dv, n_head, n_q, n_seq]
    var l = 0.0;
    for (var k = 0u; k < NP; k = k + 1u) { l = l + red[k * BR + r]; }
    var a = 1.0;
#if SINKS
    // The sink: one more logit, with no value.
    let m = row_m[r];
    let sk = sinks_get(h);
    let mn = max(m, sk);
    a = select(exp(m - mn), 0.0, is_neg_inf(m));
    l = l * a + exp(sk - mn);
#endif
#if SPLIT
    // The row's partial result: max, sum, accumulators (flash_attn_reduce.wgsl).
    let b = (row * p.Splits + wid.z) * (HDV + 2u);
    if (tc == 0u) {
      part_set(b, row_m[r]);
      part_set(b + 1u, l);
    }
    for (var jv = 0u; jv < NV; jv = jv + 1u) {
      let col = tc + CG * jv;
      if (col < HV4) {
        let v = o[i * NV + jv];
        for (var k = 0u; k < 4u; k = k + 1u) { part_set(b + 2u + 4u * col + k, v[k]); }
      }
    }
#else
    let inv = select(a / l, 0.0, l == 0.0);
    for (var jv = 0u; jv < NV; jv = jv + 1u) {
      let col = tc + CG * jv;
      if (col < HV4) {
        let v = o[i * NV + jv] * inv;
        for (var k = 0u; k < 4u; k = k + 1u) { dst_set(row * HDV + 4u * col + k, v[k]); }
      }
    }
#endif
  }
}
