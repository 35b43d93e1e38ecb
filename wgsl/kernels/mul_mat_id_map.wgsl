// MUL_MAT_ID for prompts, first step: the (slot, token) pairs sorted by expert and cut into
// the prompt kernel's column tiles (mul_mat_id_big.wgsl takes them). One workgroup of 256.
// Pair r = s + t Ne2 goes to expert ids[s, t] (clamped to the experts, as the mat-vec
// does: ggml asserts it is in range). The kernel writes `route`:
//   - words 2 y and 2 y + 1 for tile y < p.Tiles: e + (n << 16) for its expert e and its n
//     pairs (1 .. TN; 0 for no tile), and the list position of its first pair;
//   - from word 2 p.Tiles, the list: every pair, expert by expert (within an expert in no
//     particular order: each pair is one dst row of its own).
// p.Tiles bounds the tiles: each expert's pairs fill whole tiles but its last one.
// The experts' counts, then their next list positions, live in workgroup memory (MAXE).
const MAXE = 1024u; // the most experts (ops.idMaxExperts)
const PER = MAXE / 256u; // experts per invocation in the scan
const TN = {{TN}}u; // pairs a tile
var<workgroup> cnt: array<atomic<u32>, 1024>;
var<workgroup> scan: array<vec2<u32>, 256>;

// The expert of pair r.
fn expert(r: u32) -> u32 {
  let s = r % p.Ne2;
  let t = r / p.Ne2;
  return min(u32(max(ids_geti(s * p.I.x + t * p.I.y), 0)), p.Experts - 1u);
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
  let pairs = p.Batches;
  for (var e = lid; e < MAXE; e = e + 256u) { atomicStore(&cnt[e], 0u); }
  workgroupBarrier();
  for (var r = lid; r < pairs; r = r + 256u) { atomicAdd(&cnt[expert(r)], 1u); }
  workgroupBarrier();
  // This invocation's experts PER lid .. PER lid + PER - 1: their pairs and tiles, then
  // the sums over the invocations before (an inclusive scan, less its own).
  var c: array<u32, PER>;
  var own = vec2<u32>();
  for (var i = 0u; i < PER; i = i + 1u) {
    c[i] = atomicLoad(&cnt[PER * lid + i]);
    own = own + vec2<u32>(c[i], (c[i] + TN - 1u) / TN);
  }
  scan[lid] = own;
  workgroupBarrier();
  for (var d = 1u; d < 256u; d = d * 2u) {
    var v = scan[lid];
    if (lid >= d) { v = v + scan[lid - d]; }
    workgroupBarrier();
    scan[lid] = v;
    workgroupBarrier();
  }
  var at = scan[lid] - own; // the first pair's list position and the first tile
  let tiles = scan[255].y;
  for (var i = 0u; i < PER; i = i + 1u) {
    let e = PER * lid + i;
    atomicStore(&cnt[e], at.x); // where the expert's next pair goes
    for (var j = 0u; j < c[i]; j = j + TN) {
      route_seti(2u * at.y, i32(e | (min(TN, c[i] - j) << 16u)));
      route_seti(2u * at.y + 1u, i32(at.x + j));
      at.y = at.y + 1u;
    }
    at.x = at.x + c[i];
  }
  for (var y = tiles + lid; y < p.Tiles; y = y + 256u) { route_seti(2u * y, 0); }
  workgroupBarrier();
  for (var r = lid; r < pairs; r = r + 256u) {
    route_seti(2u * p.Tiles + atomicAdd(&cnt[expert(r)], 1u), i32(r));
  }
}
