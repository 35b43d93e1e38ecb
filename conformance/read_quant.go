package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
)

// readQuant returns the elements of a quantized tensor (rows of whole blocks, any row,
// plane and batch strides) as float32 in logical order, dequantized by ggml's own
// routine, as test-backend-ops compares quantized results.
func (r *Runner) readQuant(t ggml.Tensor) ([]float32, error) {
	typ := t.Type()
	be, bs := int64(typ.BlockElems()), uint64(typ.Size())
	ne, nb := t.Ne(), t.Nb()
	if be == 0 || ne[0]%be != 0 || nb[0] != bs {
		return nil, fmt.Errorf("tensor %s: %s rows of %d elements are not whole blocks", t.Name(), typ, ne[0])
	}
	span := r.L.NBytes(t)
	raw := make([]byte, span)
	r.L.TensorGet(t, raw, 0)
	rowBytes := uint64(ne[0]/be) * bs
	out := make([]float32, 0, t.NElements())
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			for i1 := int64(0); i1 < ne[1]; i1++ {
				off := uint64(i1)*nb[1] + uint64(i2)*nb[2] + uint64(i3)*nb[3]
				if off+rowBytes > span {
					return nil, fmt.Errorf("tensor %s: row at %d beyond ggml_nbytes %d", t.Name(), off, span)
				}
				v, err := r.L.Dequantize(typ, raw[off:off+rowBytes])
				if err != nil {
					return nil, err
				}
				out = append(out, v...)
			}
		}
	}
	return out, nil
}

// build returns the case's graph builder for backend be: RefBuild on a CPU backend when
// the case has one, else Build.
func (r *Runner) build(c *Case, be ggml.Backend) func(*Builder) ggml.Tensor {
	if c.RefBuild != nil && (be == r.Ref || r.L.DevName(r.L.BackendDevice(be)) == "CPU") {
		return c.RefBuild
	}
	return c.Build
}
