// The overview's charts, drawn here as inline SVG: no script and nothing from elsewhere, so the
// console's Content-Security-Policy stays as it is. Colours are presentation attributes, not style
// attributes, which the policy would refuse.

package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/google/uuid"

	"wds/internal/deliverylog"
)

// bin is one bar of a delivery chart: a period's attempts by status and the re-fired chains
// started in it.
type bin struct {
	Label                               string // the period, as the bar's tooltip names it
	Tick                                string // the axis label, "" for none
	Succeeded, Failed, Dropped, Refired int64
	DroppedRefired                      int64 // drops since re-fired or recovered
}

func (b *bin) add(h deliverylog.HourCount) {
	b.Succeeded, b.Failed, b.Dropped, b.Refired = b.Succeeded+h.Succeeded, b.Failed+h.Failed, b.Dropped+h.Dropped, b.Refired+h.Refired
	b.DroppedRefired += h.DroppedRefired
}

// total is every bin's counts added up.
func total(bins []bin) bin {
	var t bin
	for _, b := range bins {
		t.add(deliverylog.HourCount{Succeeded: b.Succeeded, Failed: b.Failed, Dropped: b.Dropped, Refired: b.Refired, DroppedRefired: b.DroppedRefired})
	}
	return t
}

// series colours: the console's own (console.css) for succeeded, failed and dropped.
var (
	colSucceeded, colFailed, colDropped, colRefired = "#137333", "#e3a008", "#b42318", "#2557d6"
)

// hourBins are the last 24 hours (UTC), oldest first, the current hour last.
func hourBins(hours []deliverylog.HourCount, now time.Time) []bin {
	end := now.UTC().Truncate(time.Hour)
	bins := make([]bin, 24)
	for i := range bins {
		t := end.Add(time.Duration(i-23) * time.Hour)
		bins[i].Label = t.Format("Jan 2 15:00") + "–" + t.Add(time.Hour).Format("15:00")
		if t.Hour()%6 == 0 {
			bins[i].Tick = t.Format("15:00")
		}
	}
	for _, h := range hours {
		if i := 23 - int(end.Sub(h.Hour.UTC())/time.Hour); i >= 0 && i < 24 {
			bins[i].add(h)
		}
	}
	return bins
}

// dayBins are the last 7 days (UTC), oldest first, today last.
func dayBins(hours []deliverylog.HourCount, now time.Time) []bin {
	today := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC)
	bins := make([]bin, 7)
	for i := range bins {
		d := today.AddDate(0, 0, i-6)
		bins[i].Label, bins[i].Tick = d.Format("Mon Jan 2"), d.Format("Mon 2")
	}
	for _, h := range hours {
		if i := 6 - int(today.Sub(h.Hour.UTC().Truncate(24*time.Hour))/(24*time.Hour)); i >= 0 && i < 7 {
			bins[i].add(h)
		}
	}
	return bins
}

const chartW, chartH, chartPad, chartAxis = 540, 170, 28, 18

// tickWidth is room enough for a tick's label ("06:00", "Wed 2") at the chart's font size.
const tickWidth = 34

// barChart draws bins as stacked bars (succeeded, failed, dropped) with a thin re-fired bar beside
// each, a tooltip per period and a scale at the top left.
func barChart(title string, bins []bin) template.HTML {
	var most int64 = 1
	for _, b := range bins {
		most = max(most, b.Succeeded+b.Failed+b.Dropped, b.Refired)
	}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, template.HTMLEscapeString(title))
	plotH := float64(chartH - chartPad - chartAxis)
	slot := float64(chartW-chartPad) / float64(len(bins))
	scale := func(n int64) float64 { return plotH * float64(n) / float64(most) }
	fmt.Fprintf(&s, `<text x="0" y="%d" font-size="11" fill="#5b6577">%d</text>`, chartPad-4, most)
	fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#d9dee7"/>`, chartPad, chartPad, chartW, chartPad)
	fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#5b6577"/>`, chartPad, chartH-chartAxis, chartW, chartH-chartAxis)
	for i, b := range bins {
		x := float64(chartPad) + float64(i)*slot
		w := slot * 0.62
		fmt.Fprintf(&s, `<g><title>%s: %d succeeded, %d failed, %d dropped, %d re-fired</title>`,
			template.HTMLEscapeString(b.Label), b.Succeeded, b.Failed, b.Dropped, b.Refired)
		y := float64(chartH - chartAxis)
		for _, part := range []struct {
			n   int64
			col string
		}{{b.Succeeded, colSucceeded}, {b.Failed, colFailed}, {b.Dropped, colDropped}} {
			if h := scale(part.n); part.n > 0 {
				y -= h
				fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x+1, y, w, h, part.col)
			}
		}
		if b.Refired > 0 {
			h := scale(b.Refired)
			fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x+1+w+1, float64(chartH-chartAxis)-h, slot*0.2, h, colRefired)
		}
		// An empty period still answers a hover.
		fmt.Fprintf(&s, `<rect x="%.1f" y="%d" width="%.1f" height="%.1f" fill="transparent"/></g>`, x, chartPad, slot, plotH)
		if b.Tick != "" {
			// A tick starts at its bar, but one too near the right edge to fit (the current hour's
			// "00:00") ends at its bar instead of being cut off.
			tx, anchor := x, "start"
			if x+tickWidth > chartW {
				tx, anchor = x+slot, "end"
			}
			fmt.Fprintf(&s, `<text x="%.1f" y="%d" font-size="11" fill="#5b6577" text-anchor="%s">%s</text>`, tx, chartH-4, anchor, template.HTMLEscapeString(b.Tick))
		}
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String()) // every value written above is a number or escaped
}

// rate is an endpoint's share of successful attempts over a window.
type rate struct {
	EndpointID          uuid.UUID
	URL                 string
	Succeeded, Attempts int64
}

// Percent is the success rate, whole percent, rounded down so 99.6% never shows as 100%.
func (r rate) Percent() int64 {
	if r.Attempts == 0 {
		return 0
	}
	return r.Succeeded * 100 / r.Attempts
}

// rateChart draws each endpoint's success rate as a horizontal bar, its URL above it.
func rateChart(rates []rate) template.HTML {
	const rowH, barH = 34, 12
	var s strings.Builder
	h := max(len(rates)*rowH, rowH)
	fmt.Fprintf(&s, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="Success rate by endpoint">`,
		chartW, h, chartW, h)
	for i, r := range rates {
		y := i * rowH
		fmt.Fprintf(&s, `<g><title>%s: %d of %d attempts succeeded</title>`, template.HTMLEscapeString(r.URL), r.Succeeded, r.Attempts)
		fmt.Fprintf(&s, `<text x="0" y="%d" font-size="12" fill="#1d2430">%s</text>`, y+12, template.HTMLEscapeString(ellipsis(r.URL, 70)))
		fmt.Fprintf(&s, `<rect x="0" y="%d" width="%d" height="%d" fill="#eef1f6"/>`, y+17, chartW-60, barH)
		col := colSucceeded
		if r.Percent() < 90 {
			col = colDropped
		}
		fmt.Fprintf(&s, `<rect x="0" y="%d" width="%d" height="%d" fill="%s"/>`, y+17, int64(chartW-60)*r.Percent()/100, barH, col)
		fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="12" fill="#1d2430">%d%%</text></g>`, chartW-54, y+28, r.Percent())
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String()) // every value written above is a number or escaped
}

// ellipsis shortens s to n characters, the cut marked.
func ellipsis(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
