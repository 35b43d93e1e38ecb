package tensor

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// enums.go is what the generator makes from the pinned ggml.h (scripts/setup.sh fetches
// it): regenerate with `go generate ./tensor` when the header changes.
func TestEnumsAreGenerated(t *testing.T) {
	header := filepath.Join("..", ".cache", "ggml", "include", "ggml.h")
	if _, err := os.Stat(header); err != nil {
		t.Fatalf("no ggml.h at %s: run scripts/setup.sh", header)
	}
	out := filepath.Join(t.TempDir(), "enums.go")
	cmd := exec.Command("go", "run", "./internal/genenums", "-header", header, "-out", out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	want, err := os.ReadFile(out)
	require.NoError(t, err)
	got, err := os.ReadFile("enums.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "tensor/enums.go is stale: run go generate ./tensor")
}

func TestTensorGeometry(t *testing.T) {
	x := &Tensor{Type: F16, Ne: [4]int64{6, 3, 2, 1}, Nb: [4]uint64{2, 12, 36, 72}}
	require.True(t, x.Contiguous())
	require.Equal(t, uint64(72), x.Extent())
	require.Equal(t, int64(36), x.Elems())
	p := *x
	p.Ne, p.Nb = [4]int64{3, 6, 2, 1}, [4]uint64{12, 2, 36, 72} // transposed view
	require.False(t, p.Contiguous())
	require.Equal(t, uint64(72), p.Extent())
	e := &Tensor{Type: F32, Ne: [4]int64{4, 0, 1, 1}, Nb: [4]uint64{4, 16, 16, 16}}
	require.True(t, e.Empty())
	require.Zero(t, e.Extent())
	q := &Tensor{Type: Q4_0, Ne: [4]int64{64, 2, 1, 1}, Nb: [4]uint64{18, 36, 72, 72}}
	require.True(t, q.Type.Quantized())
	require.Equal(t, 18, q.Type.Size())
	require.Equal(t, 32, q.Type.BlockElems())
	require.True(t, q.Contiguous())
	require.Equal(t, uint64(72), q.Extent())
	q.Nb = [4]uint64{18, 40, 80, 80} // padded rows
	require.False(t, q.Contiguous())
	require.Equal(t, uint64(76), q.Extent())
	require.Equal(t, "MUL_MAT", OpMulMat.String())
	require.Equal(t, "Op(999)", Op(999).String())
	require.True(t, OpPermute.IsView())
	require.False(t, OpCpy.IsView())
}
