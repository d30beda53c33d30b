package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"wds/internal/platform/problem"
	"wds/internal/workspace"
)

// The session cookie's name. Where the cookie is Secure it carries the __Host- prefix, which
// browsers accept only from HTTPS, with Path=/ and no Domain: a sibling subdomain or a plain-HTTP
// page cannot plant a session of its own choosing (session fixation). `wds dev` serves plain HTTP,
// where a __Host- cookie is refused, so it keeps the bare name.
const (
	cookieName       = "wds_console"
	securePrefix     = "__Host-"
	preSessionSuffix = "_login"
	// preSessionTTL is how long a sign-in form stays usable.
	preSessionTTL = time.Hour
	// DefaultSignInLimit is how many failed sign-ins one client address may make a minute: enough
	// for a person who mistypes, far too few to guess a token's 256 bits.
	DefaultSignInLimit = 10
)

func (c *Console) cookieName() string {
	if c.InsecureCookie {
		return cookieName
	}
	return securePrefix + cookieName
}

// preSessionCookie names the cookie that binds the sign-in form to the browser that loaded it.
func (c *Console) preSessionCookie() string { return c.cookieName() + preSessionSuffix }

func (c *Console) setCookie(g *gin.Context, name, value string, maxAge int) {
	http.SetCookie(g.Writer, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: !c.InsecureCookie, SameSite: http.SameSiteStrictMode})
}

// loginToken binds the sign-in form to a pre-session: an HMAC, keyed by the pre-session cookie's
// random value, of a label no session token uses. A hostile page can neither read the cookie nor
// the form, so it cannot post a sign-in (login CSRF: signing the victim into the attacker's org to
// collect what they type there).
func loginToken(preSession string) string {
	m := hmac.New(sha256.New, []byte(preSession))
	m.Write([]byte("wds console sign-in"))
	return hex.EncodeToString(m.Sum(nil))
}

// preSession returns the browser's pre-session, giving it one when it has none.
func (c *Console) preSession(g *gin.Context) (string, error) {
	if v, err := g.Cookie(c.preSessionCookie()); err == nil && len(v) >= 32 {
		return v, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	v := base64.RawURLEncoding.EncodeToString(b)
	c.setCookie(g, c.preSessionCookie(), v, int(preSessionTTL.Seconds()))
	return v, nil
}

// validLoginToken reports whether the posted form was rendered for this browser's pre-session.
func (c *Console) validLoginToken(g *gin.Context) bool {
	v, err := g.Cookie(c.preSessionCookie())
	return err == nil && len(v) >= 32 && hmac.Equal([]byte(g.PostForm("csrf")), []byte(loginToken(v)))
}

// errStaleLoginForm is a sign-in post without its form's token: forged, or a form older than its
// pre-session.
var errStaleLoginForm = problem.Fail(workspace.ErrForbidden, "the sign-in form's token is missing or stale; reload the page and sign in again")

// renderLogin shows the sign-in form with its token.
func (c *Console) renderLogin(g *gin.Context, code int, pageErr *pageError) {
	pre, err := c.preSession(g)
	if err != nil {
		c.refuse(g, err)
		return
	}
	c.render(g, code, "login", nil, view{Data: loginToken(pre), Error: pageErr})
}
