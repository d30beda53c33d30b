package api

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/api/openapi"
	"wds/internal/catalog"
	"wds/internal/events"
	"wds/internal/ingest"
	"wds/internal/order"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

// ReadStore is what the Read API reads: pages and rows of one org (views). Each call takes its turn
// at the database (database.Admit) and gives it back before it returns, so the Read API's queries
// queue with the writes' transactions and a slow reader of the response holds no turn.
type ReadStore interface {
	ListOrders(context.Context, paging.ListQuery) (paging.Page[order.Order], error)
	GetOrder(context.Context, paging.Scope, uuid.UUID) (*order.Order, error)
	ListVendors(context.Context, paging.ListQuery) (paging.Page[catalog.Vendor], error)
	GetVendor(context.Context, paging.Scope, uuid.UUID) (*catalog.Vendor, error)
	ListClients(context.Context, paging.ListQuery) (paging.Page[ingest.ClientView], error)
	GetClient(context.Context, paging.Scope, uuid.UUID) (*ingest.ClientView, error)
	ListProducts(context.Context, paging.ListQuery) (paging.Page[catalog.Product], error)
	GetProduct(context.Context, paging.Scope, uuid.UUID) (*catalog.Product, error)
}

// admittedReads is the Read API's ReadStore: the views' queries, each in its turn at the database.
type admittedReads struct{ db *gorm.DB }

// admitted runs a read in its turn at the database (database.Admit), so that the Read API's queries
// queue with the writes' transactions instead of crowding the CPUs; the turn ends when the read
// returns, before the answer is written.
func admitted[T any](ctx context.Context, db *gorm.DB, read func() (T, error)) (T, error) {
	release, err := database.Admit(ctx, db)
	if err != nil {
		var zero T
		return zero, err
	}
	defer release()
	return read()
}

func (r admittedReads) ListOrders(ctx context.Context, q paging.ListQuery) (paging.Page[order.Order], error) {
	return admitted(ctx, r.db, func() (paging.Page[order.Order], error) { return order.List(ctx, r.db, q) })
}

func (r admittedReads) GetOrder(ctx context.Context, sc paging.Scope, id uuid.UUID) (*order.Order, error) {
	return admitted(ctx, r.db, func() (*order.Order, error) { return order.Get(ctx, r.db, sc, id) })
}

func (r admittedReads) ListVendors(ctx context.Context, q paging.ListQuery) (paging.Page[catalog.Vendor], error) {
	return admitted(ctx, r.db, func() (paging.Page[catalog.Vendor], error) { return catalog.ListVendors(ctx, r.db, q) })
}

func (r admittedReads) GetVendor(ctx context.Context, sc paging.Scope, id uuid.UUID) (*catalog.Vendor, error) {
	return admitted(ctx, r.db, func() (*catalog.Vendor, error) { return catalog.GetVendor(ctx, r.db, sc, id) })
}

func (r admittedReads) ListClients(ctx context.Context, q paging.ListQuery) (paging.Page[ingest.ClientView], error) {
	return admitted(ctx, r.db, func() (paging.Page[ingest.ClientView], error) { return ingest.ListClients(ctx, r.db, q) })
}

func (r admittedReads) GetClient(ctx context.Context, sc paging.Scope, id uuid.UUID) (*ingest.ClientView, error) {
	return admitted(ctx, r.db, func() (*ingest.ClientView, error) { return ingest.GetClient(ctx, r.db, sc, id) })
}

func (r admittedReads) ListProducts(ctx context.Context, q paging.ListQuery) (paging.Page[catalog.Product], error) {
	return admitted(ctx, r.db, func() (paging.Page[catalog.Product], error) { return catalog.ListProducts(ctx, r.db, q) })
}

func (r admittedReads) GetProduct(ctx context.Context, sc paging.Scope, id uuid.UUID) (*catalog.Product, error) {
	return admitted(ctx, r.db, func() (*catalog.Product, error) { return catalog.GetProduct(ctx, r.db, sc, id) })
}

func (s *server) registerRead(r *gin.Engine) {
	r.GET("/v1/health", health)
	r.GET("/v1/openapi.json", serveDoc(openapi.ReadJSON, "application/json"))
	r.GET("/api/openapi.yaml", serveDoc(openapi.ReadYAML, "application/yaml"))
	// The event catalog is public like the API descriptions: receivers read it before they hold a key.
	r.GET("/v1/event-types", serveDoc(events.Document, jsonContentType))

	v1 := r.Group("/v1", s.readAuth(models.ScopeReadOnly))
	v1.GET("/orders", listHandler(s, ReadStore.ListOrders))
	v1.GET("/orders/:id", getHandler(s, ReadStore.GetOrder))
	v1.GET("/vendors", listHandler(s, ReadStore.ListVendors))
	v1.GET("/vendors/:id", getHandler(s, ReadStore.GetVendor))
	v1.GET("/clients", listHandler(s, ReadStore.ListClients))
	v1.GET("/clients/:id", getHandler(s, ReadStore.GetClient))
	v1.GET("/products", listHandler(s, ReadStore.ListProducts))
	v1.GET("/products/:id", getHandler(s, ReadStore.GetProduct))
	v1.GET("/events", s.readFeed)
	v1.GET("/events/:id", s.readFeedEvent)
}

// health answers liveness without touching the database, so it stays fast when the database is not.
func health(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) }

func serveDoc(doc func() []byte, contentType string) gin.HandlerFunc {
	return func(c *gin.Context) { c.Data(http.StatusOK, contentType, doc()) }
}

func listHandler[T any](s *server, list func(ReadStore, context.Context, paging.ListQuery) (paging.Page[T], error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := listQuery(c)
		if err != nil {
			fail(c, err)
			return
		}
		p, err := list(s.Reads, c.Request.Context(), q)
		if err != nil {
			fail(c, err)
			return
		}
		// Orders write themselves: encoding/json would scan and copy their lines and payments again.
		if orders, ok := any(p).(paging.Page[order.Order]); ok {
			buf := pageBuffers.Get().(*[]byte)
			*buf = order.AppendPage((*buf)[:0], orders)
			c.Data(http.StatusOK, jsonContentType, *buf)
			if cap(*buf) <= maxPooledPage {
				pageBuffers.Put(buf)
			}
			return
		}
		c.JSON(http.StatusOK, p)
	}
}

// pageBuffers are list pages' buffers, used again: a page of orders is about 100 KB, whose allocation
// and zeroing were a twentieth of a page's CPU. A ResponseWriter keeps nothing of what it writes.
var pageBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledPage bounds what the pool keeps, so that one page of huge metadata does not stay in memory.
const maxPooledPage = 1 << 20

// jsonContentType is what gin's c.JSON sends.
const jsonContentType = "application/json; charset=utf-8"

func getHandler[T any](s *server, get func(ReadStore, context.Context, paging.Scope, uuid.UUID) (*T, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		// A path id that is not a UUID cannot name a row: 404 as for another org's row.
		id, err := uuid.Parse(c.Param("id"))
		if err != nil {
			fail(c, problem.Fail(problem.NotFound, "not found"))
			return
		}
		scope := paging.Scope{OrgID: c.MustGet(ctxOrgID).(uuid.UUID)}
		row, err := get(s.Reads, c.Request.Context(), scope, id)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, row)
	}
}

// listQuery reads limit, the cursor pair and the optional store_id filter.
func listQuery(c *gin.Context) (paging.ListQuery, error) {
	q := paging.ListQuery{Scope: paging.Scope{OrgID: c.MustGet(ctxOrgID).(uuid.UUID)}}
	var err error
	if q.Limit, err = queryLimit(c); err != nil {
		return q, err
	}
	if q.Cursor, err = paging.ParseCursor(c.Query("cursor_at"), c.Query("cursor_id")); err != nil {
		return q, err
	}
	if q.StoreID, err = queryStoreID(c); err != nil {
		return q, err
	}
	return q, nil
}

// queryLimit reads every list's limit: 1 to 100, 50 when absent, larger values clamped.
func queryLimit(c *gin.Context) (int, error) {
	raw, given := c.GetQuery("limit")
	n, err := strconv.Atoi(raw)
	if given && err != nil {
		// Digits too many for an int are still "above 100": clamp them like any other large value.
		if numErr, ok := err.(*strconv.NumError); ok && numErr.Err == strconv.ErrRange && raw[0] != '-' {
			n, err = paging.MaxLimit, nil
		} else {
			return 0, problem.Fail(paging.ErrInvalidParameter, "limit must be an integer from 1 to 100")
		}
	}
	return paging.ClampLimit(n, given)
}

// queryStoreID reads the optional store_id filter.
func queryStoreID(c *gin.Context) (*uuid.UUID, error) {
	raw, ok := c.GetQuery("store_id")
	if !ok {
		return nil, nil
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return nil, problem.Fail(paging.ErrInvalidParameter, "store_id must be a UUID")
	}
	return &id, nil
}
