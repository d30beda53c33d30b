// One attempt of the delivery log on its own page, /console/deliveries/{id}: the delivery id a
// customer quotes (X-PC-Delivery-Id), the headers its POST carried and what came back.

package console

import (
	"html/template"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/platform/problem"
)

func init() {
	pages["delivery"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files,
		"templates/layout.html", "templates/attempt.html", "templates/delivery.html"))
}

// delivery is one attempt: its ids, outcome, headers as sent (custom values to owners and admins
// only, deliverylog.Service.Delivery), the receiver's answer, the next attempt and its workflow.
func (c *Console) delivery(g *gin.Context) {
	s := sessionOf(g)
	id, err := pathID(g)
	var row deliveryRow
	if err == nil {
		d, derr := c.Deliveries.Delivery(g.Request.Context(), id, &s.User.ID)
		switch {
		case derr != nil:
			err = derr
		case d.OrgID != s.OrgID:
			err = problem.Fail(problem.NotFound, "delivery %s not found", id) // another org of the operator's: switch to it first
		default:
			row = deliveryRow{LogRow: *d, WorkflowURL: c.workflowURL(d.WorkflowID)}
			if d.RefiredWorkflowID != nil {
				row.RefiredURL = c.workflowURL(*d.RefiredWorkflowID)
			}
		}
	}
	var urls map[uuid.UUID]string // a deleted endpoint has none: the page shows its id alone
	if err == nil {
		urls, err = c.endpointURLs(g)
	}
	if err != nil {
		c.render(g, status(err), "delivery", s, view{Error: c.problem(err)})
		return
	}
	c.render(g, http.StatusOK, "delivery", s, view{Data: map[string]any{"Row": row, "Manager": s.Manager(),
		"EndpointURL": urls[row.EndpointID]}})
}
