package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/ingest"
)

// AppOrderStore is the operator's own writes of orders and clients (ingest).
type AppOrderStore interface {
	CreateAppOrder(ctx context.Context, orgID, actorID uuid.UUID, in ingest.AppOrder) (*ingest.OrderResult, error)
	CreateClient(ctx context.Context, orgID, actorID uuid.UUID, in ingest.NewClient) (*ingest.ClientView, error)
	UpdateClient(ctx context.Context, actorID, clientID uuid.UUID, in ingest.ClientFields) (*ingest.ClientView, error)
}

// registerOperatorAppOrders mounts the operator's own writes of orders and clients (docs/cli.md, Workspace operations):
// an order made by hand, and a client added or edited. The rules, roles included, live in ingest.
func (s *server) registerOperatorAppOrders(r *gin.Engine) {
	g := s.operatorGroup(r)
	org := g.Group("/orgs/:org_id", pathOrg)
	org.POST("/orders", s.createAppOrder)
	org.POST("/clients", s.createAppClient)
	g.PATCH("/clients/:id", s.updateAppClient)
}

func (s *server) createAppOrder(c *gin.Context) {
	var in ingest.AppOrder
	if err := readObject(c, &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.AppOrders.CreateAppOrder(c.Request.Context(), c.MustGet(ctxOrgID).(uuid.UUID), actorOf(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(created(!res.Duplicate), res)
}

func (s *server) createAppClient(c *gin.Context) {
	var in ingest.NewClient
	if err := readObject(c, &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.AppOrders.CreateClient(c.Request.Context(), c.MustGet(ctxOrgID).(uuid.UUID), actorOf(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, res)
}

func (s *server) updateAppClient(c *gin.Context) {
	id, ok := pathID(c, "client")
	if !ok {
		return
	}
	var in ingest.ClientFields
	if err := readObject(c, &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.AppOrders.UpdateClient(c.Request.Context(), actorOf(c), id, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
