// mul_mat_big: the prompt kernels' slice sizes and slice buffers (mul_mat_big.wgsl).
const TK = 8u;
const TN = {{TN}}u; // dst columns of a workgroup: 128, or 64 (NARROW)
const SLICE = 256u; // vec4s of one slice of src0: TK x 128 floats
const SLICEB = {{SLICEB}}u; // vec4s of one slice of src1: TK x TN floats
var<workgroup> ta: array<vec4<f32>, 512>; // two slices
var<workgroup> tb: array<vec4<f32>, {{TBV}}>;
