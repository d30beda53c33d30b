package paging

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestParseCursor(t *testing.T) {
	id := uuid.NewString()
	cases := []struct {
		name, at, id string
		wantNil      bool
		wantErr      bool
	}{
		{name: "absent is the first page", wantNil: true},
		{name: "both given", at: "2026-01-02T03:04:05.123456Z", id: id},
		{name: "second precision", at: "2026-01-02T03:04:05Z", id: id},
		{name: "offset zone", at: "2026-01-02T03:04:05.1+02:00", id: id},
		{name: "at alone", at: "2026-01-02T03:04:05Z", wantErr: true},
		{name: "id alone", id: id, wantErr: true},
		{name: "bad time", at: "yesterday", id: id, wantErr: true},
		{name: "bad id", at: "2026-01-02T03:04:05Z", id: "nope", wantErr: true},
		{name: "braced id", at: "2026-01-02T03:04:05Z", id: "{" + id + "}", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur, err := ParseCursor(c.at, c.id)
			if c.wantErr {
				if !errors.Is(err, ErrInvalidCursor) {
					t.Fatalf("err = %v, want ErrInvalidCursor", err)
				}
				return
			}
			if err != nil || (cur == nil) != c.wantNil {
				t.Fatalf("cursor=%v err=%v", cur, err)
			}
		})
	}
}

func TestCursorRoundTripKeepsMicroseconds(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)
	c := Cursor{At: at, ID: uuid.New()}
	b, _ := c.MarshalJSON()
	want := `{"at":"2026-05-06T07:08:09.123456Z","id":"` + c.ID.String() + `"}`
	if string(b) != want {
		t.Fatalf("got %s want %s", b, want)
	}
	back, err := ParseCursor("2026-05-06T07:08:09.123456Z", c.ID.String())
	if err != nil || !back.At.Equal(at) {
		t.Fatalf("round trip: %v %v", back, err)
	}
}

func TestClampLimit(t *testing.T) {
	for _, c := range []struct {
		n     int
		given bool
		want  int
		err   bool
	}{{0, false, 50, false}, {1, true, 1, false}, {100, true, 100, false}, {101, true, 100, false}, {100000, true, 100, false}, {0, true, 0, true}, {-5, true, 0, true}} {
		got, err := ClampLimit(c.n, c.given)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ClampLimit(%d,%v) = %d,%v", c.n, c.given, got, err)
		}
	}
}

func FuzzParseCursor(f *testing.F) {
	f.Add("2026-01-02T03:04:05.123456Z", "8d3e1f1e-8f7b-4a4e-9a53-1c0a7d7e8b21")
	f.Add("", "")
	f.Add("0000-00-00T00:00:00Z", "x")
	f.Fuzz(func(t *testing.T, at, id string) {
		c, err := ParseCursor(at, id)
		if err != nil && !errors.Is(err, ErrInvalidCursor) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if c != nil {
			if _, err := c.MarshalJSON(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestFitEndsAPageBeforeTheRowThatWouldPassItsSize(t *testing.T) {
	row := func(n int) string { return strings.Repeat("x", n) }
	big := MaxPageBytes / 3
	for _, c := range []struct {
		name  string
		rows  []string
		limit int
		n     int
		more  bool
	}{
		{"small rows, one more than the limit", []string{"a", "b", "c"}, 2, 2, true},
		{"small rows, the last page", []string{"a", "b"}, 2, 2, false},
		{"three fit, the fourth would pass", []string{row(big), row(big), row(big - 100), row(big)}, 10, 3, true},
		{"a first row over the bound is still a page", []string{row(MaxPageBytes + 1), "b"}, 10, 1, true},
		{"empty", nil, 10, 0, false},
	} {
		if n, more := Fit(c.rows, c.limit); n != c.n || more != c.more {
			t.Errorf("%s: Fit = %d %v, want %d %v", c.name, n, more, c.n, c.more)
		}
	}
}
