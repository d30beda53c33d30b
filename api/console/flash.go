// The banner a form's success shows once. After a POST the console redirects (303) to the page that
// shows the result and names the notice in a short-lived cookie rather than in the URL: the page it
// lands on shows the banner and clears the cookie, so a reload shows the page without the banner and
// the address bar never carries a `?done=` a bookmark or a reload would replay. No script is needed,
// which the Content-Security-Policy would refuse.

package console

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

const (
	// noticeSuffix names the notice cookie after the session's (__Host-wds_console_notice, or
	// wds_console_notice in dev).
	noticeSuffix = "_notice"
	// noticeTTL is how long a notice waits for its page, in seconds: a redirect follows at once.
	noticeTTL = 60
	// ctxNotice holds the notice the request's page shows.
	ctxNotice = "wds.console.notice"
)

func (c *Console) noticeCookie() string { return c.cookieName() + noticeSuffix }

// done sends the browser to path (a console path, no query) with the notice named done (a key of
// notices) for that page alone.
func (c *Console) done(g *gin.Context, path, done string) {
	c.setCookie(g, c.noticeCookie(), done+"@"+path, noticeTTL)
	g.Redirect(http.StatusSeeOther, path)
}

// takeNotice moves a waiting notice for this GET's page out of its cookie and into the request, for
// notice to show; a notice for another page waits for that one. Only the notices' names travel, so
// a planted cookie can show nothing but the console's own words.
func (c *Console) takeNotice(g *gin.Context) {
	v, err := g.Cookie(c.noticeCookie())
	if err != nil || g.Request.Method != http.MethodGet {
		return
	}
	name, path, _ := strings.Cut(v, "@")
	if path != g.Request.URL.Path {
		return
	}
	c.setCookie(g, c.noticeCookie(), "", -1)
	g.Set(ctxNotice, notices[name])
}

// notice is the banner the page shows once, if a redirect asked for one.
func notice(g *gin.Context) string { return g.GetString(ctxNotice) }
