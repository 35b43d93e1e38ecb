package conformance

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

// Row is one line of the report: the cases of one op family and type label.
type Row struct {
	// Op and Types are the family and type label the row groups by.
	Op, Types string
	// Cases, Passed, Failed and Unsupported count the cases of the row.
	Cases, Passed, Failed, Unsupported int
	// WorstNMSE is the largest NMSE measured among the compared cases (NaN if none).
	WorstNMSE float64
	// MaxNMSE is the largest threshold among the row's cases.
	MaxNMSE float64
}

// Summary aggregates the results of a suite run.
type Summary struct {
	// Rows are ordered by op family (in suite order) and type label.
	Rows []Row
	// Results are all results in run order.
	Results []Result
}

// Summarize groups results into rows by op family and type label.
func Summarize(results []Result) *Summary {
	s := &Summary{Results: results}
	index := map[string]int{}
	opOrder := map[string]int{}
	for _, r := range results {
		c := r.Case
		if _, ok := opOrder[c.Op]; !ok {
			opOrder[c.Op] = len(opOrder)
		}
		key := c.Op + "\x00" + c.Types
		i, ok := index[key]
		if !ok {
			i = len(s.Rows)
			index[key] = i
			s.Rows = append(s.Rows, Row{Op: c.Op, Types: c.Types, WorstNMSE: math.NaN()})
		}
		row := &s.Rows[i]
		row.Cases++
		row.MaxNMSE = math.Max(row.MaxNMSE, c.MaxNMSE)
		switch r.Status {
		case Passed:
			row.Passed++
		case Failed:
			row.Failed++
		case Unsupported:
			row.Unsupported++
		}
		if !math.IsNaN(r.NMSE) && (math.IsNaN(row.WorstNMSE) || r.NMSE > row.WorstNMSE) {
			row.WorstNMSE = r.NMSE
		}
	}
	sort.SliceStable(s.Rows, func(a, b int) bool {
		ra, rb := s.Rows[a], s.Rows[b]
		if ra.Op != rb.Op {
			return opOrder[ra.Op] < opOrder[rb.Op]
		}
		return ra.Types < rb.Types
	})
	return s
}

// Totals returns the number of cases, passed, failed and unsupported over all rows.
func (s *Summary) Totals() (cases, passed, failed, unsupported int) {
	for _, r := range s.Rows {
		cases += r.Cases
		passed += r.Passed
		failed += r.Failed
		unsupported += r.Unsupported
	}
	return
}

// Problems lists what makes the run fail: every failed case, and every unsupported case
// that is not optional.
func (s *Summary) Problems() []string {
	var out []string
	for _, r := range s.Results {
		switch {
		case r.Status == Failed:
			out = append(out, fmt.Sprintf("FAIL %s: %s", r.Case.Name, r.Msg))
		case r.Status == Unsupported && !r.Case.Optional:
			out = append(out, fmt.Sprintf("UNSUPPORTED (required) %s: %s", r.Case.Name, r.Msg))
		}
	}
	return out
}

// OK reports whether the run passed: no failures and no unsupported required cases.
func (s *Summary) OK() bool { return len(s.Problems()) == 0 }

// fmtNMSE formats an NMSE value for the table.
func fmtNMSE(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	}
	return fmt.Sprintf("%.2e", v)
}

// WriteTable prints the per op and type table followed by a totals line.
func (s *Summary) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\ttypes\tcases\tpassed\tfailed\tunsupported\tworst NMSE\tmax NMSE\t")
	for _, r := range s.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.Op, r.Types, r.Cases, r.Passed,
			r.Failed, r.Unsupported, fmtNMSE(r.WorstNMSE), fmtNMSE(r.MaxNMSE))
	}
	c, p, f, u := s.Totals()
	fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", "TOTAL", "", c, p, f, u, "", "")
	_ = tw.Flush()
}

// Table returns WriteTable's output as a string.
func (s *Summary) Table() string {
	var b strings.Builder
	s.WriteTable(&b)
	return b.String()
}
