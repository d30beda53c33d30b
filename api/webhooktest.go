package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/platform/problem"
	"wds/internal/resend"
	"wds/models"
)

// TestSender queues a test event to one of an org's endpoints (resend.Service).
type TestSender interface {
	SendTest(ctx context.Context, orgID, endpointID uuid.UUID) (*resend.TestQueued, error)
}

// registerWebhookTest mounts POST /v1/webhooks/test/{endpoint_id}, the one write a read_write read
// key may do.
func (s *server) registerWebhookTest(r *gin.Engine) {
	r.POST("/v1/webhooks/test/:endpoint_id", s.readAuth(models.ScopeReadWrite), s.webhookTest)
}

func (s *server) webhookTest(c *gin.Context) {
	id, err := uuid.Parse(c.Param("endpoint_id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "endpoint not found"))
		return
	}
	out, err := s.Resends.SendTest(c.Request.Context(), c.MustGet(ctxOrgID).(uuid.UUID), id)
	if err != nil {
		fail(c, err)
		return
	}
	if s.Dispatches != nil {
		s.Dispatches.StartDispatches(c.Request.Context(), out.DispatchID)
	}
	c.JSON(http.StatusOK, out)
}
