package conformance

import (
	"fmt"

	"github.com/ggml-wgpu/ggml-wgpu/conformance/ggml"
	"github.com/ggml-wgpu/ggml-wgpu/tensor"
)

// ---------------------------------------------------------------------------------------
// GRAPH(add+norm+gate): llama's residual sum, its norm and weight (ffn_inp, ffn_norm),
// then the feed-forward gate and up products of the result and their SWIGLU, as the
// fusion row add+norm+mul+gate computes them where the gate takes the integer mat-vec's
// gate form: the norm's dispatch quantizes its result for the gate (ops/norm_gate.go).
// The sum and the weighted norm are checked as well as the gate's result. (With the norm's
// weights around zero, the CPU's 8-bit activations of the K-quants, one scale a block of
// 256, left an NMSE of 6e-4 against exact ones.)

// normGateCase builds the graph for k-element rows, n columns (decode: 1) and m x k gate
// and up weights of type ta; norm is "rms_norm" or "norm".
func normGateCase(norm string, ta tensor.Type, m, k, n int64) *Case {
	return &Case{Name: fmt.Sprintf("GRAPH(add+%s*w+ffn_swiglu,type=%s,m=%d,n=%d,k=%d)", norm, ta, m, n, k),
		Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			attn, inp := b.New("attn_out", f32, k, n), b.New("inpSA", f32, k, n)
			w := b.New("norm_w", f32, k)
			b.Init(w, Uniform(0.5, 1.5)) // positive, as a model's norm weights
			gate, up := b.New("w_gate", ta, k, m), b.New("w_up", ta, k, m)
			sum := l.Add(ctx, attn, inp)
			x := l.Mul(ctx, normOf(b, norm, sum), w)
			l.SetOutput(x)
			b.Check(x)
			l.SetOutput(sum)
			b.Check(sum)
			return l.SwiGLUSplit(ctx, l.MulMat(ctx, gate, x), l.MulMat(ctx, up, x))
		}}
}

// normOf is NORM (norm "norm") or RMS_NORM of x.
func normOf(b *Builder, norm string, x ggml.Tensor) ggml.Tensor {
	if norm == "norm" {
		return b.L.Norm(b.Ctx, x, 1e-5)
	}
	return b.L.RMSNorm(b.Ctx, x, 1e-5)
}

// normGateCases are the GRAPH(add+norm+gate) cases: every format of the integer
// mat-vec's gate form at a decode's row of 2048 (a 1B llama's), Q4_0 and Q4_K at 4096
// (8B), rows of one or two groups, a row that is no power of two, several columns, and
// NORM in place of RMS_NORM.
func normGateCases() []*Case {
	var cs []*Case
	for _, ta := range swarTypes {
		cs = append(cs, normGateCase("rms_norm", ta, 40, 2048, 1))
	}
	return append(cs, normGateCase("rms_norm", tensor.Q4_0, 24, 4096, 1), normGateCase("rms_norm", tensor.Q4_K, 24, 4096, 1),
		normGateCase("rms_norm", tensor.Q4_0, 9, 64, 1), normGateCase("rms_norm", tensor.Q4_K, 9, 256, 1),
		normGateCase("rms_norm", tensor.Q8_0, 9, 3072, 1), normGateCase("rms_norm", tensor.Q4_0, 20, 2048, 2),
		normGateCase("rms_norm", tensor.Q4_K, 20, 1024, 4), normGateCase("rms_norm", tensor.MXFP4, 12, 512, 2),
		normGateCase("norm", tensor.Q4_K, 16, 2048, 1))
}

// ---------------------------------------------------------------------------------------
// GRAPH(add+norm+qkv): llama's residual sum, its norm and weight (l_out, attn_norm), then
// the Q, V and K projections of the result with the RESHAPEs of Q and V between them, as
// the fusion row add+norm+mul+qkv computes them: the norm's dispatch quantizes its result
// and one dispatch of the integer mat-vec computes the three products (ops/norm_gate.go).
// Each product, the sum and the weighted norm are checked.

// normQKVCase builds the graph for a k-element row, Q weights of mq rows and K and V
// weights of mkv rows, all of type ta; norm is "rms_norm" or "norm".
func normQKVCase(norm string, ta tensor.Type, mq, mkv, k int64) *Case {
	return normQKVMixedCase(norm, [3]tensor.Type{ta, ta, ta}, mq, mkv, k)
}

// normQKVMixedCase is normQKVCase with weights of types ts (Q, V, K); the name gives
// all three where they differ.
func normQKVMixedCase(norm string, ts [3]tensor.Type, mq, mkv, k int64) *Case {
	return normQKVColsCase(norm, ts, mq, mkv, k, 1)
}

// normQKVColsCase is normQKVMixedCase of n columns (tokens); the name gives n where it is
// more than one.
func normQKVColsCase(norm string, ts [3]tensor.Type, mq, mkv, k, n int64) *Case {
	types := ts[0].String()
	if ts[1] != ts[0] || ts[2] != ts[0] {
		types = fmt.Sprintf("%s/%s/%s", ts[0], ts[1], ts[2])
	}
	cols := ""
	if n > 1 {
		cols = fmt.Sprintf(",n=%d", n)
	}
	return &Case{Name: fmt.Sprintf("GRAPH(add+%s*w+qkv,type=%s,mq=%d,mkv=%d,k=%d%s)", norm, types, mq, mkv, k, cols),
		Op: "GRAPH", Types: types, MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			attn, inp := b.New("ffn_out", f32, k, n), b.New("ffn_inp", f32, k, n)
			w := b.New("norm_w", f32, k)
			b.Init(w, Uniform(0.5, 1.5))
			wq, wv, wk := b.New("attn_q", ts[0], k, mq), b.New("attn_v", ts[1], k, mkv), b.New("attn_k", ts[2], k, mkv)
			sum := l.Add(ctx, attn, inp)
			x := l.Mul(ctx, normOf(b, norm, sum), w)
			q := l.MulMat(ctx, wq, x)
			rq := l.Reshape4D(ctx, q, mq, n, 1, 1)
			v := l.MulMat(ctx, wv, x)
			rv := l.Reshape4D(ctx, v, mkv, n, 1, 1)
			kc := l.MulMat(ctx, wk, x)
			b.Expand(rq)
			b.Expand(rv)
			for _, t := range []ggml.Tensor{sum, x} {
				l.SetOutput(t)
				b.Check(t)
			}
			b.Check(q)
			b.Check(v)
			return kc
		}}
}

// normQKVCases are the GRAPH(add+norm+qkv) cases: the integer mat-vec's formats at a 1B
// llama's shapes (row 2048, Q 2048 rows, K and V 512), an 8B's (4096, 4096, 1024) in Q4_0
// and Q4_K, row counts that leave a workgroup's last row past the product's, NORM in
// place of RMS_NORM, a product of another format (a Q4_K_M's Q6_K V, at the 1B's and
// the 8B's shapes; a Q6_K K, the last node; an F16 Q), and several columns (2 to 8: the
// nibble formats at four rows a workgroup and at two, an odd count, the coded formats at
// their most columns, HBIT's lanes, a Q6_K V).
func normQKVCases() []*Case {
	var cs []*Case
	for _, ta := range swarTypes {
		if ta != tensor.Q8_0 {
			cs = append(cs, normQKVCase("rms_norm", ta, 64, 16, 2048))
		}
	}
	return append(cs, normQKVCase("rms_norm", tensor.Q4_0, 96, 24, 4096), normQKVCase("rms_norm", tensor.Q4_K, 96, 24, 4096),
		normQKVCase("rms_norm", tensor.Q4_0, 33, 7, 256), normQKVCase("rms_norm", tensor.Q5_K, 17, 9, 512),
		normQKVCase("norm", tensor.Q4_0, 64, 16, 2048),
		normQKVMixedCase("rms_norm", [3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, 64, 16, 2048),
		normQKVMixedCase("rms_norm", [3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, 96, 24, 4096),
		normQKVMixedCase("rms_norm", [3]tensor.Type{tensor.Q5_K, tensor.Q5_K, tensor.Q6_K}, 33, 7, 512),
		normQKVMixedCase("rms_norm", [3]tensor.Type{tensor.F16, tensor.Q4_0, tensor.Q4_0}, 40, 24, 2048),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q4_0, tensor.Q4_0, tensor.Q4_0}, 40, 12, 2048, 2),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q4_0, tensor.Q4_0, tensor.Q4_0}, 33, 7, 256, 8),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q4_K}, 96, 24, 4096, 4),
		normQKVColsCase("norm", [3]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q4_K}, 17, 9, 512, 3),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q4_K, tensor.Q4_K, tensor.Q4_K}, 20, 8, 768, 7),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q5_K, tensor.Q5_K, tensor.Q5_K}, 20, 8, 1024, 4),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.MXFP4, tensor.MXFP4, tensor.MXFP4}, 20, 8, 1024, 2),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q5_0, tensor.Q5_0, tensor.Q5_0}, 20, 8, 1024, 2),
		normQKVColsCase("rms_norm", [3]tensor.Type{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K}, 96, 24, 4096, 4))
}

// ---------------------------------------------------------------------------------------
// GRAPH(add+norm+qkv+rope+kv): GRAPH(add+norm+qkv) of one token followed by llama's KV
// store as its graph orders it: K's RESHAPE (Q's and V's follow their products), ROPE Q,
// ROPE K (NORMAL mode over whole heads), K's rows into the K cache at an I64 index and V's
// into the V cache, which the fusion row add+norm+mul+qkv+rope+set_rows computes in two
// dispatches: the norm's, and the MULTI products' rotating and storing what they compute
// (ops/norm_qkv_rope.go). The sum, the weighted norm, ROPE Q's result and both caches
// (whole) are checked.

// normQKVRopeCase builds the graph for heads of hd elements, nh query heads over nkv KV
// heads, k-element rows, weights of type ta, caches of type cache and rotation p.
func normQKVRopeCase(ta tensor.Type, hd, nh, nkv, k int64, cache tensor.Type, p ropeParams) *Case {
	return qkvRopeCaseOrder(ta, hd, nh, nkv, k, cache, p, false, false)
}

// qkvRopeCase is normQKVRopeCase in llama's own order (ROPE Q right after Q's RESHAPE,
// as the vectorised row takes it; normQKVRopeCase's is the order after graph_optimize
// sinks ROPE Q for the integer row), with noAdd a model's first layer: the norm of the
// embeddings, no residual ADD before it.
func qkvRopeCase(ta tensor.Type, hd, nh, nkv, k int64, cache tensor.Type, p ropeParams, noAdd bool) *Case {
	return qkvRopeCaseOrder(ta, hd, nh, nkv, k, cache, p, noAdd, true)
}

// qkvRopeCaseOrder builds the cases of normQKVRopeCase and qkvRopeCase; natural puts ROPE
// Q right after Q's RESHAPE.
func qkvRopeCaseOrder(ta tensor.Type, hd, nh, nkv, k int64, cache tensor.Type, p ropeParams, noAdd, natural bool) *Case {
	ff := 0
	if p.ff {
		ff = 1
	}
	name := "add+rms_norm*w"
	if noAdd {
		name = "rms_norm*w"
	}
	order := ""
	if natural {
		order = ",llama_order"
	}
	return &Case{Name: fmt.Sprintf("GRAPH(%s+qkv+rope+kv,type=%s,hd=%d,nh=%d,nh_kv=%d,k=%d,cache=%s,fb=%g,fs=%g,ef=%g,af=%g,ff=%d%s)",
		name, ta, hd, nh, nkv, k, cache, p.fb, p.fs, p.ef, p.af, ff, order),
		Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			const cells = 10
			attn, inp := b.New("ffn_out", f32, k, 1), b.New("ffn_inp", f32, k, 1)
			w := b.New("norm_w", f32, k)
			b.Init(w, Uniform(0.5, 1.5))
			wq, wv, wk := b.New("attn_q", ta, k, hd*nh), b.New("attn_v", ta, k, hd*nkv), b.New("attn_k", ta, k, hd*nkv)
			sum := l.Add(ctx, attn, inp)
			if noAdd {
				sum = inp
			}
			x := l.Mul(ctx, l.RMSNorm(ctx, sum, 1e-5), w)
			args := ropeExtArgs(int(hd), tensor.RopeNormal, p)
			var freq ggml.Tensor
			if p.ff {
				freq = b.New("freq_factors", f32, hd/2)
				b.Init(freq, Uniform(0.9, 1.1))
			}
			pos := b.Index("pos", 1000, 1)
			q := l.Reshape4D(ctx, l.MulMat(ctx, wq, x), hd, nh, 1, 1)
			b.Expand(q)
			var rq ggml.Tensor
			if natural {
				rq = l.RopeExt(ctx, q, pos, freq, args)
				b.Expand(rq)
			}
			v := l.Reshape4D(ctx, l.MulMat(ctx, wv, x), hd, nkv, 1, 1)
			b.Expand(v)
			kc := l.Reshape4D(ctx, l.MulMat(ctx, wk, x), hd, nkv, 1, 1)
			b.Expand(kc)
			if !natural {
				rq = l.RopeExt(ctx, q, pos, freq, args)
				b.Expand(rq)
			}
			rk := l.RopeExt(ctx, kc, pos, freq, args)
			b.Expand(rk)
			kCache := b.New("cache_k", cache, hd*nkv, cells)
			kIdx := b.New("k_idxs", tensor.I64, 1)
			b.Init(kIdx, DistinctRows(cells, 1))
			storeK := l.SetRows(ctx, kCache, l.View2D(ctx, rk, hd*nkv, 1, rk.Nb()[2], 0), kIdx)
			b.Expand(storeK)
			vCache := b.New("cache_v", cache, hd*nkv, cells)
			vIdx := b.New("v_idxs", tensor.I64, 1)
			b.Init(vIdx, DistinctRows(cells, 1))
			storeV := l.SetRows(ctx, vCache, l.View2D(ctx, v, hd*nkv, 1, v.Nb()[2], 0), vIdx)
			for _, t := range []ggml.Tensor{sum, x, rq} {
				if t == inp {
					continue
				}
				l.SetOutput(t)
				b.Check(t)
			}
			b.Check(storeK)
			return storeV
		}}
}

// normQKVRopeCases are the GRAPH(add+norm+qkv+rope+kv) cases: a 1B llama's shapes (heads
// of 64, 32 over 8, rows of 2048) in Q4_0 and Q4_K with F16 caches, an 8B's heads (128,
// 32 over 8, rows of 4096, fewer heads) in Q4_K, Q5_K with an F32 cache, and a rotation
// with YaRN (without frequency factors, which keep the row out: ops/norm_qkv_rope.go).
func normQKVRopeCases() []*Case {
	yarn := ropeAll
	yarn.ff = false
	return []*Case{
		normQKVRopeCase(tensor.Q4_0, 64, 32, 8, 2048, f16, ropePlain),
		normQKVRopeCase(tensor.Q4_K, 64, 32, 8, 2048, f16, ropePlain),
		normQKVRopeCase(tensor.Q4_K, 128, 8, 2, 4096, f16, ropePlain),
		normQKVRopeCase(tensor.Q5_K, 64, 8, 2, 512, f32, ropePlain),
		normQKVRopeCase(tensor.Q4_0, 64, 16, 4, 1024, f16, yarn),
	}
}

// multiRopeCases are GRAPH(add+norm+qkv+rope+kv) cases whose products the vectorised
// mat-vec computes, with the ROPEs and the stores in its dispatch (the fusion row
// mul_mat+view+mul_mat+view+mul_mat+rope+set_rows, ops/mul_mat_multi_rope.go): F16 at a 1B
// llama's shapes, with YaRN too and as a first layer (no ADD before the norm), Q8_0 and
// BF16 at an 8B's heads with an F32 cache, and Q6_K (which the integer row leaves out), in
// llama's order (ROPE Q right after Q's RESHAPE).
func multiRopeCases() []*Case {
	yarn := ropeAll
	yarn.ff = false
	return []*Case{
		qkvRopeCase(tensor.F16, 64, 32, 8, 2048, f16, ropePlain, false),
		qkvRopeCase(tensor.F16, 64, 16, 4, 1024, f16, yarn, false),
		qkvRopeCase(tensor.Q8_0, 128, 8, 2, 4096, f32, ropePlain, false),
		qkvRopeCase(tensor.BF16, 128, 8, 2, 1024, f16, ropePlain, false),
		qkvRopeCase(tensor.Q6_K, 64, 16, 4, 1024, f16, ropePlain, false),
		qkvRopeCase(tensor.F16, 64, 32, 8, 2048, f16, ropePlain, true),
	}
}

// ---------------------------------------------------------------------------------------
// GRAPH(add+norm+gate+down): normGateCase's graph followed by the down product of the
// SWIGLU's result, as the fusion row add+norm+mul+gate+down computes it: the gate form's
// workgroups count their rows on the device's counters and the one that completes a group
// quantizes it as the down product's column (ops/gate_tail.go). The SWIGLU's result is
// checked as well as the down product's.

// normGateDownCase builds the graph for k-element rows, m x k gate and up weights and
// k x m down weights, all of type ta.
func normGateDownCase(ta tensor.Type, m, k int64) *Case {
	return &Case{Name: fmt.Sprintf("GRAPH(add+rms_norm*w+ffn_swiglu+ffn_down,type=%s,m=%d,k=%d)", ta, m, k),
		Op: "GRAPH", Types: ta.String(), MaxNMSE: MulMatMaxNMSE,
		Build: func(b *Builder) ggml.Tensor {
			l, ctx := b.L, b.Ctx
			attn, inp := b.New("attn_out", f32, k, 1), b.New("inpSA", f32, k, 1)
			w := b.New("norm_w", f32, k)
			b.Init(w, Uniform(0.5, 1.5))
			gate, up, down := b.New("w_gate", ta, k, m), b.New("w_up", ta, k, m), b.New("w_down", ta, m, k)
			x := l.Mul(ctx, normOf(b, "rms_norm", l.Add(ctx, attn, inp)), w)
			glu := l.SwiGLUSplit(ctx, l.MulMat(ctx, gate, x), l.MulMat(ctx, up, x))
			l.SetOutput(glu)
			b.Check(glu)
			return l.MulMat(ctx, down, glu)
		}}
}

// normGateDownCases are the GRAPH(add+norm+gate+down) cases: Q4_0, Q4_1 and Q4_K at a 1B
// llama's widths (a group a workgroup, or two rows a workgroup for Q4_K), and rows of one
// group to many (every group's last workgroup a different one).
func normGateDownCases() []*Case {
	return []*Case{
		normGateDownCase(tensor.Q4_0, 8192, 2048), normGateDownCase(tensor.Q4_K, 8192, 2048),
		normGateDownCase(tensor.Q4_1, 192, 512), normGateDownCase(tensor.Q4_0, 64, 256),
		normGateDownCase(tensor.Q4_K, 512, 1024), normGateDownCase(tensor.Q4_0, 1088, 4096),
	}
}
