package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"wds/internal/platform/answer"
	"wds/internal/platform/problem"
)

// Errors of the HTTP layer itself: reading the request and whether the service can serve it. Each
// unwraps to its problem category, which gives its HTTP status (package answer), and carries its code.
// Those the console and `wds admin` answer too (a body that is not a JSON object or is over the cap,
// an unknown path) are in answer.
var (
	ErrMissingAuthorization = problem.New(problem.Unauthorized, "missing_authorization", "send the header Authorization: Bearer followed by your API key")
	// ErrWrongFormat is an Integration API endpoint called with a key of another payload_format.
	ErrWrongFormat = problem.New(problem.BadRequest, "wrong_format", "this endpoint does not accept the key's payload_format")
	ErrNotReady    = problem.New(problem.Unavailable, "not_ready", "the service cannot serve requests yet")
)

// fail answers c with err in the error shape and stops the handler chain.
func fail(c *gin.Context, err error) {
	status, body := answer.JSON(err)
	if status >= http.StatusInternalServerError {
		_ = c.Error(err) // the request logger reports it: a defect, or why the database could not serve
	}
	switch {
	case status == http.StatusTooManyRequests:
		c.Header("Retry-After", "60")
	case body.Error == answer.CodeUnavailable:
		c.Header("Retry-After", "5")
	}
	c.AbortWithStatusJSON(status, body)
}
