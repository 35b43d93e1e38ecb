package ops

import "fmt"

// The recurrent kernels (GATED_DELTA_NET, SSM_SCAN, the WKV forms; row_lanes.wgsl) hold
// a state's rows lanes invocations a row in workgroups of rowLanesWG, each invocation at
// most rowLanesMaxElems of its row's elements in registers: rows of up to rowLanesMaxLen.
const (
	rowLanesWG       = 128
	rowLanesMax      = 32
	rowLanesMaxElems = 8
	rowLanesMaxLen   = rowLanesMax * rowLanesMaxElems
)

// rowLanes returns the lanes of a row and the elements each holds for rows of size s
// (about four elements a lane).
func rowLanes(s int64) (lanes, elems int) {
	lanes = 1
	for lanes < rowLanesMax && int64(lanes)*4 < s {
		lanes *= 2
	}
	return lanes, int((s + int64(lanes) - 1) / int64(lanes))
}

// rowLanesPlan returns, for count rows of n elements held as rowLanes says, the blocks of
// rows that take a workgroup each and the kernel's LANES and ELEMS.
func rowLanesPlan(n, count int64) (blocks int64, defs map[string]string) {
	lanes, elems := rowLanes(n)
	rows := int64(rowLanesWG / lanes)
	return (count + rows - 1) / rows, map[string]string{"LANES": fmt.Sprint(lanes), "ELEMS": fmt.Sprint(elems)}
}

// perElement returns 1 where an operand of ne0 values a row holds one per element of
// rows of n (rather than one for the row).
func perElement(ne0, n int64) uint32 {
	if ne0 == n && n > 1 {
		return 1
	}
	return 0
}
