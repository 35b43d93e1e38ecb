package wgsl

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// tableSpan is where one workgroup table of vec4<u32> entries lies in TableWords: n
// entries from vec4 at.
type tableSpan struct{ at, n int }

// tableWords and tableAt hold the tables of formatTables declared as arrays of vec4<u32>
// (the IQ grids), read back from their generated NAME_init() literals: the words of them
// all, one after another, and where each lies; gridFormats the formats that read one of
// them. A table whose literals do not match its declaration is left out (its kernels keep
// storing it from the literals); TestTableWordsHoldEveryGrid checks that none is.
var tableWords, tableAt, gridFormats = gatherTables()

var hexWord = regexp.MustCompile(`0x([0-9a-f]+)u`)

// workgroupDecl reads a line of formatTables that declares a workgroup table: the table's
// name and the declaration after `var<workgroup> ` (`NAME: array<T, N>;`); ok is false
// for any other line.
func workgroupDecl(line string) (name, decl string, ok bool) {
	decl, ok = strings.CutPrefix(line, "var<workgroup> ")
	if !ok {
		return "", "", false
	}
	name, _, ok = strings.Cut(decl, ":")
	return name, decl, ok
}

func gatherTables() ([]uint32, map[string]tableSpan, map[Format]bool) {
	var words []uint32
	at := map[string]tableSpan{}
	grids := map[Format]bool{}
	formats := make([]Format, 0, len(formatTables))
	for f := range formatTables {
		formats = append(formats, f)
	}
	sort.Slice(formats, func(i, j int) bool { return formats[i] < formats[j] })
	for _, f := range formats {
		lines := strings.Split(formatTables[f], "\n")
		for _, line := range lines {
			name, decl, ok := workgroupDecl(line)
			if !ok || !strings.Contains(decl, ": array<vec4<u32>,") {
				continue
			}
			if _, ok := at[name]; ok {
				grids[f] = true
				continue
			}
			n := arrayBytes(decl) / 16
			var ws []uint32
			for _, l := range lines {
				if !strings.HasPrefix(l, "fn "+name+"_init() {") {
					continue
				}
				for _, m := range hexWord.FindAllStringSubmatch(l, -1) {
					w, err := strconv.ParseUint(m[1], 16, 32)
					if err != nil {
						ws = nil
						break
					}
					ws = append(ws, uint32(w))
				}
			}
			if n == 0 || len(ws) != 4*n {
				continue
			}
			at[name] = tableSpan{at: len(words) / 4, n: n}
			words = append(words, ws...)
			grids[f] = true
		}
	}
	return words, at, grids
}

// TableWords returns the words of the lookup tables a spec with Tables binds, in the
// order the generated kernels read them (a new slice: the backend uploads it once per
// device).
func TableWords() []uint32 { return append([]uint32(nil), tableWords...) }

// HasTables reports whether an operand of s has lookup tables that a spec with Tables
// reads from the tables' binding.
func HasTables(s *Spec) bool {
	for _, o := range s.Operands {
		if gridFormats[o.Type] {
			return true
		}
	}
	return false
}
