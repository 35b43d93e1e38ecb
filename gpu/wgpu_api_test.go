package gpu

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"unicode"
)

// TestAPIHeader proves that wgpu_api.h, our hand-written subset of the wgpu-native C API,
// matches the headers of the module whose library is linked (webgpu.h and wgpu.h of
// github.com/cogentcore/webgpu), with the C compiler as the judge:
//
//   - a file that includes the real headers, then repeats every function prototype of ours
//     verbatim (a conflicting redeclaration is a compile error) and declares objects of our
//     callback, handle and scalar types against the real ones, must compile;
//   - two programs print sizeof/alignof of every struct of ours, offsetof and size of every
//     field, and the value of every enum constant, one built on our header and one on the
//     real ones: their outputs must be identical.
//
// Two more compilations make sure the method catches a wrong prototype and a wrong layout.
func TestAPIHeader(t *testing.T) {
	cc := cCompiler(t)
	lib := webgpuHeaderDir(t)
	src, err := os.ReadFile("wgpu_api.h")
	if err != nil {
		t.Fatal(err)
	}
	h := parseAPIHeader(string(src))
	t.Logf("wgpu_api.h: %d functions, %d callback types, %d handle types, %d scalar types, %d structs (%d fields), %d enum constants",
		len(h.protos), len(h.callbacks), len(h.handles), len(h.scalars), len(h.structs), h.fields(), len(h.enums))
	if len(h.protos) < 40 || len(h.structs) < 20 || len(h.enums) < 20 || len(h.callbacks) < 4 || len(h.handles) < 10 {
		t.Fatalf("the header parser found too little; has wgpu_api.h changed shape?")
	}
	dir := t.TempDir()

	t.Run("prototypes", func(t *testing.T) {
		if out, err := compileC(cc, dir, "protos.c", h.prototypeCheck(nil), lib, true); err != nil {
			t.Fatalf("our declarations conflict with the module's headers:\n%s", out)
		}
	})
	t.Run("catches-a-wrong-prototype", func(t *testing.T) {
		wrong := func(p string) string {
			return strings.Replace(p, "uint64_t offset, uint64_t size)", "uint32_t offset, uint64_t size)", 1)
		}
		check := h.prototypeCheck(wrong)
		if !strings.Contains(check, "uint32_t offset, uint64_t size)") {
			t.Fatal("no prototype to spoil")
		}
		out, err := compileC(cc, dir, "wrong.c", check, lib, true)
		if err == nil {
			t.Fatal("a conflicting prototype compiled")
		}
		if !strings.Contains(out, "wgpuCommandEncoderClearBuffer") {
			t.Fatalf("the compiler failed, but not over the spoiled prototype:\n%s", out)
		}
	})

	layout := h.layoutProgram()
	ours, err := runC(cc, dir, "ours", "#include \"wgpu_api.h\"\n"+layout, ".")
	if err != nil {
		t.Fatalf("layout program on our header: %v\n%s", err, ours)
	}
	t.Run("layouts-and-values", func(t *testing.T) {
		real, err := runC(cc, dir, "real", realPrelude+layout, lib)
		if err != nil {
			t.Fatalf("layout program on the module's headers: %v\n%s", err, real)
		}
		if diff := diffLines(ours, real); diff != "" {
			t.Fatalf("our header disagrees with the module's (ours / real):\n%s", diff)
		}
	})
	t.Run("catches-a-wrong-layout", func(t *testing.T) {
		// wgpu_api.h with two fields of WGPUBindGroupEntry swapped.
		spoiled := strings.Replace(string(src), "    uint64_t offset;\n    uint64_t size;\n    void *sampler;",
			"    uint64_t size;\n    void *sampler;\n    uint64_t offset;", 1)
		if spoiled == string(src) {
			t.Fatal("no layout to spoil")
		}
		if err := os.WriteFile(filepath.Join(dir, "spoiled_api.h"), []byte(spoiled), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := runC(cc, dir, "spoiled", "#include \"spoiled_api.h\"\n"+layout, dir)
		if err != nil {
			t.Fatalf("%v\n%s", err, got)
		}
		if diffLines(got, ours) == "" {
			t.Fatal("a wrong layout went unnoticed")
		}
	})
}

// realPrelude includes the module's headers; WGPUEnum is our own name for the 32-bit
// enums that the real header gives each a type.
const realPrelude = "#include \"webgpu.h\"\n#include \"wgpu.h\"\ntypedef uint32_t WGPUEnum;\n"

// apiHeader is what the test reads from wgpu_api.h.
type apiHeader struct {
	protos    []string // function prototypes, verbatim
	names     []string // their function names
	callbacks []string // callback typedefs, verbatim
	cbNames   []string
	handles   [][2]string // handle typedef: struct tag, type name
	scalars   [][2]string // scalar typedef: C type, name
	structs   []apiStruct
	enums     []string
}

type apiStruct struct {
	name   string
	fields []string
}

func (h *apiHeader) fields() int {
	n := 0
	for _, s := range h.structs {
		n += len(s.fields)
	}
	return n
}

var (
	reProto    = regexp.MustCompile(`^[A-Za-z_][\w\s\*]*?\b(wgpu[A-Z]\w*)\s*\(.*\)\s*;$`)
	reCallback = regexp.MustCompile(`^typedef\s+.*\(\s*\*\s*(WGPU\w+)\s*\)\s*\(.*\)\s*;$`)
	reHandle   = regexp.MustCompile(`^typedef\s+struct\s+(\w+)\s*\*\s*(WGPU\w+)\s*;$`)
	reScalar   = regexp.MustCompile(`^typedef\s+(u?int\d+_t)\s+(WGPU\w+)\s*;$`)
	reStruct   = regexp.MustCompile(`^typedef\s+struct\s+(WGPU\w+)\s*\{$`)
	reStructIn = regexp.MustCompile(`^\}\s*(WGPU\w+)\s*;$`)
	reField    = regexp.MustCompile(`([A-Za-z_]\w*)\s*;$`)
	reEnum     = regexp.MustCompile(`^(WGPU\w+)\s*=\s*[^,]+,?$`)
)

// parseAPIHeader reads the declarations of wgpu_api.h (one per line, as it is written).
func parseAPIHeader(src string) *apiHeader {
	h := &apiHeader{}
	var cur *apiStruct
	inEnum := false
	sc := bufio.NewScanner(strings.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case cur != nil:
			if m := reStructIn.FindStringSubmatch(line); m != nil {
				h.structs = append(h.structs, *cur)
				cur = nil
			} else if m := reField.FindStringSubmatch(line); m != nil {
				cur.fields = append(cur.fields, m[1])
			}
		case inEnum:
			if line == "};" {
				inEnum = false
			} else if m := reEnum.FindStringSubmatch(line); m != nil {
				h.enums = append(h.enums, m[1])
			}
		case line == "enum {":
			inEnum = true
		case reStruct.MatchString(line):
			cur = &apiStruct{name: reStruct.FindStringSubmatch(line)[1]}
		case reCallback.MatchString(line):
			h.callbacks = append(h.callbacks, line)
			h.cbNames = append(h.cbNames, reCallback.FindStringSubmatch(line)[1])
		case reHandle.MatchString(line):
			m := reHandle.FindStringSubmatch(line)
			h.handles = append(h.handles, [2]string{m[1], m[2]})
		case reScalar.MatchString(line):
			m := reScalar.FindStringSubmatch(line)
			h.scalars = append(h.scalars, [2]string{m[1], m[2]})
		case reProto.MatchString(line):
			h.protos = append(h.protos, line)
			h.names = append(h.names, reProto.FindStringSubmatch(line)[1])
		}
	}
	return h
}

// prototypeCheck returns the C file that must compile when our declarations agree with
// the real headers; edit, when not nil, rewrites each of our prototypes first.
func (h *apiHeader) prototypeCheck(edit func(string) string) string {
	var b strings.Builder
	b.WriteString(realPrelude)
	b.WriteString("\n// Every function we declare exists in the real headers (taking the address of an\n// undeclared name is an error).\nvoid gw_check_names(void) {\n")
	for _, n := range h.names {
		fmt.Fprintf(&b, "    (void)&%s;\n", n)
	}
	b.WriteString("}\n\n// Our prototypes, verbatim: a conflicting redeclaration is an error.\n")
	for _, p := range h.protos {
		if edit != nil {
			p = edit(p)
		}
		b.WriteString(p + "\n")
	}
	b.WriteString("\n// Our callback types are the real ones.\n")
	for i, cb := range h.callbacks {
		name := h.cbNames[i]
		ours := strings.Replace(cb, name, "gw_ours_"+name, 1)
		fmt.Fprintf(&b, "%s\nextern %s gw_cb_%d;\nextern gw_ours_%s gw_cb_%d;\n", ours, name, i, name, i)
	}
	b.WriteString("\n// Our handle and scalar types are the real ones.\n")
	for i, hd := range h.handles {
		fmt.Fprintf(&b, "extern %s gw_h_%d;\nextern struct %s *gw_h_%d;\n", hd[1], i, hd[0], i)
	}
	for i, s := range h.scalars {
		if s[1] == "WGPUEnum" {
			continue // ours alone (see realPrelude)
		}
		fmt.Fprintf(&b, "extern %s gw_s_%d;\nextern %s gw_s_%d;\n", s[1], i, s[0], i)
	}
	return b.String()
}

// layoutProgram returns the body of the program that prints every layout fact and value
// of our header (to follow the inclusion of one header or the other).
func (h *apiHeader) layoutProgram() string {
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include <stddef.h>\nint main(void) {\n")
	for _, s := range h.scalars {
		fmt.Fprintf(&b, "    printf(\"scalar %[1]s size %%zu\\n\", sizeof(%[1]s));\n", s[1])
	}
	for _, s := range h.structs {
		fmt.Fprintf(&b, "    printf(\"struct %[1]s size %%zu align %%zu\\n\", sizeof(%[1]s), _Alignof(%[1]s));\n", s.name)
		for _, f := range s.fields {
			fmt.Fprintf(&b, "    printf(\"field %[1]s.%[2]s offset %%zu size %%zu\\n\", offsetof(%[1]s, %[2]s), sizeof(((%[1]s *)0)->%[2]s));\n", s.name, f)
		}
	}
	for _, e := range h.enums {
		fmt.Fprintf(&b, "    printf(\"enum %[1]s %%lld\\n\", (long long)(%[1]s));\n", e)
	}
	b.WriteString("    return 0;\n}\n")
	return b.String()
}

// compileC compiles src (written to dir/name) with the include directory inc, checking
// syntax only or building an executable next to it; it returns the compiler's output.
func compileC(cc, dir, name, src, inc string, syntaxOnly bool) (string, error) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		return "", err
	}
	args := []string{"-std=c11", "-Werror=implicit-function-declaration", "-I", inc, "-I", "."}
	if syntaxOnly {
		args = append(args, "-fsyntax-only", path)
	} else {
		args = append(args, "-o", strings.TrimSuffix(path, ".c"), path)
	}
	out, err := exec.Command(cc, args...).CombinedOutput()
	return string(out), err
}

// runC builds src as dir/name with the include directory inc, runs it and returns its
// output.
func runC(cc, dir, name, src, inc string) (string, error) {
	if out, err := compileC(cc, dir, name+".c", src, inc, false); err != nil {
		return out, err
	}
	out, err := exec.Command(filepath.Join(dir, name)).CombinedOutput()
	return string(out), err
}

// diffLines lists the lines where a and b differ, "" when they are equal.
func diffLines(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			fmt.Fprintf(&out, "  %s\n  %s\n", x, y)
		}
	}
	return out.String()
}

// cCompiler returns the C compiler cgo uses.
func cCompiler(t *testing.T) string {
	cc := os.Getenv("CC")
	if cc == "" {
		if out, err := exec.Command("go", "env", "CC").Output(); err == nil {
			cc = strings.TrimSpace(string(out))
		}
	}
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Fatalf("no C compiler (%s): %v", cc, err)
	}
	return cc
}

// webgpuModule is the module whose headers and static library this package uses.
const webgpuModule = "github.com/cogentcore/webgpu"

// webgpuHeaderDir returns the directory of the module's webgpu.h and wgpu.h: the module's
// directory from go list, else from the module cache and the version in go.mod (or in the
// build information, where a binary has it).
func webgpuHeaderDir(t *testing.T) string {
	var tried []string
	try := func(moduleDir string) string {
		if moduleDir == "" {
			return ""
		}
		dir := filepath.Join(moduleDir, "wgpu", "lib")
		tried = append(tried, dir)
		if _, err := os.Stat(filepath.Join(dir, "webgpu.h")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "wgpu.h")); err == nil {
				return dir
			}
		}
		return ""
	}
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", webgpuModule).Output(); err == nil {
		if dir := try(strings.TrimSpace(string(out))); dir != "" {
			return dir
		}
	}
	if version := webgpuVersion(); version != "" {
		for _, cache := range moduleCaches() {
			if dir := try(filepath.Join(cache, escapeModulePath(webgpuModule)+"@"+version)); dir != "" {
				return dir
			}
		}
	}
	t.Fatalf("cannot find the headers of %s (tried %v)", webgpuModule, tried)
	return ""
}

// webgpuVersion returns the version of webgpuModule this build uses: from the build
// information when the binary carries its dependencies, else from the go.mod above the
// working directory.
func webgpuVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == webgpuModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require"))
				if len(f) >= 2 && f[0] == webgpuModule {
					return f[1]
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// moduleCaches lists where the module cache may be.
func moduleCaches() []string {
	var out []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		out = append(out, c)
	}
	if b, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		out = append(out, strings.TrimSpace(string(b)))
	}
	if p := os.Getenv("GOPATH"); p != "" {
		out = append(out, filepath.Join(filepath.SplitList(p)[0], "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, "go", "pkg", "mod"))
	}
	return out
}

// escapeModulePath applies the module cache's case encoding (an upper-case letter becomes
// '!' and the letter in lower case).
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
