// A recovery's own page: its progress and how its chains stand, which the page refreshes by itself
// while the recovery runs (a <meta http-equiv="refresh">, which the Content-Security-Policy allows,
// so no script), and Cancel; and the org's recoveries.

package console

import (
	"html/template"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/platform/problem"
	"wds/internal/recovery"
	"wds/models"
)

// recoveryRefresh is how often, in seconds, a running recovery's page reloads itself.
const recoveryRefresh = 2

// recoveryChainsShown is how many of a recovery's chains that did not succeed its page lists.
const recoveryChainsShown = 50

func init() {
	pages["recovery"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/recovery.html"))
	pages["recoveries"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/recoveries.html"))
}

// recoveries lists the org's recoveries, running first, each with how its chains stand.
func (c *Console) recoveries(g *gin.Context) {
	s := sessionOf(g)
	recs, err := c.Recoveries.ListRecoveries(g.Request.Context(), s.OrgID, s.User.ID)
	var urls map[uuid.UUID]string
	if err == nil {
		urls, err = c.endpointURLs(g)
	}
	if err != nil {
		c.render(g, status(err), "recoveries", s, view{Error: c.problem(err)})
		return
	}
	c.render(g, http.StatusOK, "recoveries", s, view{Data: map[string]any{"Recoveries": recs, "URLs": urls, "Max": recovery.MaxRecoveriesListed}})
}

// recovery shows the recovery of the path, in the session's org.
func (c *Console) recovery(g *gin.Context) { c.recoveryPage(g, http.StatusOK, view{Notice: notice(g)}) }

func (c *Console) recoveryPage(g *gin.Context, code int, v view) {
	s := sessionOf(g)
	id, err := pathID(g)
	var rec *models.Recovery
	if err == nil {
		rec, err = c.Recoveries.Recovery(g.Request.Context(), id, &s.User.ID)
	}
	if err == nil && rec.OrgID != s.OrgID {
		err = problem.Fail(problem.NotFound, "recovery %s not found", id) // another org of the operator's: switch to it first
	}
	var urls map[uuid.UUID]string
	if err == nil {
		urls, err = c.endpointURLs(g)
	}
	var chains []recovery.RecoveryChain
	if err == nil {
		chains, err = c.Recoveries.RecoveryChains(g.Request.Context(), id, &s.User.ID, recoveryChainsShown)
	}
	if err != nil {
		c.render(g, status(err), "recovery", s, view{Error: c.problem(err)})
		return
	}
	if rec.Running() {
		v.Refresh = strconv.Itoa(recoveryRefresh) + "; url=/console/recoveries/" + rec.ID.String()
	}
	v.Data = map[string]any{"Recovery": rec, "URL": urls[rec.EndpointID], "WorkflowURL": c.workflowURL(rec.WorkflowID),
		"Chains": chains, "Shown": recoveryChainsShown}
	c.render(g, code, "recovery", s, v)
}
