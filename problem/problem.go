// Package problem names the few categories of failure the APIs answer with, each carrying its HTTP
// status. Every domain declares its own errors with New in its own package; each unwraps to one
// category, so errors.Is(err, problem.Conflict) holds for every conflict and the API's error table
// (api/errors.go) only gives each error its code.
//
// NotFound, Conflict and Invalid are also errors in their own right: a domain with nothing more to
// say than "no such record", "clashes with a stored record" or "a field is wrong" returns the category
// itself, with a detail from Fail.
package problem

import (
	"errors"
	"fmt"
	"net/http"
)

// Category is a kind of failure with the HTTP status every error of that kind is answered with.
type Category struct {
	status int
	text   string
}

func (c *Category) Error() string { return c.text }

// Status is the HTTP status of the category's errors.
func (c *Category) Status() int { return c.status }

// The categories. A new domain error joins one of these; a new category is a new kind of answer.
var (
	BadRequest   = &Category{http.StatusBadRequest, "the request is malformed"}
	Unauthorized = &Category{http.StatusUnauthorized, "the caller is not authenticated"}
	Forbidden    = &Category{http.StatusForbidden, "the caller may not do this"}
	NotFound     = &Category{http.StatusNotFound, "not found"}
	Conflict     = &Category{http.StatusConflict, "conflicts with an existing record"}
	TooLarge     = &Category{http.StatusRequestEntityTooLarge, "the request is too large"}
	Invalid      = &Category{http.StatusUnprocessableEntity, "a field is invalid"}
	RateLimited  = &Category{http.StatusTooManyRequests, "too many requests"}
	Unavailable  = &Category{http.StatusServiceUnavailable, "the service cannot serve requests now"}
)

// kind is a domain error: its own text, and the category it belongs to.
type kind struct {
	category *Category
	text     string
}

func (k *kind) Error() string { return k.text }
func (k *kind) Unwrap() error { return k.category }

// New declares a domain error of category c, for a package-level sentinel tested with errors.Is.
func New(c *Category, text string) error { return &kind{category: c, text: text} }

// Status is the HTTP status of err's category, or 500 when err belongs to none (a defect).
func Status(err error) int {
	var c *Category
	if errors.As(err, &c) {
		return c.status
	}
	return http.StatusInternalServerError
}

// Error is a domain error with a caller-facing detail. Detail must never carry secret material.
type Error struct {
	Kind   error
	Detail string
}

func (e *Error) Error() string { return e.Detail }
func (e *Error) Unwrap() error { return e.Kind }

// Fail wraps a domain error (or a category) with a human-readable detail.
func Fail(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...)}
}

// Detail is the caller-facing text for err: the wrapped detail when there is one.
func Detail(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return err.Error()
}
