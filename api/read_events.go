package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/feed"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// EventFeed is what the Read API's event feed reads (feed.Service), each call in its turn at the
// database like the other reads.
type EventFeed interface {
	Read(context.Context, feed.Query) (feed.Page, error)
	Event(ctx context.Context, orgID, id uuid.UUID) (json.RawMessage, error)
}

// admittedFeed is the feed's reads, each in its turn at the database (admitted).
type admittedFeed struct {
	db   *gorm.DB
	feed *feed.Service
}

func (f admittedFeed) Read(ctx context.Context, q feed.Query) (feed.Page, error) {
	return admitted(ctx, f.db, func() (feed.Page, error) { return f.feed.Read(ctx, q) })
}

func (f admittedFeed) Event(ctx context.Context, orgID, id uuid.UUID) (json.RawMessage, error) {
	return admitted(ctx, f.db, func() (json.RawMessage, error) { return f.feed.Event(ctx, orgID, id) })
}

// readFeed is GET /v1/events: a page of the org's feed, {"rows": [...], "next": "...", "done": bool}.
func (s *server) readFeed(c *gin.Context) {
	q, err := feedQuery(c)
	if err != nil {
		fail(c, err)
		return
	}
	p, err := s.Feed.Read(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	// The rows are the stored bodies, written as they are: encoding them again would only copy them.
	var b bytes.Buffer
	b.WriteString(`{"rows":[`)
	for i, row := range p.Rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(row)
	}
	b.WriteString(`],"next":`)
	b.WriteString(strconv.Quote(p.Next))
	b.WriteString(`,"done":` + strconv.FormatBool(p.Done) + `}`)
	c.Data(http.StatusOK, jsonContentType, b.Bytes())
}

// readFeedEvent is GET /v1/events/{id}: one event's body as its deliveries send it.
func (s *server) readFeedEvent(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "event not found"))
		return
	}
	body, err := s.Feed.Event(c.Request.Context(), c.MustGet(ctxOrgID).(uuid.UUID), id)
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(http.StatusOK, jsonContentType, body)
}

// feedQuery reads the feed's parameters: after, since, types, store_id and limit.
func feedQuery(c *gin.Context) (feed.Query, error) {
	q := feed.Query{OrgID: c.MustGet(ctxOrgID).(uuid.UUID), After: c.Query("after")}
	var err error
	if q.Limit, err = queryLimit(c); err != nil {
		return q, err
	}
	if _, given := c.GetQuery("after"); given && q.After == "" {
		return q, problem.Fail(paging.ErrInvalidCursor, "after is empty: pass the next of an earlier page, or leave after out to start from the oldest event kept")
	}
	if raw, ok := c.GetQuery("since"); ok {
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil || t.Year() < 1 || t.Year() > 9999 {
			return q, problem.Fail(paging.ErrInvalidParameter, "since must be an RFC 3339 date-time, such as 2026-01-02T15:04:05Z")
		}
		q.Since = &t
	}
	if raw, ok := c.GetQuery("types"); ok {
		if q.Types, err = feedTypes(raw); err != nil {
			return q, err
		}
	}
	if q.StoreID, err = queryStoreID(c); err != nil {
		return q, err
	}
	return q, nil
}

// feedTypes reads types, a comma-separated list of the catalog's event types. webhook.test is one of
// them, but test events are not in the feed: asked for alone, it reads nothing.
func feedTypes(raw string) ([]string, error) {
	var types []string
	for _, t := range strings.Split(raw, ",") {
		t = strings.TrimSpace(t)
		if !events.Known(t) {
			return nil, problem.Fail(paging.ErrInvalidParameter, "types: %q is not an event type; the types are %s", t, events.Names())
		}
		if t != events.WebhookTest && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		types = []string{events.WebhookTest} // matches nothing: test events are not in the feed
	}
	return types, nil
}
