package wgsl

import (
	"strconv"
	"strings"
)

// WorkgroupTableBytes returns the workgroup memory, in bytes, that the lookup tables of
// format f take in a module (formatTables: `var<workgroup> NAME: array<T, N>;` lines with
// T a 32-bit scalar or vector of them), so that a lowering can fit its own workgroup
// arrays beside them. It returns 0 for the formats without tables.
func WorkgroupTableBytes(f Format) int {
	total := 0
	for _, line := range strings.Split(formatTables[f], "\n") {
		if _, decl, ok := workgroupDecl(line); ok {
			total += arrayBytes(decl)
		}
	}
	return total
}

// arrayBytes is the size of the array type in a declaration `NAME: array<T, N>;`.
func arrayBytes(decl string) int {
	i := strings.Index(decl, "array<")
	j := strings.LastIndex(decl, ",")
	k := strings.LastIndex(decl, ">")
	if i < 0 || j < i || k < j {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(decl[j+1 : k]))
	if err != nil {
		return 0
	}
	elem := decl[i+len("array<") : j]
	size := 4
	switch {
	case strings.HasPrefix(elem, "vec2<"):
		size = 8
	case strings.HasPrefix(elem, "vec3<"), strings.HasPrefix(elem, "vec4<"):
		size = 16
	}
	return n * size
}
