// The order page's way to its webhooks: a link to its events and, for owners and admins, "resend
// this order's events to ..." one endpoint, every event once, as the Operator API's
// POST /admin/v1/orders/{id}/resend does.

package console

import (
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/order"
	"wds/internal/platform/problem"
	"wds/models"
)

func init() {
	notices["order_resent"] = "Resent: every event of this order the endpoint is subscribed to goes to it again, oldest first; follow them in its events."
}

// resendTargets are the org's enabled endpoints, which the order page offers to resend to.
func (c *Console) resendTargets(g *gin.Context) ([]models.Endpoint, error) {
	s := sessionOf(g)
	eps, err := c.Webhooks.List(g.Request.Context(), s.OrgID, &s.User.ID)
	var out []models.Endpoint
	for _, ep := range eps {
		if ep.Enabled {
			out = append(out, ep)
		}
	}
	return out, err
}

// resendOrder resends the order's events to the form's endpoint and goes back to the order, or
// shows it with the refusal.
func (c *Console) resendOrder(g *gin.Context) {
	s := sessionOf(g)
	id, err := pathID(g)
	var endpoint uuid.UUID
	if err == nil {
		if endpoint, err = uuid.Parse(g.PostForm("endpoint")); err != nil {
			err = problem.Fail(problem.Invalid, "endpoint must be one of the org's endpoints")
		}
	}
	if err == nil {
		_, err = c.Resends.ResendOrder(g.Request.Context(), order.Ref{ID: id}, endpoint, s.User.ID)
	}
	if err != nil {
		c.orderPage(g, status(err), view{Error: c.problem(err)})
		return
	}
	c.done(g, "/console/orders/"+id.String(), "order_resent")
}
