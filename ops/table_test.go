package ops

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeTable keeps README.md's supported-ops table equal to the registrations; with
// UPDATE_README=1 it rewrites the table instead.
func TestReadmeTable(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	const begin, end = "<!-- ops:begin -->\n", "<!-- ops:end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "README.md lacks the ops markers")
	if os.Getenv("UPDATE_README") == "1" {
		s = s[:i+len(begin)] + Table() + s[j:]
		require.NoError(t, os.WriteFile("../README.md", []byte(s), 0o644))
	}
	require.Equal(t, Table(), s[i+len(begin):j], "README.md's op table is stale: paste ops.Table() between the markers")
}
