// The support desk's sections of an endpoint's page: its health (and a banner when the service
// disabled it for failing), its rate limit and custom headers, and a recovery of its dropped chains
// with a count before it runs and its progress after.

package console

import (
	"errors"
	"html/template"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/platform/problem"
	"wds/internal/recovery"
	"wds/models"
)

func init() {
	notices["settings"] = "Saved: every attempt from now on uses the new rate limit and headers."
	notices["recovering"] = "Recovery started: the dropped chains are re-fired at the endpoint's pace."
	notices["nothing"] = "Nothing to recover: no dropped chain of that time still waits for its event."
	notices["recovery_cancelled"] = "Recovery cancelled: chains already started run on; no more start."
	pages["endpoint"] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files,
		"templates/layout.html", "templates/endpoint.html", "templates/endpoint_support.html"))
}

func (c *Console) registerEndpointSupport(p *gin.RouterGroup) {
	p.POST("/endpoints/:id/settings", c.endpointSettings)
	p.POST("/endpoints/:id/recover", c.recoverEndpoint)
	p.GET("/recoveries", c.recoveries)
	p.GET("/recoveries/:id", c.recovery)
	p.POST("/recoveries/:id/cancel", c.cancelRecovery)
}

// supportData adds the endpoint's headers as text, its latest recovery and, when the page is asked
// with recover_since, how many chains a recovery from then would re-fire.
func (c *Console) supportData(g *gin.Context, ep *models.Endpoint, data map[string]any) error {
	s := sessionOf(g)
	data["HeaderText"] = headerText(ep.Headers)
	rec, err := c.Recoveries.LatestRecovery(g.Request.Context(), ep.ID)
	if err != nil {
		return err
	}
	data["Recovery"] = rec
	data["Presets"] = sincePresets(time.Now())
	since := strings.TrimSpace(g.Query("recover_since"))
	if since == "" || !s.Manager() { // only owners and admins see the Recover form
		return nil
	}
	data["RecoverSince"] = since
	t, err := searchTime(since)
	if err != nil {
		err = problem.Fail(endpoints.ErrInvalidParameter, "since must be a date and time such as 2026-11-26T09:00 (UTC) or an RFC 3339 time")
	} else {
		var n recovery.RecoveryCount
		if n, err = c.Recoveries.CountRecoverable(g.Request.Context(), ep.ID, &s.User.ID, t, nil); err == nil {
			data["Preview"] = &n
			return nil
		}
	}
	if !errors.Is(err, endpoints.ErrInvalidParameter) {
		return err
	}
	// A since the count refuses (malformed, in the future, past the retention) is the field's
	// error: it is shown beside the field and the rest of the page is as without it.
	data["RecoverError"] = c.problem(err)
	return nil
}

// sincePreset is a link beside Recover's since field that fills it (and counts) with a time that
// long ago.
type sincePreset struct {
	Label string
	Since string
}

// sincePresets are the usual outage lengths, back from now, to the minute as the field takes them:
// rounded up, so that 7 d never reaches past a retention of 7 days.
func sincePresets(now time.Time) []sincePreset {
	out := make([]sincePreset, 0, 4)
	for _, p := range []struct {
		label string
		ago   time.Duration
	}{{"1 h", time.Hour}, {"6 h", 6 * time.Hour}, {"24 h", 24 * time.Hour}, {"7 d", 7 * 24 * time.Hour}} {
		since := now.Add(-p.ago).Add(time.Minute - time.Nanosecond).Truncate(time.Minute)
		out = append(out, sincePreset{Label: p.label, Since: since.UTC().Format("2006-01-02T15:04")})
	}
	return out
}

// headerText is a header set as the form's textarea shows it: "Name: value" lines, sorted.
func headerText(h models.Headers) string {
	lines := make([]string, 0, len(h))
	for name, value := range h {
		lines = append(lines, name+": "+value)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// parseHeaderText reads the textarea back; blank lines are skipped.
func parseHeaderText(text string) (map[string]string, error) {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, problem.Fail(endpoints.ErrInvalidParameter, "headers: each line must be 'Name: value', not %q", line)
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return out, nil
}

// endpointSettings saves the description and the rate limit (blank: none) and the headers (the
// whole set).
func (c *Console) endpointSettings(g *gin.Context) {
	s := sessionOf(g)
	id, err := pathID(g)
	in := endpoints.UpdateInput{ID: id, ActorID: s.User.ID, RateLimit: models.Optional[int]{Set: true, Null: true},
		Description: models.Optional[string]{Set: true, Value: g.PostForm("description")}}
	if err == nil {
		if raw := strings.TrimSpace(g.PostForm("rate_limit")); raw != "" {
			n, perr := strconv.Atoi(raw)
			if perr != nil {
				err = problem.Fail(problem.Invalid, "rate_limit must be a number of deliveries a second, or blank for none")
			}
			in.RateLimit = models.Optional[int]{Set: true, Value: n}
		}
	}
	if err == nil {
		var h map[string]string
		if h, err = parseHeaderText(g.PostForm("headers")); err == nil {
			in.Headers = models.Optional[map[string]string]{Set: true, Value: h}
		}
	}
	if err == nil {
		_, err = c.Webhooks.Update(g.Request.Context(), in)
	}
	c.afterEndpointForm(g, id, err, "settings")
}

// recoverEndpoint starts a recovery from the form's since (the service starts its workflow) and
// opens its page, which follows its progress.
func (c *Console) recoverEndpoint(g *gin.Context) {
	s := sessionOf(g)
	id, err := pathID(g)
	var rec *models.Recovery
	if err == nil {
		since, terr := searchTime(strings.TrimSpace(g.PostForm("since")))
		if terr != nil {
			err = problem.Fail(problem.Invalid, "since must be a date and time such as 2026-11-26T09:00 (UTC) or an RFC 3339 time")
		} else {
			rec, err = c.Recoveries.Recover(g.Request.Context(), id, s.User.ID, since, nil)
		}
	}
	if err != nil {
		c.afterEndpointForm(g, id, err, "")
		return
	}
	done := "recovering"
	if !rec.Running() {
		done = "nothing"
	}
	c.done(g, "/console/recoveries/"+rec.ID.String(), done)
}

// cancelRecovery stops the recovery and shows it again, or shows it with the refusal.
func (c *Console) cancelRecovery(g *gin.Context) {
	s := sessionOf(g)
	id, err := pathID(g)
	if err == nil {
		_, err = c.Recoveries.CancelRecovery(g.Request.Context(), id, s.User.ID)
	}
	if err != nil {
		c.recoveryPage(g, status(err), view{Error: c.problem(err)})
		return
	}
	c.done(g, "/console/recoveries/"+id.String(), "recovery_cancelled")
}

// afterEndpointForm goes back to the endpoint's page: with a notice, or with the failure and the
// inputs kept.
func (c *Console) afterEndpointForm(g *gin.Context, id uuid.UUID, err error, done string) {
	if err != nil {
		c.endpointPage(g, status(err), view{Error: c.problem(err), Form: form(g)})
		return
	}
	c.done(g, "/console/webhooks/"+id.String(), done)
}
