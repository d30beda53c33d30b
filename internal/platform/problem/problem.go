// Package problem names the few categories of failure the adapters answer with, and declares domain
// errors: every domain declares its own with New in its own package, giving each its category and
// its code (the snake_case "error" of the APIs' answers) in one place. Each unwraps to its category,
// so errors.Is(err, problem.Conflict) holds for every conflict; package answer maps a category to its
// HTTP status, the one place that knows about statuses.
//
// NotFound, Conflict and Invalid are also errors in their own right, with codes of their own: a
// domain with nothing more to say than "no such record", "clashes with a stored record" or "a field
// is wrong" returns the category itself, with a detail from Fail.
package problem

import (
	"errors"
	"fmt"
)

// Category is a kind of failure; every error of one category is answered alike.
type Category struct {
	// code is the category's answer when it is returned itself; "" for a category only its domain
	// errors carry, whose bare use is a defect.
	code string
	text string
}

func (c *Category) Error() string { return c.text }

// The categories. A new domain error joins one of these; a new category is a new kind of answer.
var (
	BadRequest   = &Category{text: "the request is malformed"}
	Unauthorized = &Category{text: "the caller is not authenticated"}
	Forbidden    = &Category{text: "the caller may not do this"}
	NotFound     = &Category{code: "not_found", text: "not found"}
	Gone         = &Category{text: "no longer available"}
	Conflict     = &Category{code: "conflict", text: "conflicts with an existing record"}
	TooLarge     = &Category{text: "the request is too large"}
	Invalid      = &Category{code: "validation_failed", text: "a field is invalid"}
	RateLimited  = &Category{text: "too many requests"}
	Unavailable  = &Category{text: "the service cannot serve requests now"}
)

// kind is a domain error: its own code and text, and the category it belongs to.
type kind struct {
	category *Category
	code     string
	text     string
}

func (k *kind) Error() string { return k.text }
func (k *kind) Unwrap() error { return k.category }

// declared is every error New made, in the order the packages declaring them were initialised.
var declared []error

// New declares a domain error of category c answered with code, for a package-level sentinel tested
// with errors.Is.
func New(c *Category, code, text string) error {
	k := &kind{category: c, code: code, text: text}
	declared = append(declared, k)
	return k
}

// Declared is every domain error declared so far (New), so tests can pin each one's answer and hold
// codes unique.
func Declared() []error { return append([]error(nil), declared...) }

// Classify is err's category and code: the first domain error's in its chain or, failing that, a
// category's returned itself. ok is false for an error that has neither (a defect), or whose
// category has no code of its own.
func Classify(err error) (c *Category, code string, ok bool) {
	var k *kind
	if errors.As(err, &k) {
		return k.category, k.code, true
	}
	if errors.As(err, &c) && c.code != "" {
		return c, c.code, true
	}
	return nil, "", false
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
