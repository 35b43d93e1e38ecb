package ops

import (
	"fmt"
	"maps"

	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// llama's attention input with its KV store in two dispatches: add+norm+mul+qkv (the
// norm quantizing its result, the integer mat-vec's MULTI form computing Q, V and K)
// followed by K's RESHAPE, ROPE Q, ROPE K, K's view and SET_ROWS into the K cache, V's
// view and SET_ROWS into the V cache (rope+rope+set_rows+set_rows). The MULTI dispatch's
// ROPE_KV form rotates each pair of Q and K rows as its workgroup computes them (two rows
// a workgroup: a pair of ROPE's NORMAL mode) and stores Q's into ROPE Q's result and K's
// and V's rows straight into their caches, in place of the KV store's dispatch: one
// dependent dispatch less a layer. On an H100 (GPU time per decode graph,
// GGML_WGPU_PROFILE=1 bench -fa on -p 0 -n 64, two alternating runs each,
// GGML_WGPU_ROPE_KV=0 -> the row): a 1B-class Q4_0 llama 920.5, 920.8 -> 882.2, 882.9
// µs, Q4_K 975.1, 972.4 -> 932.1, 930.3.

// addNormQKVRopeRow is the fusion row; it comes before add+norm+mul+qkv.
var addNormQKVRopeRow = Fusion{
	Name:    "add+norm+mul+qkv+rope+set_rows",
	Ops:     append(append(append([]OpSet(nil), addNormQKVRow.Ops...), viewOps), ropeRopeSetRowsRowsRow.Ops...),
	Private: []int{1, 3, 5, 7, 10},
	Guard:   guardAddNormQKVRope,
	Lower:   lowerAddNormQKVRope,
	Example: func() []*tensor.Tensor { return normQKVRopeNodes(tensor.Q4_K, 64, 32, 8, 2048, 16) },
}

// ropeKVParams are the parameters of the MULTI form with ROPE_KV: the MULTI form's, whose
// Db and Dc describe the K and V caches (strides along and across rows, rows), then
// ROPE's rotation.
type ropeKVParams struct {
	swarMultiParams
	ropeKVRotation
}

// ropeKVRotation is ROPE's rotation as rope_math.wgsl reads it and the head size, for the
// forms whose epilogue rotates Q and K (rope_kv_store.wgsl).
type ropeKVRotation struct {
	NDims, NOffs, NRot, Partner                            uint32
	ThetaScale, FreqScale, ExtFactor, MScale, Corr0, Corr1 float32
	HeadD                                                  uint32
}

// ropeKVSetup returns the rotation of ROPE K (rk) and ROPE's defines for it.
func ropeKVSetup(rk *tensor.Tensor) (ropeKVRotation, map[string]string) {
	rp, rdefs, _, _ := ropeSetup(rk)
	return ropeKVRotation{NDims: rp.NDims, NOffs: rp.NOffs, NRot: rp.NRot, Partner: rp.Partner,
		ThetaScale: rp.ThetaScale, FreqScale: rp.FreqScale, ExtFactor: rp.ExtFactor, MScale: rp.MScale,
		Corr0: rp.Corr0, Corr1: rp.Corr1, HeadD: uint32(rk.Ne[0])}, rdefs
}

// ropeKVGuard checks what both ROPE_KV forms need of ROPE K (rk) and the products mms:
// NORMAL mode over whole heads (every pair rotated) whose size divides each product's
// rows, no frequency factors, and one column.
func ropeKVGuard(rk *tensor.Tensor, mms []*tensor.Tensor) bool {
	head := rk.Ne[0]
	if rk.Params[2] != tensor.RopeNormal || int64(rk.Params[1]) != head || rk.Params[15] != 0 || head%2 != 0 || rk.Src[2] != nil {
		return false
	}
	for _, mm := range mms {
		if mm.Ne[0]%head != 0 || mm.Ne[1] != 1 || mm.Ne[2] != 1 || mm.Ne[3] != 1 {
			return false
		}
	}
	return true
}

// normQKVRopeNodes returns llama's attention input of one token with its KV store, as the
// graph holds them: normQKVNodes (weights of type ty, heads of d, nh query heads and nhkv
// KV heads, rows of k) and K's RESHAPE, the ROPEs of Q and K (NORMAL mode over the whole
// head), K's rows into an F16 cache of cells rows at I64 indices, V's into another.
func normQKVRopeNodes(ty tensor.Type, d, nh, nhkv, k, cells int64) []*tensor.Tensor {
	n := normQKVNodes([3]tensor.Type{ty, ty, ty}, d*nh, d*nhkv, k)
	kc := n[7]
	n[4].Ne = [4]int64{d, nh, 1, 1}
	n[6].Ne = [4]int64{d, nhkv, 1, 1}
	n[4].Nb, n[6].Nb = contiguous(tensor.F32, d, nh).Nb, contiguous(tensor.F32, d, nhkv).Nb
	kr := node(tensor.OpReshape, f32(d, nhkv), nil, kc)
	pos := contiguous(tensor.I32, 1)
	params := []int32{0, int32(d), tensor.RopeNormal, 0, 4096, int32(f32bits(10000)), int32(f32bits(1)), 0, int32(f32bits(1)), int32(f32bits(32)), int32(f32bits(1)), 0, 0, 0, 0, 0}
	rq := node(tensor.OpRope, f32(d, nh), params, n[4], pos)
	rk := node(tensor.OpRope, f32(d, nhkv), params, kr, pos)
	kview := node(tensor.OpView, f32(d*nhkv, 1), nil, rk)
	kset := node(tensor.OpSetRows, contiguous(tensor.F16, d*nhkv, cells), nil, kview, contiguous(tensor.I64, 1), contiguous(tensor.F16, d*nhkv, cells))
	vview := node(tensor.OpView, f32(d*nhkv, 1), nil, n[6])
	vset := node(tensor.OpSetRows, contiguous(tensor.F16, d*nhkv, cells), nil, vview, contiguous(tensor.I64, 1), contiguous(tensor.F16, d*nhkv, cells))
	return append(n, kr, rq, rk, kview, kset, vview, vset)
}

// viewBase returns the tensor whose elements, in the same order, the views t (possibly t
// itself) show: nil where a view on the way shows others (an offset, strides, fewer).
func viewBase(t *tensor.Tensor) *tensor.Tensor {
	for t != nil && t.Op.IsView() {
		s := t.Src[0]
		if s == nil || t.Loc != s.Loc || t.Type != s.Type || !t.Contiguous() || !s.Contiguous() || t.Elems() != s.Elems() {
			return nil
		}
		t = s
	}
	return t
}

// ropeKVFormat reports whether the ROPE_KV form takes weights of type ty: the formats of
// the integer mat-vec that bind no lookup tables.
func ropeKVFormat(ty tensor.Type) bool {
	switch ty {
	case tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.Q4_K, tensor.Q5_K:
		return true
	}
	return false
}

// ropeKVRoles returns the indices among the match's products (multiProducts' order) of
// Q (what ROPE Q rotates), K (ROPE K) and V (what V's SET_ROWS stores), ok false unless
// they are the three products, each once.
func ropeKVRoles(n []*tensor.Tensor) (roles [3]int, ok bool) {
	return productRoles(multiProducts(n[3:8]), n[9], n[10], n[14])
}

// productRoles returns the indices among the products mms of Q (what ROPE Q, rq,
// rotates), K (what ROPE K, rk, rotates) and V (what V's SET_ROWS, vset, stores), ok false
// unless they are the three products, each once.
func productRoles(mms []*tensor.Tensor, rq, rk, vset *tensor.Tensor) (roles [3]int, ok bool) {
	for r, t := range []*tensor.Tensor{rq.Src[0], rk.Src[0], vset.Src[0]} {
		b := viewBase(t)
		roles[r] = -1
		for i, mm := range mms {
			if mm == b {
				roles[r] = i
			}
		}
		if roles[r] < 0 {
			return roles, false
		}
	}
	return roles, roles[0] != roles[1] && roles[0] != roles[2] && roles[1] != roles[2]
}

// guardAddNormQKVRope admits the fifteen nodes where add+norm+mul+qkv admits the first
// eight with the three products on MULTI (one format, ropeKVFormat), the ninth is a
// view, rope+rope+set_rows+set_rows admits the last six, the ropes rotate the Q and K
// products and V's store stores the V product (ropeKVRoles), the ropes are NORMAL over
// whole heads (every pair rotated) whose size divides the products' rows, without
// frequency factors, a workgroup computes two rows, and the bindings fit the device.
func guardAddNormQKVRope(n []*tensor.Tensor, l *Limits) bool {
	if l.RopeKVOff || !guardAddNormQKV(n[:8], l) || !guardRopeRopeSetRowsRows(n[9:], l) {
		return false
	}
	mms := multiProducts(n[3:8])
	if _, other := normQKVSplit(mms); other != nil || !ropeKVFormat(mms[0].Src[0].Type) || mms[0].Ne[1] != 1 {
		return false
	}
	if _, ok := ropeKVRoles(n); !ok {
		return false
	}
	if !ropeKVGuard(n[10], mms) {
		return false
	}
	if rows, _ := swarFit(swarXQRows, swarXQWG, 1, 1, l); rows != 2 {
		return false
	}
	// three weights, the column, Q, positions, two indices, two caches: ten bindings, as
	// many as a dispatch may have (exec.MaxBindings), so no room for frequency factors
	return l.MaxStorageBuffers == 0 || ropeKVBindings <= l.MaxStorageBuffers
}

// ropeKVBindings is the storage bindings of the ROPE_KV form's dispatch.
const ropeKVBindings = 10

// lowerAddNormQKVRope lowers the fifteen nodes as add+norm+mul+qkv's norm dispatch and its
// MULTI dispatch in the ROPE_KV form.
func lowerAddNormQKVRope(n []*tensor.Tensor, l *Limits) ([]Dispatch, error) {
	ds, err := lowerAddNormQKV(n[:8], l)
	if err != nil {
		return nil, err
	}
	roles, ok := ropeKVRoles(n)
	if len(ds) != 2 || !ok {
		return nil, fmt.Errorf("add+norm+mul+qkv+rope+set_rows: %d dispatches before the store, roles %v", len(ds), ok)
	}
	multi := ds[1]
	form := ropeKVForm(multi, n[9], n[10], n[12], n[14], roles, func(rot ropeKVRotation, kc, vc [4]uint32) any {
		p := ropeKVParams{swarMultiParams: multi.Params.(swarMultiParams), ropeKVRotation: rot}
		p.Db, p.Dc = kc, vc
		return p
	})
	return []Dispatch{ds[0], form}, nil
}

// ropeKVForm returns the ROPE_KV form of the products' dispatch multi (its kernel, defines,
// workgroup and grid) for ROPE Q rq, ROPE K rk and the stores kset and vset, the products'
// roles as productRoles gives them, with the parameters that params builds from multi's,
// the rotation and the K and V caches (strides along and across rows, rows). It binds the
// weights and the column as multi binds them, then ROPE Q's result, the positions of ROPE
// K, the stores' indices and the caches last (V's, the last node's, last of all).
func ropeKVForm(multi Dispatch, rq, rk, kset, vset *tensor.Tensor, roles [3]int,
	params func(rot ropeKVRotation, kc, vc [4]uint32) any) Dispatch {
	cache := func(set *tensor.Tensor) [4]uint32 {
		d := strides(set)
		return [4]uint32{d[0], d[1], uint32(set.Ne[1]), 0}
	}
	rot, rdefs := ropeKVSetup(rk)
	p := params(rot, cache(kset), cache(vset))
	defs := maps.Clone(multi.Spec.Defines)
	maps.Copy(defs, rdefs)
	defs["ROPE_KV"] = "1"
	defs["ROLE_Q"], defs["ROLE_K"], defs["ROLE_V"] = fmt.Sprint(roles[0]), fmt.Sprint(roles[1]), fmt.Sprint(roles[2])
	var operands []wgslOperand
	var tensors []*tensor.Tensor
	for i, o := range multi.Spec.Operands {
		if !o.Written {
			operands, tensors = append(operands, wgslOperand(o)), append(tensors, multi.Tensors[i])
		}
	}
	operands = append(operands, out("dst", rq), in("pos", rk.Src[1]),
		in("kidx", kset.Src[1]), in("vidx", vset.Src[1]), out("kdst", kset), out("vdst", vset))
	tensors = append(tensors, rq, rk.Src[1], kset.Src[1], vset.Src[1], kset, vset)
	s := spec(multi.Spec.Kernel, multi.Spec.Workgroup, p, defs, operands...)
	return Dispatch{Spec: s, Tensors: tensors, Params: p, Grid: multi.Grid}
}
