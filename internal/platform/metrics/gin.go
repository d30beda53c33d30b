package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Middleware records every request by route pattern (c.FullPath(), never the raw path, so ids in
// paths do not become series), method and status, and counts 429 answers as rate-limit refusals of
// the API the route belongs to. Only rate_limited is of the category answered 429 (package answer),
// so the status alone identifies them without each API's auth code reporting separately.
func Middleware(c *gin.Context) {
	start := time.Now()
	c.Next()
	route, status := c.FullPath(), c.Writer.Status()
	ObserveRequest(route, method(c.Request.Method), status, time.Since(start))
	if status == http.StatusTooManyRequests {
		RateLimited(apiOf(route))
	}
}

// apiOf names the API a route pattern belongs to.
func apiOf(route string) string {
	switch {
	case strings.HasPrefix(route, "/integrations/"):
		return "integration"
	case strings.HasPrefix(route, "/admin/"):
		return "operator"
	case strings.HasPrefix(route, "/v1/"):
		return "read"
	default:
		return "other"
	}
}

// method bounds the method label: Go's server accepts any token as a method, and a client must not
// be able to mint series by inventing them.
func method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	default:
		return "OTHER"
	}
}
