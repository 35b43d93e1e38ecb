// The partial sums of a mat-vec workgroup added up in workgroup memory, for the mat-vec
// kernels that include it: each invocation's ACC sums (the kernel defines ACC, and RED =
// ACC * WG) are added over the workgroup into red[o * WG], o = 0 .. ACC - 1, which the
// kernel then stores.
var<workgroup> red: array<f32, {{RED}}>;

// SUM_SPAN is the partials of a sum that the first pass leaves (WG is a power of two).
const SUM_SPAN = ({{WG}}u + 7u) / 8u;

// Adds invocation lid's partial sums acc to the workgroup's, in uniform control flow: in
// two passes of three barriers in all, where a halving tree took 1 + log2(WG). The first
// adds up each sum's partials eight apart into SUM_SPAN of them (neighbouring invocations
// read neighbouring words), the second those. On an NVIDIA H200 (µs, weights beyond the
// L2 cache, the tree -> two passes, two runs each): Q4_K 14336 x 4096 28.5, 28.0 -> 26.8,
// 27.4 and at 8 columns 84.2, 83.5 -> 78.0, 78.9; Q6_K 36.8, 36.1 -> 35.1, 35.4; a chain
// of Q4_K 4096 x 4096 13.6, 13.8 -> 12.4, 12.5; the F16 gate 64.2, 62.8 -> 59.7, 59.6; a
// 1B Q4_K_M decode graph's GPU time 1,468, 1,470 -> 1,447, 1,449.
fn sum_partials(lid: u32, acc: ptr<function, array<f32, {{ACC}}>>) {
  for (var o = 0u; o < {{ACC}}u; o = o + 1u) { red[o * {{WG}}u + lid] = (*acc)[o]; }
  workgroupBarrier();
  for (var i = lid; i < {{ACC}}u * SUM_SPAN; i = i + {{WG}}u) {
    let b = (i / SUM_SPAN) * {{WG}}u + i % SUM_SPAN;
    var s = red[b];
    for (var j = 1u; j < {{WG}}u / SUM_SPAN; j = j + 1u) { s = s + red[b + j * SUM_SPAN]; }
    red[b] = s;
  }
  workgroupBarrier();
  for (var o = lid; o < {{ACC}}u; o = o + {{WG}}u) {
    var s = red[o * {{WG}}u];
    for (var c = 1u; c < SUM_SPAN; c = c + 1u) { s = s + red[o * {{WG}}u + c]; }
    red[o * {{WG}}u] = s;
  }
  workgroupBarrier();
}
