// The partial sums of a mat-vec workgroup added up in workgroup memory, for the mat-vec
// kernels that include it: each invocation's ACC sums (the kernel defines ACC, and RED =
// ACC * WG) are added over the workgroup into red[o * WG], o = 0 .. ACC - 1, which the
// kernel then stores.
var<workgroup> red: array<f32, {{RED}}>;

// Adds invocation lid's partial sums acc to the workgroup's, in uniform control flow.
fn sum_partials(lid: u32, acc: ptr<function, array<f32, {{ACC}}>>) {
  for (var o = 0u; o < {{ACC}}u; o = o + 1u) { red[o * {{WG}}u + lid] = (*acc)[o]; }
  workgroupBarrier();
  for (var s = {{WG}}u / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      for (var o = 0u; o < {{ACC}}u; o = o + 1u) { red[o * {{WG}}u + lid] = red[o * {{WG}}u + lid] + red[o * {{WG}}u + lid + s]; }
    }
    workgroupBarrier();
  }
}
