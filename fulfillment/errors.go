package fulfillment

import "wds/problem"

// ErrOrderNotShippable is a shipment asked of an order that was cancelled or refunded. It unwraps to
// its problem category, which gives its HTTP status; api/errors.go gives its code.
var ErrOrderNotShippable = problem.New(problem.Conflict, "a cancelled or refunded order cannot be shipped")
