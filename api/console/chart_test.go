package console

import (
	"strings"
	"testing"
)

// A tick at the right edge (the current hour's, "00:00") ends at its bar instead of running past the
// chart's edge, where the browser would cut it off; the others start at theirs.
func TestAChartsLastTickStaysInside(t *testing.T) {
	bins := make([]bin, 24)
	bins[0].Tick, bins[23].Tick = "01:00", "00:00"
	svg := string(barChart("test", bins))
	for _, want := range []string{`text-anchor="start">01:00</text>`, `text-anchor="end">00:00</text>`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q:\n%s", want, svg)
		}
	}
}
