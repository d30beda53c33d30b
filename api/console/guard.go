package console

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"wds/internal/platform/answer"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
)

// maxBody is the console's request body cap, the APIs' own (1 MiB): no form of ours comes near it,
// and /console/login answers without a session, so anyone on the network can send it a body.
const maxBody = 1 << 20

// contentSecurityPolicy lets pages load only their own stylesheet, post forms only to the console
// and be framed by nobody (clickjacking); the pages need no script at all.
const contentSecurityPolicy = "default-src 'self'; form-action 'self'; frame-ancestors 'none'"

// guard runs before every console route, sessions or not: it sets the security headers, refuses a
// cross-site POST, and reads a POST's form under the body cap, so no handler reads an unbounded body
// (gin's PostForm would buffer a multipart body of 32 MiB and spill the rest to temporary files).
func (c *Console) guard(g *gin.Context) {
	securityHeaders(g.Writer.Header())
	if g.Request.Method == http.MethodGet || g.Request.Method == http.MethodHead {
		g.Next()
		return
	}
	if crossSite(g.Request) {
		c.refuse(g, problem.Fail(workspace.ErrForbidden, "a console form may be posted only from the console's own pages"))
		return
	}
	if err := readForm(g.Writer, g.Request); err != nil {
		c.refuse(g, err)
		return
	}
	g.Next()
}

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// notFound is the engine's NoRoute: an HTML page for an unknown console path, the APIs' JSON 404
// for any other.
func (c *Console) notFound(g *gin.Context) {
	if g.Request.URL.Path != "/console" && !strings.HasPrefix(g.Request.URL.Path, "/console/") {
		g.AbortWithStatusJSON(answer.JSON(answer.ErrNoSuchPath))
		return
	}
	securityHeaders(g.Writer.Header())
	c.render(g, http.StatusNotFound, "notfound", nil, view{})
}

// crossSite reports whether the browser says the request comes from another site: Sec-Fetch-Site
// when it sends one, else Origin against the Host the request was sent to. A request with neither
// (not a browser, or a very old one) still needs its form's CSRF token.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "":
	default: // same-site (a sibling subdomain) and cross-site
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host == "" || u.Host != r.Host
}

// readForm parses the request's url-encoded form, reading at most maxBody bytes of it: a declared
// length over the cap is refused before a byte is read, a longer body as soon as the cap is passed.
func readForm(w http.ResponseWriter, r *http.Request) error {
	tooLarge := problem.Fail(answer.ErrPayloadTooLarge, "a console request body may be at most %d bytes (1 MiB)", maxBody)
	if r.ContentLength > maxBody {
		return tooLarge
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		// No console form uploads a file, and a multipart parser buffers parts and spills them to
		// temporary files: the console takes url-encoded forms only.
		return problem.Fail(paging.ErrInvalidParameter, "console forms are application/x-www-form-urlencoded; multipart bodies are refused")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	err := r.ParseForm()
	var over *http.MaxBytesError
	switch {
	case errors.As(err, &over):
		return tooLarge
	case err != nil:
		return problem.Fail(paging.ErrInvalidParameter, "the form could not be read: %v", err)
	}
	return nil
}

// refuse answers a request the console will not serve with a page that gives the APIs' code and
// detail and a way back; a person never gets raw JSON or text under /console/.
func (c *Console) refuse(g *gin.Context, err error) {
	var s *session
	if v, ok := g.Get(ctxSession); ok {
		s = v.(*session)
	}
	code := status(err)
	c.render(g, code, "error", s, view{Error: c.problem(err), Data: http.StatusText(code)})
	g.Abort()
}
