package ops

import (
	"math/rand"
	"testing"
)

// swarDot16 computes the dot product of 16 weights q (0..15) and 16 activations x
// (-127..127) the way mul_mat_vec_q4.wgsl does: pairs (q[2i], q[2i+1]) in the 16-bit
// lanes of one word, the partners packed as x[2i+1] + x[2i] * 65536, 8 wrapping i32
// multiply-adds, then the upper half less the lower half's borrow.
func swarDot16(q [16]int32, x [16]int32) int32 {
	var acc int32
	for i := 0; i < 16; i += 2 {
		w := q[i] + q[i+1]<<16
		v := x[i+1] + x[i]*65536
		acc += w * v // wraps, as WGSL's i32 arithmetic
	}
	lo := (acc << 16) >> 16
	return (acc - lo) >> 16
}

func TestSwarDotExact(t *testing.T) {
	check := func(name string, q, x [16]int32) {
		t.Helper()
		var want int32
		for i := range q {
			want += q[i] * x[i]
		}
		if got := swarDot16(q, x); got != want {
			t.Fatalf("%s: q %v x %v: SWAR dot %d, want %d", name, q, x, got, want)
		}
	}
	var q, x [16]int32
	// extremes: all 15 against +-127 (the largest sums of either sign), alternating
	// signs, zero weights, and every lane at its bound one at a time
	for _, xv := range []int32{127, -127, 0, 1, -1} {
		for i := range q {
			q[i], x[i] = 15, xv
		}
		check("constant", q, x)
	}
	for i := range q {
		q[i], x[i] = 15, 127*(1-2*int32(i%2))
	}
	check("alternating", q, x)
	for i := range q {
		q[i], x[i] = 15, 127*(1-2*int32((i/2)%2))
	}
	check("alternating pairs", q, x)
	for i := range q {
		q[i], x[i] = 0, -127
	}
	check("zero weights", q, x)
	for l := 0; l < 16; l++ {
		for i := range q {
			q[i], x[i] = 0, 0
		}
		q[l], x[l] = 15, -127
		check("one lane", q, x)
		x[l^1] = 127
		check("one lane and its partner", q, x)
	}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 200000; n++ {
		for i := range q {
			q[i] = r.Int31n(16)
			if n%2 == 0 {
				x[i] = r.Int31n(255) - 127
			} else {
				x[i] = 127 * (2*r.Int31n(2) - 1) // only the extremes
			}
		}
		check("random", q, x)
	}
}

// TestSwarShape checks the integer mat-vec's choice of shape and its workgroup storage
// bound: a column that fits lavapipe's 32 KiB takes the kernel, one beyond does not.
func TestSwarShape(t *testing.T) {
	l := &Limits{MaxWorkgroupStorage: 32768, MaxGroupSize: 1024}
	rows, wg := swarShape(8, l)
	if rows != swarRows || wg != 32 {
		t.Fatalf("short rows: %d x %d", rows, wg)
	}
	rows, wg = swarShape(1024, l)
	if rows != swarRows || wg != swarWG {
		t.Fatalf("long rows: %d x %d", rows, wg)
	}
	if s := swarStorage(12544, rows, wg); s > 32768 {
		t.Fatalf("K = 12544 needs %d bytes", s)
	}
	if s := swarStorage(12800, rows, wg); s <= 32768 {
		t.Fatalf("K = 12800 fits in %d bytes", s)
	}
	l.SwarRows, l.SwarWG = 4, 100 // a workgroup size that is no power of two is ignored
	rows, wg = swarShape(1024, l)
	if rows != 4 || wg != swarWG {
		t.Fatalf("overrides: %d x %d", rows, wg)
	}
}
