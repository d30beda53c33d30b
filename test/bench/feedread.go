package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
)

// feedReader drives GET /v1/events against one wds serve.
type feedReader struct {
	base   string
	client *http.Client
	keys   *keyPool
	hist   *feedHistory
	walk   int
	// head is where polling at the end starts: the iterator a page that reached the end hands out.
	head string
}

// feedPage is the envelope of a page: rows (left undecoded), then next and done.
type feedPage struct {
	Rows []json.RawMessage `json:"rows"`
	Next string            `json:"next"`
	Done bool              `json:"done"`
}

// get fetches one page of limit rows after the iterator ("": from the start) into buf.
func (r *feedReader) get(ctx context.Context, after string, limit int, buf *bytes.Buffer) error {
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	key, err := r.keys.get()
	if err != nil {
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/v1/events?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("GET /v1/events: %w", err)
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return fmt.Errorf("GET /v1/events: read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/events: %d %s", resp.StatusCode, truncate(buf.String(), 200))
	}
	return nil
}

// next reads a page's next and done, the envelope's last members, without decoding the rows before
// them: the load generator shares two cores with the server.
func (r *feedReader) next(ctx context.Context, after string, buf *bytes.Buffer) (string, bool, error) {
	if err := r.get(ctx, after, pageLimit, buf); err != nil {
		return "", false, err
	}
	body := buf.Bytes()
	i := bytes.LastIndex(body, []byte(`],"next":`))
	if i < 0 {
		return "", false, errors.New("GET /v1/events: no next in the answer")
	}
	var p feedPage
	if err := json.Unmarshal(append([]byte("{"), body[i+2:]...), &p); err != nil || p.Next == "" {
		return "", false, fmt.Errorf("GET /v1/events: next and done: %v in %s", err, truncate(string(body[i:]), 200))
	}
	return p.Next, p.Done, nil
}

// walker is one consumer: from a random depth it follows next for walk pages, then starts again
// elsewhere, so the whole history is read, not just one part of it.
func (r *feedReader) walker(seed uint64) op {
	rng := rand.New(rand.NewPCG(seed, 0xfeed))
	var after string
	left := 0
	buf := new(bytes.Buffer)
	return func(ctx context.Context) error {
		if left == 0 {
			after, left = r.hist.start(rng.IntN(r.hist.maxStart(r.walk)+1)), r.walk
		}
		next, done, err := r.next(ctx, after, buf)
		left--
		switch {
		case err != nil:
			left = 0
			return err
		case done:
			left = 0
			return errors.New("bench: a walk reached the end of the feed")
		}
		after = next
		return nil
	}
}

// poller is one consumer at the end of the feed: it follows next, and every page must be empty.
func (r *feedReader) poller() op {
	after := r.head
	buf := new(bytes.Buffer)
	return func(ctx context.Context) error {
		next, done, err := r.next(ctx, after, buf)
		switch {
		case err != nil:
			return err
		case !done || !bytes.HasPrefix(buf.Bytes(), []byte(`{"rows":[]`)):
			return fmt.Errorf("bench: polling at the end found events: %s", truncate(buf.String(), 200))
		}
		after = next
		return nil
	}
}

// checkIterator holds feedIterator to the API: the page after the start of the first loaded event
// must hand it out, with its own iterator as next. It then reads to the end for polling's start.
func (r *feedReader) checkIterator(ctx context.Context) error {
	buf := new(bytes.Buffer)
	if err := r.get(ctx, r.hist.start(0), 1, buf); err != nil {
		return err
	}
	var p feedPage
	if err := json.Unmarshal(buf.Bytes(), &p); err != nil {
		return fmt.Errorf("bench: a feed page: %w", err)
	}
	var ev struct {
		ID string `json:"id"`
	}
	if len(p.Rows) == 1 {
		_ = json.Unmarshal(p.Rows[0], &ev)
	}
	if want := feedIterator(r.hist.xact, r.hist.at(0), r.hist.firstID); ev.ID != r.hist.firstID.String() || p.Next != want {
		return fmt.Errorf("bench: the feed's iterator is no longer feedIterator's: after %s it answered %s, want event %s and next %s",
			r.hist.start(0), truncate(buf.String(), 300), r.hist.firstID, want)
	}
	next, done, err := r.next(ctx, r.hist.start(r.hist.events-1), buf)
	if err != nil || !done {
		return fmt.Errorf("bench: the page of the last event is not the end (done %v): %w", done, err)
	}
	r.head = next
	return nil
}
