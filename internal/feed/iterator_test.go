package feed

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/api/openapi"
)

// FuzzParseIterator: no input makes the parser panic, and whatever it accepts encodes to an iterator
// of the same position.
func FuzzParseIterator(f *testing.F) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	for _, p := range []position{start, {Xact: 981, Time: at}, {Xact: 1 << 40, At: at, ID: uuid.New(), Time: at}} {
		f.Add(p.encode())
	}
	f.Add("")
	f.Add("eyJ2IjoxfQ")
	f.Add("eyJ2IjoxLCJ4IjoiMSIsImEiOiIiLCJpIjoiIiwidCI6MH0")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseIterator(s)
		if err != nil {
			return
		}
		again, err := parseIterator(p.encode())
		if err != nil {
			t.Fatalf("%q parsed, but its encoding %q does not: %v", s, p.encode(), err)
		}
		if again.Xact != p.Xact || !again.At.Equal(p.At) || again.ID != p.ID || again.Time.Unix() != p.Time.Unix() {
			t.Fatalf("%q: %+v, encoded and parsed again %+v", s, p, again)
		}
	})
}

func TestIteratorRoundTrips(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	for _, p := range []position{{Xact: 981, Time: at}, {Xact: 7, At: at, ID: uuid.New(), Time: at}} {
		got, err := parseIterator(p.encode())
		if err != nil || got.Xact != p.Xact || !got.At.Equal(p.At) || got.ID != p.ID || got.Time.Unix() != p.Time.Unix() { // the expiry time is kept to the second
			t.Errorf("%+v: parsed back %+v %v", p, got, err)
		}
	}
}

// The OpenAPI document's example page hands out an iterator of this feed, so a client generated or
// tried from the document is not given a next the API refuses.
func TestTheDocumentsExampleNextIsAnIterator(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				EventPage struct {
					Example struct {
						Next string `json:"next"`
					} `json:"example"`
				} `json:"EventPage"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.ReadJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := parseIterator(doc.Components.Schemas.EventPage.Example.Next); err != nil {
		t.Fatalf("EventPage's example next %q: %v", doc.Components.Schemas.EventPage.Example.Next, err)
	}
}
