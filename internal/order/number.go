package order

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
)

// Ref names an order as a person or a script gives it: by its id, or by its number, what a customer
// quotes (numbers are per org, so a number names an order only within an org). Exactly one of ID
// and Number is set.
type Ref struct {
	ID     uuid.UUID
	Number int64
}

// ParseRef is the one rule for reading an order's reference, wherever one is typed (the console's
// search, the Operator API, `wds admin`): a UUID is the order's id; a positive whole number, with or
// without a leading "#" ("1042", "#1042"), its number. Anything else fails with kind (the caller's
// error: a query parameter's or a request's), naming the field.
func ParseRef(field, v string, kind error) (Ref, error) {
	v = strings.TrimSpace(v)
	if id, err := uuid.Parse(v); err == nil {
		return Ref{ID: id}, nil
	}
	if n, err := strconv.ParseInt(strings.TrimPrefix(v, "#"), 10, 64); err == nil && n > 0 {
		return Ref{Number: n}, nil
	}
	return Ref{}, problem.Fail(kind, "%s must be an order's id or its number, such as 1042, not %q", field, v)
}

// ByNumber reports whether the reference is a number, which needs an org to name an order.
func (r Ref) ByNumber() bool { return r.Number != 0 }

// String is the reference as it was given: the number, or the id.
func (r Ref) String() string {
	if r.ByNumber() {
		return strconv.FormatInt(r.Number, 10)
	}
	return r.ID.String()
}

// Resolve is the id of the org's order the reference names: one lookup on the (org_id, number)
// unique index or the key. No such order in the org, another org's included, is a not-found error
// that names the reference.
func (r Ref) Resolve(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (uuid.UUID, error) {
	q := db.WithContext(ctx).Table("orders").Where("org_id = ?", orgID)
	if r.ByNumber() {
		q = q.Where("number = ?", r.Number)
	} else {
		q = q.Where("id = ?", r.ID)
	}
	var found []uuid.UUID
	if err := q.Limit(1).Pluck("id", &found).Error; err != nil {
		return uuid.Nil, fmt.Errorf("find order %s: %w", r, err)
	}
	if len(found) == 0 {
		return uuid.Nil, problem.Fail(problem.NotFound, "no order %s in this org", r)
	}
	return found[0], nil
}
