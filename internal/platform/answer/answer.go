// Package answer is what every adapter (the HTTP APIs, the console and `wds admin`) answers for an
// error: the HTTP status of its problem category, its code as its domain declared it (problem.New),
// and its caller-facing detail, in the APIs' error shape (Body). Status is the one place a category
// meets an HTTP status; nothing below the adapters knows about statuses. It also declares the errors
// of reading a request that more than one adapter answers (a body over the cap, a path no route
// serves), so none of them imports another adapter for them.
package answer

import (
	"net/http"

	"wds/internal/platform/database"
	"wds/internal/platform/problem"
)

// Errors more than one adapter answers: the APIs and `wds admin --file` read a body as a JSON object
// (ingest.Decode), the APIs, the console's forms and `wds admin --file` cap a body at 1 MiB, and the
// console hands the APIs' 404 every path outside /console/.
var (
	ErrInvalidJSON     = problem.New(problem.BadRequest, "invalid_json", "body is not a JSON object")
	ErrPayloadTooLarge = problem.New(problem.TooLarge, "payload_too_large", "body exceeds 1 MiB")
	ErrNoSuchPath      = problem.Fail(problem.NotFound, "no such path")
)

// Body is the failure shape of every API (docs/integration-api.md).
type Body struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// JSON is the status and body the APIs answer for err.
func JSON(err error) (status int, body Body) {
	status, code, detail := Of(err)
	return status, Body{Error: code, Detail: detail}
}

// Codes of the answers no domain error declares.
const (
	// CodeUnavailable is a database that could not do the work: retryable, whatever else the error says.
	CodeUnavailable = "unavailable"
	// CodeInternal is a defect; its detail stays in the log.
	CodeInternal = "internal_error"
)

const (
	unavailableDetail = "the service's database could not do the work in time (unreachable, busy, or a lock or deadline ran out); nothing was written, retry shortly"
	internalDetail    = "internal error; it has been logged"
)

// Of is the status, code and detail the adapters answer for err. A database that could not do the
// work (down, restarting, too busy, a lock or deadline ran out) is a 503 the client may retry, never a
// 500, whatever domain error it also carries. An error of no category with a code is an internal
// error whose detail stays in the log.
func Of(err error) (status int, code, detail string) {
	if database.Unavailable(err) {
		return http.StatusServiceUnavailable, CodeUnavailable, unavailableDetail
	}
	c, code, ok := problem.Classify(err)
	if !ok {
		return http.StatusInternalServerError, CodeInternal, internalDetail
	}
	return Status(c), code, problem.Detail(err)
}

// Code is the code and detail the APIs would answer for err, for `wds admin`, which has no log to
// keep an internal error's own text in and so shows it.
func Code(err error) (code, detail string) {
	_, code, detail = Of(err)
	if code == CodeInternal {
		return code, err.Error()
	}
	return code, detail
}

// Status is the HTTP status every error of category c is answered with.
func Status(c *problem.Category) int {
	switch c {
	case problem.BadRequest:
		return http.StatusBadRequest
	case problem.Unauthorized:
		return http.StatusUnauthorized
	case problem.Forbidden:
		return http.StatusForbidden
	case problem.NotFound:
		return http.StatusNotFound
	case problem.Gone:
		return http.StatusGone
	case problem.Conflict:
		return http.StatusConflict
	case problem.TooLarge:
		return http.StatusRequestEntityTooLarge
	case problem.Invalid:
		return http.StatusUnprocessableEntity
	case problem.RateLimited:
		return http.StatusTooManyRequests
	case problem.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
