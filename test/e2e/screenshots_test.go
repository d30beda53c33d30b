package e2e

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wds/internal/dev/temporaldev"
	"wds/models"
)

// screenshotsDir is where TestConsoleScreenshots writes its images: `make screenshots` points it at
// docs/console; without it they go to a temporary directory, so `make test` checks that they can be
// made but never rewrites the docs.
var screenshotsDir = flag.String("screenshots", "", "write the console's screenshots into this directory")

// shots are the console pages docs/console.md shows, by file name.
// A full shot is the whole page, for pages whose point is below their forms.
var shots = []struct {
	file, path, ready string
	full              bool
}{
	{"overview.png", "/console/", `//h1[text()="Overview"]`, false},
	{"webhooks.png", "/console/webhooks", `#ladder`, true},
	{"delivery-log.png", "/console/webhooks/{failing}", `//td[@class="st-dropped"]`, true},
	{"orders.png", "/console/orders", `td.total`, false},
	{"order.png", "/console/orders/{order}", `#total`, true},
	{"connectors.png", "/console/connectors", `td.store`, true},
	{"audit.png", "/console/audit", `td.actor`, false},
	{"recovery.png", "/console/recoveries/{recovery}", `//strong[text()="completed"]`, false},
	{"clients.png", "/console/clients", `table.grid input[name=email]`, true},
	{"vendors.png", "/console/vendors", `table.grid input[name=email]`, false},
}

// shotWidth is the width of every screenshot: a laptop's browser window.
const shotWidth, shotHeight = 1280, 800

// The console's pages at 1280 px, over a real stack with a workspace that has something to show:
// orders in two currencies, a delivered and a dropped webhook, a connector key.
func TestConsoleScreenshots(t *testing.T) {
	dir := *screenshotsDir
	if dir == "" {
		dir = t.TempDir()
	}
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	order := h.must(http.StatusCreated, "POST", "/integrations/v1/orders", h.integrationKey, map[string]any{
		"external_id": "1001", "currency": "USD", "shipping_cents": 500, "tax_cents": 1000,
		"client": map[string]any{"external_id": "c-1", "display_name": "Ada Lovelace", "email": "ada@example.test"},
		"lines": []map[string]any{{"description": "Stoneware mug", "quantity": 2, "unit_price_cents": 1550},
			{"description": "Framed print", "quantity": 1, "unit_price_cents": 120000}},
		"payment": map[string]any{"external_id": "pay-1001", "amount_cents": 124600, "method": "card"},
	})
	h.must(http.StatusCreated, "POST", "/admin/v1/orgs/"+h.org.String()+"/vendors", h.ownerToken,
		map[string]any{"store_id": h.store, "name": "Lakeside Ceramics", "email": "orders@lakeside-ceramics.example", "phone": "+1 555 0100"})
	ctx := browser(t)
	h.signIn(ctx, h.ownerToken)
	good := newReceiver(t, ok)
	h.addEndpoint(ctx, good.srv.URL+"/hooks", "5")
	down := newReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	h.addEndpoint(ctx, down.srv.URL+"/hooks", "2")
	failing := h.newestEndpoint()
	h.must(http.StatusCreated, "POST", "/integrations/v1/orders", h.integrationKey, map[string]any{
		"external_id": "1002", "currency": "USD", "lines": []map[string]any{{"description": "Tea towel", "quantity": 3, "unit_price_cents": 1200}},
	})
	waitFor(t, 30*time.Second, "the dropped delivery", func() bool {
		return slices.ContainsFunc(h.deliveries(failing.ID), func(d models.Delivery) bool { return d.Status == models.StatusDropped })
	})

	// A recovery of the outage: its page follows it until it completes.
	rec := h.must(http.StatusAccepted, "POST", "/admin/v1/endpoints/"+failing.ID.String()+"/recover", h.ownerToken,
		map[string]any{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})
	waitFor(t, 30*time.Second, "the recovered delivery dropped again", func() bool {
		n := 0
		for _, d := range h.deliveries(failing.ID) {
			if d.Status == models.StatusDropped {
				n++
			}
		}
		return n == 2
	})

	ids := map[string]string{"{failing}": failing.ID.String(), "{order}": order["id"].(string), "{recovery}": rec["id"].(string)}
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(shotWidth, shotHeight)); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	for _, s := range shots {
		path := s.path
		for k, v := range ids {
			path = strings.ReplaceAll(path, k, v)
		}
		shot := chromedp.CaptureScreenshot(&raw)
		if s.full {
			shot = chromedp.FullScreenshot(&raw, 100) // 100: PNG, not JPEG
		}
		// Nothing spills sideways: the page is no wider than the window, and nothing in main sticks
		// out of main's column (which a wider window would show as a spill).
		var width int
		var spills []string
		if err := chromedp.Run(ctx, chromedp.Navigate(h.api.URL+path), chromedp.WaitVisible(s.ready),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &width),
			chromedp.Evaluate(`(() => { const edge = document.querySelector("main").getBoundingClientRect().right + 1;
				return [...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > edge)
					.slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right - edge) + " px out") })()`, &spills),
			shot); err != nil {
			t.Fatalf("%s: %v", s.file, err)
		}
		if width > shotWidth || len(spills) > 0 {
			t.Errorf("%s: %s is %d px wide at a %d px window; past main's edge: %v", s.file, path, width, shotWidth, spills)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil || img.Bounds().Dx() != shotWidth {
			t.Fatalf("%s: %v, %d px wide, not %d", s.file, err, img.Bounds().Dx(), shotWidth)
		}
		var small bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&small, paletted(img)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.file), small.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// paletted keeps a screenshot small enough to commit: the 256 colours it uses most (a console page
// is flat colour and anti-aliased text), every other pixel drawn in the nearest of them.
func paletted(img image.Image) *image.Paletted {
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	common := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		common = append(common, c)
	}
	slices.SortFunc(common, func(a, b color.RGBA) int {
		if d := counts[b] - counts[a]; d != 0 {
			return d
		}
		return int(a.R)<<16 + int(a.G)<<8 + int(a.B) - (int(b.R)<<16 + int(b.G)<<8 + int(b.B))
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range common[:min(256, len(common))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

// docs/console.md shows every screenshot the test makes, and each one it links is committed.
func TestTheConsoleDocLinksEveryScreenshot(t *testing.T) {
	doc, err := os.ReadFile("../../docs/console.md")
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range regexp.MustCompile(`!\[[^\]]*\]\(console/([^)]+)\)`).FindAllStringSubmatch(string(doc), -1) {
		linked = append(linked, m[1])
		info, err := os.Stat(filepath.Join("../../docs/console", m[1]))
		if err != nil || info.Size() == 0 {
			t.Errorf("docs/console.md links console/%s, which is missing (make screenshots): %v", m[1], err)
		}
	}
	var made []string
	for _, s := range shots {
		made = append(made, s.file)
	}
	slices.Sort(linked)
	slices.Sort(made)
	if !slices.Equal(linked, made) {
		t.Errorf("docs/console.md links %v; the screenshots made are %v", linked, made)
	}
}
