// Disabling, deleting and rotating an endpoint's secret break what a customer receives, so the
// console asks first: each of those buttons opens a page naming the endpoint and what its receiver
// will see, and only that page's button acts. A POST that did not come from it (a stale page, a
// forged form) shows the same page instead of acting. No script: the Content-Security-Policy
// allows none.

package console

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// confirmation is what a confirmation page says of one action.
type confirmation struct {
	Title, Button, Consequence string
}

// confirmations are the endpoint actions that ask first.
var confirmations = map[string]confirmation{
	"disable": {Title: "Disable this endpoint?", Button: "Disable",
		Consequence: "Its receiver gets no more events from now on: the chains still retrying there are dropped at once, and events fired while it is disabled are never sent to it (a resend can send one later). Enabling it again resumes deliveries of new events; a recovery re-fires the dropped chains."},
	"delete": {Title: "Delete this endpoint?", Button: "Delete",
		Consequence: "Its receiver gets no more events, for good: the chains still retrying there are dropped at once, and it cannot be enabled again (its delivery log stays). To send events there again, add the endpoint anew: it gets a new signing secret."},
	"rotate": {Title: "Rotate this endpoint's signing secret?", Button: "Rotate secret",
		Consequence: "Every delivery from now on, retries of earlier events too, is signed with a new secret, shown once on the next page. The customer must install it: until they do, their signature checks fail on every delivery and they reject them, unless the old secret goes on signing beside the new one for a grace period."},
}

// graces are the rotation's grace periods the page offers, in seconds; 24 hours is preselected.
var graces = []struct {
	Seconds int64
	Label   string
}{
	{0, "none: old signatures stop verifying now"}, {3600, "1 hour"}, {86400, "24 hours"}, {604800, "7 days (the most)"},
}

// defaultGrace is the grace preselected.
const defaultGrace = 86400

func init() {
	pages["confirm"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/confirm.html"))
}

// confirmed reports whether the POST came from the action's confirmation page.
func confirmed(g *gin.Context) bool { return g.PostForm("confirmed") == "yes" }

// confirmAction shows the confirmation page of the path's action on the path's endpoint (GET, or a
// POST that did not come from it). A member, who may not act, is told so.
func (c *Console) confirmAction(g *gin.Context) {
	s := sessionOf(g)
	what, ok := confirmations[g.Param("action")]
	if !ok {
		c.notFound(g)
		return
	}
	id, err := pathID(g)
	var ep *models.Endpoint
	if err == nil && !s.Manager() {
		err = problem.Fail(workspace.ErrForbidden, "owners and admins %s endpoints", strings.ToLower(what.Button))
	}
	if err == nil {
		ep, err = c.liveEndpoint(g, id)
	}
	if err != nil {
		c.render(g, status(err), "confirm", s, view{Error: c.problem(err)})
		return
	}
	c.render(g, http.StatusOK, "confirm", s, view{Data: map[string]any{"Endpoint": ep, "Action": g.Param("action"), "What": what,
		"Graces": graces, "Grace": int64(defaultGrace)}})
}

// liveEndpoint is the org's endpoint of id, not deleted.
func (c *Console) liveEndpoint(g *gin.Context, id uuid.UUID) (*models.Endpoint, error) {
	s := sessionOf(g)
	eps, err := c.Webhooks.List(g.Request.Context(), s.OrgID, &s.User.ID)
	if err != nil {
		return nil, err
	}
	for i := range eps {
		if eps[i].ID == id {
			return &eps[i], nil
		}
	}
	return nil, problem.Fail(problem.NotFound, "endpoint not found")
}

// graceOf reads the confirmed rotation's grace, in seconds.
func graceOf(g *gin.Context) (time.Duration, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(g.PostForm("grace_seconds")), 10, 64)
	if err != nil || n < 0 || time.Duration(n)*time.Second > endpoints.MaxRotationGrace {
		return 0, problem.Fail(problem.Invalid, "grace_seconds must be a number of seconds from 0 to %d", int64(endpoints.MaxRotationGrace.Seconds()))
	}
	return time.Duration(n) * time.Second, nil
}
