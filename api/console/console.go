// Package console is the operator console under /console/: server-rendered HTML (html/template,
// embedded) that works without JavaScript, for the people who mint keys and endpoints, run Send
// test, read the delivery log and re-fire dropped deliveries. Every page calls the same domain
// services as the Operator API and `wds admin` (apikeys, catalog, delivery, fulfillment, ingest,
// operator, workspace), through the small interfaces declared beside the pages; roles are the
// services' own, and so is starting the webhook events a write commits. Sign-in takes an operator
// token and keeps a session (a random id in an HttpOnly, SameSite=Strict cookie, stored hashed, 2 h
// idle and 12 h at most); every form, the sign-in form included, carries a CSRF token bound to its
// cookie (guard.go and login.go hold the request rules).
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/money"
	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/internal/recovery"
	"wds/internal/workspace"
	"wds/models"
)

//go:embed templates/*.html templates/console.css templates/console.js
var files embed.FS

// DispatchStarter starts a queued re-fire or test event at once; the relay would otherwise.
type DispatchStarter interface {
	StartDispatches(ctx context.Context, dispatchIDs ...uuid.UUID)
}

// Console is what the pages need from the process. DB serves the workspace pages' reads of orders,
// vendors and clients (packages order and views); sessions, counts and every write go through a
// domain service, which starts the webhook events it
// commits, so a console write's events leave as soon as an API write's.
type Console struct {
	DB         *gorm.DB
	Log        logrus.FieldLogger
	Webhooks   *endpoints.Service
	Recoveries *recovery.Service
	Members    Members         // workspace.Service (session.go)
	Sessions   Sessions        // workspace.Service (session.go)
	Keys       KeyService      // apikeys.Service (pages.go)
	KeyLists   KeyLists        // apikeys.KeyLists (pages.go)
	Audit      AuditLog        // workspace.AuditLog (pages.go)
	Deliveries DeliveryLog     // deliverylog.Service (pages.go)
	Events     EventSearch     // eventsearch.Service (support_pages.go)
	Resends    Resends         // resend.Service (support_pages.go)
	Shipping   ShippingService // fulfillment.Service (workspace_pages.go)
	Vendors    VendorService   // catalog.Service (workspace_pages.go)
	Clients    ClientService   // ingest.Service (workspace_pages.go)
	// Versions shows owners and admins the worker versions on the overview; nil leaves them out.
	Versions WorkerVersions // versions.Deployments (versions.go)
	// Dispatches starts re-fires and test events after commit; nil leaves them to the relay.
	Dispatches DispatchStarter
	// TemporalUI is the Temporal UI's base URL, for links from the delivery log to workflows.
	TemporalUI string
	// Namespace is the Temporal namespace the links open.
	Namespace string
	// RetrySchedule is the retry ladder (WDS_WEBHOOK_RETRY_SCHEDULE) this process starts deliveries
	// with, which the webhooks page states.
	RetrySchedule []time.Duration
	// InsecureCookie drops Secure from the cookie (plain-HTTP `wds dev` only).
	InsecureCookie bool
	// SignInLimit is how many failed sign-ins one client address may make a minute; 0 is
	// DefaultSignInLimit.
	SignInLimit int
	// Now is the clock of the per-minute limits; nil is time.Now.
	Now func() time.Time

	signIns *ratelimit.Limiter
	tests   *ratelimit.Limiter // Send test, per endpoint
}

// Register mounts the console on r.
func (c *Console) Register(r *gin.Engine) {
	c.signIns, c.tests = ratelimit.New(c.Now), ratelimit.New(c.Now)
	if c.SignInLimit <= 0 {
		c.SignInLimit = DefaultSignInLimit
	}
	r.GET("/console", c.guard, func(g *gin.Context) { g.Redirect(http.StatusMovedPermanently, "/console/") })
	open := r.Group("/console", c.guard)
	open.GET("/console.css", func(g *gin.Context) {
		b, _ := files.ReadFile("templates/console.css")
		g.Data(http.StatusOK, "text/css; charset=utf-8", b)
	})
	open.GET("/console.js", func(g *gin.Context) {
		b, _ := files.ReadFile("templates/console.js")
		g.Data(http.StatusOK, "text/javascript; charset=utf-8", b)
	})
	open.GET("/login", c.loginForm)
	open.POST("/login", c.login)
	// Gin has one NoRoute for the whole engine: the console answers its own unknown paths with an
	// HTML page and hands the rest back to the APIs' JSON 404.
	r.NoRoute(c.notFound)
	p := open.Group("", c.signedIn)
	p.POST("/logout", c.logout)
	p.POST("/org", c.chooseOrg)
	c.registerPages(p)
}

const ctxSession = "wds.console.session"

// signedIn loads the session or sends the browser to sign in; a POST must carry the session's CSRF
// token, or it is refused with 403 before anything happens.
func (c *Console) signedIn(g *gin.Context) {
	id, err := g.Cookie(c.cookieName())
	var s *session
	if err == nil {
		s, err = c.loadSession(g.Request.Context(), id)
	}
	if err != nil {
		if !errors.Is(err, workspace.ErrNoSession) && err != http.ErrNoCookie {
			c.Log.WithError(err).Error("console session")
		}
		g.Redirect(http.StatusSeeOther, "/console/login")
		g.Abort()
		return
	}
	if g.Request.Method == http.MethodPost && !s.validCSRF(g.PostForm("csrf")) {
		c.refuse(g, problem.Fail(workspace.ErrForbidden, "the form's CSRF token is missing or not this session's; reload the page and send it again"))
		return
	}
	g.Set(ctxSession, s)
	c.takeNotice(g)
	g.Next()
}

func sessionOf(g *gin.Context) *session { return g.MustGet(ctxSession).(*session) }

func (c *Console) loginForm(g *gin.Context) { c.renderLogin(g, http.StatusOK, nil) }

func (c *Console) login(g *gin.Context) {
	if !c.validLoginToken(g) {
		c.refuse(g, errStaleLoginForm)
		return
	}
	// Failed sign-ins are counted per client address (X-Forwarded-For only from trusted proxies), so
	// guessing tokens is slow while an operator who signs in often is never held back.
	client := "signin:" + g.ClientIP()
	if c.signIns.Exhausted(client, c.SignInLimit) {
		g.Header("Retry-After", "60")
		c.renderLogin(g, http.StatusTooManyRequests, c.problem(problem.Fail(ratelimit.ErrExceeded,
			"at most %d failed sign-ins a minute from one address; retry after 60 seconds", c.SignInLimit)))
		return
	}
	id, err := c.Sessions.OpenSession(g.Request.Context(), g.PostForm("token"))
	if err != nil {
		c.signIns.Allow(client, c.SignInLimit)
		c.renderLogin(g, http.StatusUnauthorized, c.problem(err))
		return
	}
	// Signing in again replaces the browser's previous session rather than leaving it open.
	if old, err := g.Cookie(c.cookieName()); err == nil {
		if err := c.Sessions.CloseSession(g.Request.Context(), old); err != nil {
			c.Log.WithError(err).Error("console: end the replaced session")
		}
	}
	c.setCookie(g, c.preSessionCookie(), "", -1)
	c.setCookie(g, c.cookieName(), id, int(workspace.SessionTTL.Seconds()))
	g.Redirect(http.StatusSeeOther, "/console/")
}

func (c *Console) logout(g *gin.Context) {
	if err := c.Sessions.CloseSession(g.Request.Context(), sessionOf(g).id); err != nil {
		c.Log.WithError(err).Error("console sign-out")
	}
	c.setCookie(g, c.cookieName(), "", -1)
	g.Redirect(http.StatusSeeOther, "/console/login")
}

func (c *Console) chooseOrg(g *gin.Context) {
	org, err := uuid.Parse(g.PostForm("org"))
	if err != nil {
		err = problem.Fail(problem.NotFound, "org %q not found", g.PostForm("org"))
	} else {
		err = c.Sessions.MoveSession(g.Request.Context(), sessionOf(g).id, sessionOf(g).User.ID, org)
	}
	if err != nil {
		c.refuse(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, "/console/")
}

// view is what every page template gets: the session, the page's data, a form error and a notice.
type view struct {
	S      *session
	Data   any
	Error  *pageError
	Notice string
	// Form echoes the inputs of a form that failed, so nothing typed is lost.
	Form map[string]string
	// Page names the page, so the nav marks where the operator is.
	Page string
	// Refresh, when set, is a <meta http-equiv="refresh"> content: the page reloads itself (a
	// running recovery's progress), with no script for the CSP to refuse.
	Refresh string
	// sent is the whole form that failed, for the choices Form cannot hold (checkboxes, selects).
	sent url.Values
	// editing is the row whose edit form failed; Form then holds that row's inputs, not the add
	// form's.
	editing string
}

// Typed is what the operator typed into the add form's field name before it failed.
func (v view) Typed(name string) string {
	if v.editing != "" {
		return ""
	}
	return v.Form[name]
}

// Row is a grid row's field: as typed when that row's edit failed, else as stored.
func (v view) Row(id uuid.UUID, name string, stored any) string {
	if v.editing == id.String() {
		return v.Form[name]
	}
	switch s := stored.(type) {
	case *string:
		if s == nil {
			return ""
		}
		return *s
	case []string:
		return strings.Join(s, ", ")
	case string:
		return s
	}
	return fmt.Sprint(stored)
}

// Sent reports whether the failed form chose value for name, so a checkbox or an option the
// operator picked comes back picked.
func (v view) Sent(name, value string) bool { return slices.Contains(v.sent[name], value) }

// pageError is a failure as the APIs would answer it.
type pageError struct{ Code, Detail string }

// problem is err as the page shows it; a defect's detail goes to the log, not the page.
func (c *Console) problem(err error) *pageError {
	status, code, detail := answer.Of(err)
	if status >= http.StatusInternalServerError {
		c.Log.WithError(err).Error("console")
	}
	return &pageError{Code: code, Detail: detail}
}

// status is the HTTP status a failed form comes back with.
func status(err error) int { s, _, _ := answer.Of(err); return s }

var funcs = template.FuncMap{
	"money":  money.Format,
	"ladder": ladder,
	// attempt gives an event page's attempt the delivery log's wording (deliveryRow).
	"attempt": func(d models.Delivery) deliveryRow { return deliveryRow{LogRow: deliverylog.LogRow{Delivery: d}} },
	// sentOf is what the "sent" template (attempt.html) takes: the attempt, and whether the reader
	// reads custom header values.
	"sentOf": func(row deliveryRow, manager bool) map[string]any {
		return map[string]any{"Row": row, "Manager": manager}
	},
	// deref is an optional text, "" when absent.
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	// share is how many of the attempts succeeded: "97% of 120 attempts", or "no attempts".
	"share": func(ok, failed int64) string {
		if ok+failed == 0 {
			return "no attempts"
		}
		n := ok + failed
		if n == 1 {
			return fmt.Sprintf("%d%% of 1 attempt", ok*100)
		}
		return fmt.Sprintf("%d%% of %d attempts", ok*100/n, n)
	},
	// short is a long id as a column shows it, whole on hover and in a copy.
	"short": short,
	// breakable is a URL or a response excerpt that wraps after punctuation, never mid-word.
	"breakable": breakable,
	// plural is one or other, by n (any integer): "1 key", "2 keys".
	"plural": func(n any, one, other string) string {
		if fmt.Sprint(n) == "1" {
			return one
		}
		return other
	},
	// exact is a time as a form field takes it back, to the microsecond (a recovery's since).
	"exact": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	},
	// statuses are the delivery log's status filter's options.
	"statuses": func() []models.Status { return models.Recorded },
	// when is a time as every page writes it (stamp), "–" when absent.
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return stamp(v)
		case *time.Time:
			if v == nil {
				return "–"
			}
			return stamp(*v)
		}
		return ""
	},
	// words is a status, outcome or kind code in words (enumWords).
	"words": words,
	// chainMeaning is what a chain is, said once where a page first speaks of chains.
	"chainMeaning": func() string { return chainMeaning },
}

// short is an id as a column shows it: the whole id in the markup, so a copy takes all of it, and on
// hover (its title); the stylesheet (code.id) shows its first 8 characters, after the kind a workflow
// id starts with: webhook-event/1b4e28ba-2fa1-11d2-883f-0016d3cca427 reads webhook-event/1b4e28ba…
func short(id any) template.HTML {
	s := template.HTMLEscapeString(fmt.Sprint(id))
	class := "id"
	if strings.Contains(s, "/") {
		class = "id workflow-id"
	}
	return template.HTML(`<code class="` + class + `" title="` + s + `">` + s + `</code>`)
}

// breakable is text the browser may wrap only after punctuation (a URL's / . ? & = -, a response's
// , : ;), never inside a word: it marks each such place with <wbr>, which a copy leaves out.
func breakable(text string) template.HTML {
	var b strings.Builder
	for _, r := range text {
		b.WriteString(template.HTMLEscapeString(string(r)))
		if strings.ContainsRune("/.?&=-,:;", r) {
			b.WriteString("<wbr>")
		}
	}
	return template.HTML(b.String())
}

var pages = map[string]*template.Template{}

func init() {
	for _, p := range []string{"login", "notfound", "error", "overview", "keys", "connectors", "webhooks", "endpoint", "audit",
		"orders", "order", "vendors", "clients"} {
		pages[p] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+p+".html"))
	}
}

// render writes a page; a template failure is a defect, logged, and the page says so.
func (c *Console) render(g *gin.Context, code int, page string, s *session, v view) {
	v.S, v.Page = s, page
	if v.Form != nil {
		v.sent = g.Request.PostForm
	}
	g.Header("Content-Type", "text/html; charset=utf-8")
	g.Header("Cache-Control", "no-store") // pages may show a secret once
	g.Status(code)
	if err := pages[page].Execute(g.Writer, v); err != nil {
		c.Log.WithError(err).WithField("page", page).Error("console page")
	}
}

// ladder shows a retry schedule as the delays after the first attempt: "+1m, +5m, +30m, +2h, +8h".
func ladder(schedule []time.Duration) string {
	steps := make([]string, len(schedule))
	for i, d := range schedule {
		steps[i] = "+" + shortDuration(d)
	}
	return strings.Join(steps, ", ")
}

// shortDuration drops a Duration's zero parts: 2h rather than 2h0m0s, 90s as 1m30s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
