package ops

import "github.com/ggml-wgpu/ggml-wgpu/tensor"

// UPSCALE (ggml_upscale, ggml_interpolate: vision encoders' resized position embeddings
// and feature maps): dst {ne0..ne3} from src0 {ne00..ne03} F32; op_params[0] the mode
// (bits 0-7) and flags. Taken here:
//   - NEAREST where every dimension grows by a whole factor k (dst index i reads i / k, as
//     the CPU backend's float quotient truncates to);
//   - BILINEAR without antialiasing, dims 2 and 3 unchanged: with pixel offset o (0.5, 0
//     with ALIGN_CORNERS, whose scale is (ne - 1) / (ne0 - 1)), x = (i + o) / sf - o, the
//     two neighbours clamped to the row, weights clamped to [0, 1], as the CPU backend.
// Other modes and shapes answer false (their float truncations are not reproducible
// exactly here). Any strides.

type upscaleParams struct {
	Ne, A, D [4]uint32 // dst shape; src0, dst strides
	N        uint32
	Src      [4]uint32 // src0's shape
	Bilinear uint32
	Sf0, Sf1 float32 // the scale factors of dims 0 and 1 (bilinear)
	Offset   float32 // the pixel offset (bilinear)
}

// Scale modes and flags of ggml_scale_mode.
const (
	scaleNearest      = 0
	scaleBilinear     = 1
	scaleAlignCorners = 1 << 8
	scaleAntialias    = 1 << 9
)

func init() {
	describeFamily("UPSCALE", "F32", "NEAREST by whole factors; BILINEAR (ALIGN_CORNERS too) over dims 0 and 1; any strides")
	register(tensor.OpUpscale, family{supports: supportsUpscale, lower: lowerUpscale, examples: func() []*tensor.Tensor {
		return []*tensor.Tensor{
			node(tensor.OpUpscale, f32(8, 6, 3), []int32{scaleNearest}, f32(4, 3, 3)),
			node(tensor.OpUpscale, f32(7, 5, 3), []int32{scaleBilinear | scaleAlignCorners}, f32(4, 3, 3)),
		}
	}})
}

func supportsUpscale(t *tensor.Tensor, _ *Limits) bool {
	a := t.Src[0]
	if a == nil || a.Type != tensor.F32 || t.Type != tensor.F32 || !elementAligned(a) || !elementAligned(t) {
		return false
	}
	mode, flags := t.Params[0]&0xff, t.Params[0]&^0xff
	switch {
	case mode == scaleNearest && flags == 0: // ALIGN_CORNERS changes its factors
		for d := range 4 {
			if a.Ne[d] < 1 || t.Ne[d] < a.Ne[d] || t.Ne[d]%a.Ne[d] != 0 {
				return false
			}
		}
		return true
	case mode == scaleBilinear && flags&scaleAntialias == 0 && flags&^scaleAlignCorners == 0:
		return a.Ne[0] >= 1 && a.Ne[1] >= 1 && t.Ne[0] >= 1 && t.Ne[1] >= 1 && t.Ne[2] == a.Ne[2] && t.Ne[3] == a.Ne[3]
	}
	return false
}

func lowerUpscale(t *tensor.Tensor, l *Limits) ([]Dispatch, error) {
	a := t.Src[0]
	p := upscaleParams{Ne: dims(t), A: strides(a), D: strides(t), N: uint32(t.Elems()), Src: dims(a)}
	if t.Params[0]&0xff == scaleBilinear {
		p.Bilinear, p.Offset = 1, 0.5
		p.Sf0, p.Sf1 = float32(t.Ne[0])/float32(a.Ne[0]), float32(t.Ne[1])/float32(a.Ne[1])
		if t.Params[0]&scaleAlignCorners != 0 {
			p.Offset = 0
			if t.Ne[0] > 1 && a.Ne[0] > 1 {
				p.Sf0 = float32(t.Ne[0]-1) / float32(a.Ne[0]-1)
			}
			if t.Ne[1] > 1 && a.Ne[1] > 1 {
				p.Sf1 = float32(t.Ne[1]-1) / float32(a.Ne[1]-1)
			}
		}
	}
	s := spec("upscale", wgElementwise, p, nil, in("src0", a), out("dst", t))
	return []Dispatch{{Spec: s, Tensors: []*tensor.Tensor{a, t}, Params: p, Grid: gridElems(t.Elems(), l)}}, nil
}
