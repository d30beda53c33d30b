package outbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/events"
)

// The envelope PrepareEvents writes, with the event's time put where the insert puts it, is byte for
// byte what encoding/json writes of the event as delivered: the data spliced in unencoded changes
// nothing, HTML-escaped characters, nested objects and a test event's null id included.
func TestTheEnvelopeIsTheEventAsEncodingJSONWritesIt(t *testing.T) {
	store := uuid.New()
	data := map[string]any{"id": "ord_1", "note": "<b>Tom & Jerry</b> \u00e9\u2028",
		"lines": []any{map[string]any{"quantity": 2, "metadata": map[string]any{}}}, "total_cents": 3000}
	at := time.Date(2026, 11, 28, 6, 10, 0, 123456000, time.UTC)
	for _, c := range []struct {
		typ   string
		store *uuid.UUID
	}{{"order.created", &store}, {"client.updated", nil}, {events.WebhookTest, nil}} {
		e, err := NewEvent(uuid.New(), c.store, c.typ, data)
		if err != nil {
			t.Fatal(err)
		}
		head, tail, err := e.envelope()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(e.body(at))
		if err != nil {
			t.Fatal(err)
		}
		// the insert writes the time as database.JSONTime does: microseconds, trailing zeros cut
		if got := head + at.Format("2006-01-02T15:04:05.999999") + "Z" + tail; got != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", c.typ, got, want)
		}
	}
}
