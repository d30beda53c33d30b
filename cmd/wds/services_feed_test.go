package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"wds/internal/feed"
	"wds/internal/platform/config"
	"wds/test/deliverytest"
)

// The feed that wds serve and wds dev hand the Read API keeps iterators as long as WDS_RETENTION
// keeps events: one older than that is 410 iterator_expired; with retention off, none expires.
func TestTheServedFeedExpiresIteratorsAtTheRetention(t *testing.T) {
	f, _ := newKeyFixture(t)
	ctx := context.Background()
	for range 2 {
		if _, err := deliverytest.Emit(ctx, f.db, f.org, nil, "client.created", map[string]any{"id": uuid.New()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.db.Exec(`UPDATE events SET created_at = created_at - interval '2 hours'`).Error; err != nil {
		t.Fatal(err)
	}
	read := func(retention time.Duration) error {
		s := newServices(&config.Config{Retention: retention}, f.db, nil, nil, logrus.New()).feed
		first, err := s.Read(ctx, feed.Query{OrgID: f.org, Limit: 1})
		if err != nil || first.Done {
			t.Fatalf("the first page: done=%v %v, want one of two events", first.Done, err)
		}
		_, err = s.Read(ctx, feed.Query{OrgID: f.org, After: first.Next, Limit: 1})
		return err
	}
	if err := read(time.Hour); !errors.Is(err, feed.ErrIteratorExpired) {
		t.Fatalf("WDS_RETENTION=1h, an iterator at an event 2 hours old: %v, want iterator_expired", err)
	}
	if err := read(0); err != nil {
		t.Fatalf("WDS_RETENTION=0 keeps everything, yet: %v", err)
	}
}
