// The bitonic network of the sorting kernels (sort.wgsl, moe_router.wgsl): sorts order[0]
// .. order[NP - 1] (NP a power of two) by precedes(a, x, y), which the including kernel
// defines (a: its row's first element), the workgroup's invocations comparing pairs; it
// ends with a barrier. Call it in uniform control flow.
fn bitonic(lid: u32, a: u32) {
  for (var k = 2u; k <= NP; k = k * 2u) {
    for (var j = k / 2u; j > 0u; j = j / 2u) {
      for (var i = lid; i < NP; i = i + {{WG}}u) {
        let l = i ^ j;
        if (l > i) {
          let x = order[i];
          let y = order[l];
          // blocks of k alternate direction; the last merge (k = NP) is ascending
          if (select(precedes(a, x, y), precedes(a, y, x), (i & k) == 0u)) {
            order[i] = y;
            order[l] = x;
          }
        }
      }
      workgroupBarrier();
    }
  }
}
