// Package wgsl holds the WGSL kernels (embedded), the small preprocessor that specialises
// them per operand type and variant, the generator that turns a Go parameter struct into
// the kernel's uniform struct, and the pipeline cache.
//
// A kernel file is WGSL with four additions:
//   - `#if NAME`, `#ifdef NAME`, `#else`, `#endif` select lines by the spec's defines (a
//     define is true unless it is absent, "" or "0"; NAME may hold {{}} substitutions);
//   - `#include NAME` inserts kernels/NAME.wgsl (common.wgsl, the shared helpers, is
//     included in every kernel; elementwise.wgsl is the entry point of element-wise ones);
//   - `{{NAME}}` is replaced by the define's value, innermost first (`{{A{{I}}}}`);
//   - `#for NAME N` ... `#endfor` repeats its lines N times (N a number, after {{}}
//     substitution) with {{NAME}} = 0 .. N-1: unrolled code whose indices the compiler
//     sees as constants; a #for may hold another;
//   - the uniform struct `p` and the operand bindings with their accessors are generated
//     and prepended: for an operand `src0` the kernel calls `src0_get(i)` (element i as
//     f32, relative to the operand's first element), `src0_geti(i)` for integer operands,
//     and `dst_set(i, v)` for written operands. These accessors are the one place that
//     knows each storage format.
package wgsl

import (
	"embed"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

//go:embed kernels/*.wgsl
var kernels embed.FS

// Operand is one storage binding of a kernel, in binding order (bindings 1..n).
type Operand struct {
	Name string // WGSL identifier, e.g. "src0", "dst"
	Type Format // storage format of the data
	// Written operands may be stored to by the kernel.
	Written bool
	// Vec operands are read eight elements at a time with NAME_get8(i) (i and the
	// operand's first element multiples of 8 for F16, of 4 for F32), through 16-byte loads;
	// I32 ones four at a time with NAME_get4i(i).
	// Quantized operands are Vec (i a multiple of 8) when read; a Written quantized
	// operand (a format of quantWriters) is written a block at a time with
	// NAME_set_block(i, x). A Written F16 Vec operand is stored eight elements at a time
	// with NAME_set8(i, v) (vec_write.go).
	Vec bool
	// Vec16 quantized operands are read sixteen bytes at a time as words, NAME_v16(v)
	// returning vector v of the binding (NAME_off in bytes, a multiple of 16), by kernels
	// that take a block's fields from those words with the format's shared routines
	// (common.wgsl) instead of its accessors.
	Vec16 bool
	// ReadOnly operands are declared var<storage, read> (bound read-only), which lets the
	// GPU's compiler know that the kernel never writes them. Only an operand that is not
	// Written can be, and only where its buffer is bound by no written operand of the same
	// dispatch (WebGPU forbids the two uses of one buffer in a dispatch): the caller, who
	// knows the buffers, sets it.
	ReadOnly bool
	// Overlaps operands may lie partly over other operands of the dispatch: the kernel is
	// written for it (its lowering checked that it orders the accesses). It changes no
	// source; the GPU layer otherwise rejects such bindings.
	Overlaps bool
}

// Spec fully determines a pipeline: kernel file, variant defines, operands, params type.
type Spec struct {
	Kernel   string            // file name under kernels/, without ".wgsl"
	Defines  map[string]string // variant selection
	Operands []Operand
	// Params is the parameter struct type (may be nil): uint32, int32 and float32 fields
	// and [4] arrays of them (see ParamsDecl).
	Params reflect.Type
	// Workgroup is the workgroup size, available to the kernel as {{WG}}.
	Workgroup int
	// Tables binds the lookup tables of the operands' formats (TableWords) after the
	// operands, at binding len(Operands) + 1: the whole workgroup copies them into its
	// workgroup memory (see formatsInit). Without it invocation 0 stores them from
	// literals. Only a spec whose operands have tables (HasTables) takes it.
	Tables bool
	// Counters binds a buffer of atomic u32 counters, zero between dispatches, as
	// `counters` after the operands and the tables: the kernel's workgroups count
	// themselves on them, and whichever counts a counter to its end sets it back to zero.
	// CounterSlots is how many the buffer holds.
	Counters bool
	// Constants, where set, is one dispatch's encoded parameter slot (EncodeParams), which
	// the module declares as the constant p instead of the uniform binding: a pipeline for
	// that dispatch alone, whose kernel reads no parameters from memory and is compiled with
	// its shape known. A slot with a non-finite float (no WGSL literal) keeps the binding.
	Constants []byte
}

// Bindings returns the storage bindings of the spec's pipeline: its operands, and the
// tables' buffer with Tables.
func (s *Spec) Bindings() int {
	n := len(s.Operands)
	if s.Tables {
		n++
	}
	if s.Counters {
		n++
	}
	return n
}

// CounterSlots is how many counters the buffer a Spec.Counters kernel binds holds.
const CounterSlots = 16384

// Key returns a string that identifies the pipeline the spec produces.
func (s *Spec) Key() string {
	var b strings.Builder
	b.WriteString(s.Kernel)
	keys := make([]string, 0, len(s.Defines))
	for k := range s.Defines {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, ";%s=%s", k, s.Defines[k])
	}
	for _, o := range s.Operands {
		fmt.Fprintf(&b, "|%s:%d:%v:%v", o.Name, o.Type, o.Written, o.Vec)
		if o.Vec16 {
			b.WriteString(":v16")
		}
		if o.ReadOnly {
			b.WriteString(":ro")
		}
	}
	if s.Params != nil {
		fmt.Fprintf(&b, "|%s", s.Params.String())
	}
	fmt.Fprintf(&b, "|wg%d", s.Workgroup)
	if s.Tables {
		b.WriteString("|tables")
	}
	if s.Counters {
		b.WriteString("|counters")
	}
	if s.Constants != nil {
		fmt.Fprintf(&b, "|constants%x", s.Constants)
	}
	return b.String()
}

// ReadOnly returns the bindings declared read-only, bit i for operand i (binding i+1), and
// with Tables the tables' binding.
func (s *Spec) ReadOnly() uint32 {
	var m uint32
	for i, o := range s.Operands {
		if o.ReadOnly {
			m |= 1 << i
		}
	}
	if s.Tables {
		m |= 1 << len(s.Operands)
	}
	return m
}

// Source generates the complete WGSL module of a spec.
func Source(s *Spec) (string, error) {
	body, err := kernels.ReadFile("kernels/" + s.Kernel + ".wgsl")
	if err != nil {
		return "", fmt.Errorf("wgsl: unknown kernel %q", s.Kernel)
	}
	defs := map[string]string{"WG": fmt.Sprint(s.Workgroup)}
	for k, v := range s.Defines {
		defs[k] = v
	}
	for _, o := range s.Operands {
		defs[strings.ToUpper(o.Name)+"_TYPE"] = o.Type.String()
		if u := o.Type.UnitElems(); u > 0 {
			defs[strings.ToUpper(o.Name)+"_UNIT_BLOCKS"] = fmt.Sprint(u / o.Type.BlockElems()) // for #for over a unit
			defs[strings.ToUpper(o.Name)+"_PAIR"] = fmt.Sprint(o.Type.PairDistance())
		}
	}
	for _, o := range s.Operands {
		if o.ReadOnly && o.Written {
			return "", fmt.Errorf("wgsl: %s: operand %s is both written and read-only", s.Kernel, o.Name)
		}
	}
	var out strings.Builder
	decl, err := ParamsDecl(s.Params, s.Operands)
	if err == nil && s.Constants != nil {
		if c, cerr := paramsConst(s.Params, s.Operands, s.Constants); cerr == nil {
			decl = c // else the uniform (non-finite values have no literal)
		}
	}
	if err != nil {
		return "", err
	}
	out.WriteString(decl)
	if err := preprocess(&out, "#include common", defs); err != nil {
		return "", err
	}
	tables := map[string]bool{}
	var fills, copies []string
	for _, o := range s.Operands {
		lines := formatTables[o.Type]
		if truthy(defs, "LEVELS") {
			lines += levelTables[o.Type]
		}
		for _, t := range strings.SplitAfter(lines, "\n") {
			if t != "" && !tables[t] {
				tables[t] = true
				out.WriteString(t)
				if name, _, ok := workgroupDecl(t); ok {
					if at, ok := tableAt[name]; ok && s.Tables {
						copies = append(copies, fmt.Sprintf("for (var i = lid; i < %du; i = i + %du) { %s[i] = tables[%du + i]; }",
							at.n, s.Workgroup, name, at.at))
					} else {
						fills = append(fills, name+"_init();")
					}
				}
			}
		}
	}
	if s.Tables {
		if len(copies) == 0 {
			return "", fmt.Errorf("wgsl: %s binds the tables but its operands have none", s.Kernel)
		}
		fmt.Fprintf(&out, "@group(0) @binding(%d) var<storage, read> tables: array<vec4<u32>>;\n", len(s.Operands)+1)
	}
	if s.Counters {
		at := len(s.Operands) + 1
		if s.Tables {
			at++
		}
		fmt.Fprintf(&out, "@group(0) @binding(%d) var<storage, read_write> counters: array<atomic<u32>, %d>;\n", at, CounterSlots)
	}
	out.WriteString(formatsInit(fills, copies))
	for i, o := range s.Operands {
		if o.Vec16 {
			if !o.Type.Quantized() || o.Written {
				return "", fmt.Errorf("wgsl: %s: operand %s: only read quantized operands are read as 16-byte words", s.Kernel, o.Name)
			}
			out.WriteString(storageDecl(o.Name, i+1, o.ReadOnly) + "array<vec4<u32>>;\n" +
				fmt.Sprintf("fn %[1]s_v16(v: u32) -> vec4<u32> { return %[1]s[v]; }\n", o.Name))
			continue
		}
		if o.Vec {
			a, err := o.Type.vecAccessors(o.Name, i+1, o.ReadOnly)
			if err != nil {
				return "", err
			}
			out.WriteString(a)
			if o.Written {
				w, err := o.Type.vecWriter(o.Name)
				if err != nil {
					return "", err
				}
				out.WriteString(w)
			}
			continue
		}
		if o.Written && o.Type.Writable() {
			out.WriteString(quantWriters[o.Type].writeAccessors(o.Name, i+1))
			continue
		}
		if o.Type.Quantized() {
			return "", fmt.Errorf("wgsl: %s: quantized operand %s is read eight elements at a time only (Vec)", s.Kernel, o.Name)
		}
		out.WriteString(o.Type.accessors(o.Name, i+1, o.Written, o.ReadOnly))
	}
	if err := preprocess(&out, string(body), defs); err != nil {
		return "", fmt.Errorf("wgsl: %s: %w", s.Kernel, err)
	}
	if len(fills)+len(copies) > 0 && strings.Count(out.String(), "formats_init(lid") < 2 {
		// the declaration alone: the tables would be read unfilled
		return "", fmt.Errorf("wgsl: %s reads a format with workgroup tables but never calls formats_init", s.Kernel)
	}
	return out.String(), nil
}

// formatsInit returns formats_init(lid), which kernels that read quantized operands call
// first, in uniform control flow: the tables bound (Spec.Tables) are copied by the whole
// workgroup (copies), invocation 0 stores the others from literals (fills), then the
// workgroup waits; without tables it does nothing. One invocation storing IQ2_S's 512
// entries for each workgroup cost its mat-vec nearly half its time (H100, 14336 x 4096 by
// one column: 120-129 µs with the tables stored, 69-72 with them left unfilled).
func formatsInit(fills, copies []string) string {
	if len(fills)+len(copies) == 0 {
		return "fn formats_init(lid: u32) {}\n"
	}
	var b strings.Builder
	b.WriteString("fn formats_init(lid: u32) {\n")
	for _, c := range copies {
		b.WriteString("  " + c + "\n")
	}
	if len(fills) > 0 {
		b.WriteString("  if (lid == 0u) { " + strings.Join(fills, " ") + " }\n")
	}
	b.WriteString("  workgroupBarrier();\n}\n")
	return b.String()
}

func truthy(defs map[string]string, name string) bool {
	v, ok := defs[name]
	return ok && v != "" && v != "0"
}

// preprocess applies #if/#ifdef/#else/#endif and {{NAME}} substitution.
func preprocess(out *strings.Builder, src string, defs map[string]string) error {
	type frame struct{ parentOn, on, seenElse bool }
	var stack []frame
	on := true
	lines := strings.Split(src, "\n")
	for n := 0; n < len(lines); n++ {
		line := lines[n]
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "#for "):
			end, err := forBlock(lines, n)
			if err != nil {
				return err
			}
			if on {
				if err := unroll(out, t, lines[n+1:end], defs); err != nil {
					return fmt.Errorf("line %d: %w", n+1, err)
				}
			}
			n = end
			continue
		case t == "#endfor":
			return fmt.Errorf("line %d: stray #endfor", n+1)
		case strings.HasPrefix(t, "#if ") || strings.HasPrefix(t, "#ifdef "):
			name, err := substitute(strings.TrimSpace(t[strings.IndexByte(t, ' '):]), defs)
			if err != nil && on {
				return fmt.Errorf("line %d: %w", n+1, err)
			}
			cond := truthy(defs, name)
			if strings.HasPrefix(t, "#ifdef ") {
				_, cond = defs[name]
			}
			stack = append(stack, frame{parentOn: on, on: cond})
			on = on && cond
			continue
		case t == "#else":
			if len(stack) == 0 || stack[len(stack)-1].seenElse {
				return fmt.Errorf("line %d: stray #else", n+1)
			}
			f := &stack[len(stack)-1]
			f.seenElse, f.on = true, !f.on
			on = f.parentOn && f.on
			continue
		case t == "#endif":
			if len(stack) == 0 {
				return fmt.Errorf("line %d: stray #endif", n+1)
			}
			on = stack[len(stack)-1].parentOn
			stack = stack[:len(stack)-1]
			continue
		case strings.HasPrefix(t, "#include "):
			if !on {
				continue
			}
			name := strings.TrimSpace(t[len("#include "):])
			inc, err := kernels.ReadFile("kernels/" + name + ".wgsl")
			if err != nil {
				return fmt.Errorf("line %d: no kernel file %q to include", n+1, name)
			}
			if err := preprocess(out, string(inc), defs); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		case strings.HasPrefix(t, "#"):
			return fmt.Errorf("line %d: unknown directive %q", n+1, t)
		}
		if !on {
			continue
		}
		line, err := substitute(line, defs)
		if err != nil {
			return fmt.Errorf("line %d: %w", n+1, err)
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if len(stack) != 0 {
		return fmt.Errorf("missing #endif")
	}
	return nil
}

// substitute replaces every {{NAME}} of line by the define's value, innermost first, so
// that a name may be built from others: {{A{{I}}}} is A0's value where I is 0.
func substitute(line string, defs map[string]string) (string, error) {
	for strings.Contains(line, "{{") {
		first := strings.Index(line, "{{")
		j := strings.Index(line[first:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unterminated {{")
		}
		j += first
		i := strings.LastIndex(line[:j], "{{") // the innermost: at first or after
		name := line[i+2 : j]
		v, ok := defs[name]
		if !ok {
			return "", fmt.Errorf("undefined {{%s}}", name)
		}
		line = line[:i] + v + line[j+2:]
	}
	return line, nil
}

// forBlock returns the line index of the #endfor that closes the #for at line start (a
// #for inside it is closed by its own #endfor first).
func forBlock(lines []string, start int) (int, error) {
	depth := 0
	for i := start + 1; i < len(lines); i++ {
		switch t := strings.TrimSpace(lines[i]); {
		case t == "#endfor" && depth == 0:
			return i, nil
		case t == "#endfor":
			depth--
		case strings.HasPrefix(t, "#for "):
			depth++
		}
	}
	return 0, fmt.Errorf("line %d: #for without #endfor", start+1)
}

// unroll preprocesses body once per value of the #for directive's variable.
func unroll(out *strings.Builder, directive string, body []string, defs map[string]string) error {
	var name, count string
	if _, err := fmt.Sscan(strings.TrimPrefix(directive, "#for "), &name, &count); err != nil {
		return fmt.Errorf("bad %q: %w", directive, err)
	}
	var c strings.Builder
	if err := preprocess(&c, count, defs); err != nil {
		return err
	}
	var n int
	if _, err := fmt.Sscan(c.String(), &n); err != nil || n < 0 || n > 1024 {
		return fmt.Errorf("bad repeat count %q in %q", strings.TrimSpace(c.String()), directive)
	}
	inner := make(map[string]string, len(defs)+1)
	for k, v := range defs {
		inner[k] = v
	}
	src := strings.Join(body, "\n")
	for i := 0; i < n; i++ {
		inner[name] = fmt.Sprint(i)
		if err := preprocess(out, src, inner); err != nil {
			return err
		}
	}
	return nil
}
