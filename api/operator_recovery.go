package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/platform/problem"
	"wds/models"
)

// Recoveries are the support desk's recoveries (recovery.Service).
type Recoveries interface {
	Recover(ctx context.Context, endpointID, actorID uuid.UUID, since time.Time, until *time.Time) (*models.Recovery, error)
	Recovery(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*models.Recovery, error)
	CancelRecovery(ctx context.Context, id, actorID uuid.UUID) (*models.Recovery, error)
}

// registerRecovery mounts the recovery routes of the support desk.
func (s *server) registerRecovery(g *gin.RouterGroup) {
	g.POST("/endpoints/:id/recover", s.recoverEndpoint)
	g.GET("/recoveries/:id", s.showRecovery)
	g.POST("/recoveries/:id/cancel", s.cancelRecovery)
}

// recoverEndpoint is POST /admin/v1/endpoints/{id}/recover {since, until?}: 202 with the recovery,
// whose workflow the service starts after its commit.
func (s *server) recoverEndpoint(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "endpoint %q not found", c.Param("id")))
		return
	}
	var b struct {
		Since *string `json:"since"`
		Until *string `json:"until"`
	}
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	if b.Since == nil {
		fail(c, problem.Fail(problem.Invalid, "since is required: the time the outage began (RFC 3339)"))
		return
	}
	since, err := bodyTime("since", b.Since)
	if err != nil {
		fail(c, err)
		return
	}
	var until *time.Time
	if until, err = bodyTime("until", b.Until); err != nil {
		fail(c, err)
		return
	}
	rec, err := s.Recoveries.Recover(c.Request.Context(), id, actorOf(c), *since, until)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, rec)
}

func (s *server) showRecovery(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "recovery %q not found", c.Param("id")))
		return
	}
	actor := actorOf(c)
	rec, err := s.Recoveries.Recovery(c.Request.Context(), id, &actor)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, rec)
}

func (s *server) cancelRecovery(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "recovery %q not found", c.Param("id")))
		return
	}
	rec, err := s.Recoveries.CancelRecovery(c.Request.Context(), id, actorOf(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, rec)
}
